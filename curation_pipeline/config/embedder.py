"""Which embedder step 4 uses and how it reaches its model, from environment variables.

Three providers share one interface (`embeddings.Embedder`):

- ``lexical``: the built-in, offline, dependency-free embedder (the default). Lexical, not
  semantic: step 2 works with it, but association edges are never computed from it.
- ``sentence-transformers``: a local model by name or path (the optional extra
  ``curation-pipeline[sentence-transformers]``; never a default dependency because it brings torch).
- ``openai``: the embeddings endpoint of OpenAI, Azure OpenAI (``azure``) or any OpenAI-compatible
  server by base URL, with the retry and fault rules of the LLM path.

Kept apart from `settings.py` for the same reason as the LLM settings: the API key is a secret
that must never be shown in the Dagster launchpad or a log.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

from curation_pipeline.config.llm import _looks_like_azure, normalise_base_url
from curation_pipeline.config.settings import (
    SettingsError,
    choice,
    load_settings,
    read_service_settings,
)

PROVIDERS = ("lexical", "sentence-transformers", "openai", "azure")

DEFAULT_MODELS = {
    "lexical": None,  # the lexical embedder has no model to choose
    "sentence-transformers": "all-MiniLM-L6-v2",
    "openai": "text-embedding-3-small",
    "azure": "text-embedding-3-small",  # Azure: the deployment name
}


@dataclass(frozen=True)
class EmbedderSettings:
    provider: str = "lexical"
    model: str | None = None  # None: the provider's default (DEFAULT_MODELS)
    dimension: int = 384  # CURATION_EMBEDDING_DIM: the store's vector column
    # sentence-transformers
    device: str = "cpu"
    # openai / azure
    base_url: str | None = None  # None: the OpenAI API
    api_key: str | None = dataclasses.field(default=None, repr=False)
    azure_api_version: str = "2024-10-21"
    # Ask the server for `dimension`-wide vectors (the `dimensions` parameter). None: only for
    # OpenAI's text-embedding-3 models, the ones documented to accept it.
    send_dimensions: bool | None = None
    timeout_secs: float = 30.0
    max_retries: int = 2
    backoff_secs: float = 1.0
    max_retry_wait_secs: float = 30.0
    breaker_failures: int = 3
    max_calls: int = 200  # HTTP requests per cycle, retries included
    # Texts are cut to this many characters before they are sent: a text beyond the model's
    # input limit (8,191 tokens for OpenAI's models) would fail its whole batch every cycle.
    # Only the vector sees the cut; the memory keeps its text. 24,000 characters is about 6,000
    # tokens of English.
    max_input_chars: int = 24_000

    @property
    def model_name(self) -> str | None:
        return self.model or DEFAULT_MODELS[self.provider]

    @property
    def is_semantic(self) -> bool:
        """False for the lexical embedder: its similarity is shared words, not shared meaning."""
        return self.provider != "lexical"


ENV_VARS: dict[str, tuple[str, ...]] = {
    "provider": ("CURATION_EMBEDDER",),
    "model": ("CURATION_EMBEDDING_MODEL",),
    "device": ("CURATION_EMBEDDER_DEVICE",),
    "base_url": ("CURATION_EMBEDDER_BASE_URL",),
    "api_key": ("CURATION_EMBEDDER_API_KEY",),
    "azure_api_version": ("CURATION_EMBEDDER_AZURE_API_VERSION",),
    "send_dimensions": ("CURATION_EMBEDDER_SEND_DIMENSIONS",),
    "timeout_secs": ("CURATION_EMBEDDER_TIMEOUT_SECS",),
    "max_retries": ("CURATION_EMBEDDER_MAX_RETRIES",),
    "backoff_secs": ("CURATION_EMBEDDER_BACKOFF_SECS",),
    "max_retry_wait_secs": ("CURATION_EMBEDDER_MAX_RETRY_WAIT_SECS",),
    "breaker_failures": ("CURATION_EMBEDDER_BREAKER_FAILURES",),
    "max_calls": ("CURATION_EMBEDDER_MAX_CALLS",),
    "max_input_chars": ("CURATION_EMBEDDER_MAX_INPUT_CHARS",),
}

_MINIMUMS = {"breaker_failures": 1, "max_calls": 1, "max_input_chars": 1}


def _embeddings_base_url(raw: str) -> str:
    """A base URL, or the full `.../embeddings` endpoint: the client appends that itself."""
    url = normalise_base_url(raw)
    return url[: -len("/embeddings")] if url.endswith("/embeddings") else url


def load_embedder_settings(environ: Mapping[str, str] | None = None) -> EmbedderSettings:
    """EmbedderSettings from the environment (or a mapping); empty variables count as unset."""
    environ = os.environ if environ is None else environ
    values = {
        "dimension": load_settings(environ).embedding_dim,
        **read_service_settings(
            environ, EmbedderSettings, ENV_VARS, minimums=_MINIMUMS,
            converters={"provider": choice(PROVIDERS), "base_url": _embeddings_base_url},
        ),
    }
    if values.get("provider") == "openai" and _looks_like_azure(values.get("base_url")):
        values["provider"] = "azure"
    return checked(EmbedderSettings(**values))


def checked(settings: EmbedderSettings) -> EmbedderSettings:
    """The settings, if they make sense together; SettingsError naming the variables otherwise."""
    if settings.provider not in PROVIDERS:
        raise SettingsError(f"CURATION_EMBEDDER={settings.provider!r} is invalid: must be one of {', '.join(PROVIDERS)}")
    if settings.provider == "lexical" and settings.model:
        raise SettingsError(
            "CURATION_EMBEDDING_MODEL is set but CURATION_EMBEDDER is lexical, which has no model; "
            "set CURATION_EMBEDDER to sentence-transformers or openai"
        )
    if settings.provider == "azure" and not settings.base_url:
        raise SettingsError("CURATION_EMBEDDER=azure needs CURATION_EMBEDDER_BASE_URL (the resource endpoint)")
    return settings

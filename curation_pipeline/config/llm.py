"""LLM settings for steps 2 and 3, from environment variables; the LLM path is off by default.

Each setting has a `CURATOR_LLM_*` variable; the reference curator's names
(`SULCUS_EXTRACTION_ENABLED`, `_ENDPOINT`, `_API_KEY`, `_MODEL`) are accepted as aliases, and
when both are set the `CURATOR_LLM_*` one wins. Kept apart from `settings.py` because these
values configure an outside service (and one of them is a secret that must never be shown in
the Dagster launchpad or a log).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from curation_pipeline.config.settings import (
    SettingsError,
    choice,
    read_service_settings,
)

PROVIDERS = ("openai", "azure")


@dataclass(frozen=True)
class LLMSettings:
    enabled: bool = False
    # "openai": the OpenAI API or any OpenAI-compatible server (vLLM, Ollama, LM Studio) at
    # base_url. "azure": Azure OpenAI; base_url is the resource endpoint, model the deployment.
    provider: str = "openai"
    base_url: str | None = None  # None: the OpenAI API
    api_key: str | None = dataclasses.field(default=None, repr=False)
    model: str = "gpt-4o-mini"  # a small model, as in the reference; Azure: the deployment name
    azure_api_version: str = "2025-04-01-preview"  # the first Azure version with the Responses API
    timeout_secs: float = 30.0  # per request (connect + read)
    max_retries: int = 2  # retries of one request after a timeout, 429, 5xx, bad body, lost connection
    backoff_secs: float = 1.0  # first retry wait; doubles each retry (unless Retry-After says)
    max_retry_wait_secs: float = 30.0  # a Retry-After longer than this is not waited for
    breaker_failures: int = 3  # this many requests failing in a row: offline for the rest of the cycle
    max_calls: int = 60  # HTTP requests per cycle (retries included); 20 merges + 30 summaries fit
    max_tokens: int = 200_000  # input + output tokens per cycle
    max_output_tokens: int = 2048  # per answer: a 2,000-character merge in JSON fits with room
    summary_chars: int = 500  # an LLM summary is at most this long
    cache: bool = True  # reuse answers to identical requests (table llm_cache)

    def describe(self) -> str:
        """One line for logs: where requests go, never the key."""
        where = self.base_url or "https://api.openai.com/v1"
        return f"{self.provider} model {self.model} at {where}"


# Field -> variables, first set wins.
ENV_VARS: dict[str, tuple[str, ...]] = {
    "enabled": ("CURATOR_LLM_ENABLED", "SULCUS_EXTRACTION_ENABLED"),
    "provider": ("CURATOR_LLM_PROVIDER",),
    "base_url": ("CURATOR_LLM_BASE_URL", "SULCUS_EXTRACTION_ENDPOINT"),
    "api_key": ("CURATOR_LLM_API_KEY", "SULCUS_EXTRACTION_API_KEY"),
    "model": ("CURATOR_LLM_MODEL", "SULCUS_EXTRACTION_MODEL"),
    "azure_api_version": ("CURATOR_LLM_AZURE_API_VERSION",),
    "timeout_secs": ("CURATOR_LLM_TIMEOUT_SECS",),
    "max_retries": ("CURATOR_LLM_MAX_RETRIES",),
    "backoff_secs": ("CURATOR_LLM_BACKOFF_SECS",),
    "max_retry_wait_secs": ("CURATOR_LLM_MAX_RETRY_WAIT_SECS",),
    "breaker_failures": ("CURATOR_LLM_BREAKER_FAILURES",),
    "max_calls": ("CURATOR_LLM_MAX_CALLS",),
    "max_tokens": ("CURATOR_LLM_MAX_TOKENS",),
    "max_output_tokens": ("CURATOR_LLM_MAX_OUTPUT_TOKENS",),
    "summary_chars": ("CURATOR_LLM_SUMMARY_CHARS",),
    "cache": ("CURATOR_LLM_CACHE",),
}

_MINIMUMS = {"max_output_tokens": 16, "summary_chars": 2, "breaker_failures": 1}


def normalise_base_url(raw: str) -> str:
    """Accept a base URL or the full endpoint (`.../v1/responses`, as the reference's ENDPOINT
    variable holds): the client wants the base and appends `/responses` itself."""
    url = raw.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http(s) URL")
    if url.endswith("/responses"):
        url = url[: -len("/responses")]
    return url


def _looks_like_azure(base_url: str | None) -> bool:
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    return host.endswith((".openai.azure.com", ".cognitiveservices.azure.com"))


def load_llm_settings(environ: Mapping[str, str] | None = None) -> LLMSettings:
    """LLMSettings from the environment (or a mapping); empty variables count as unset.

    An enabled LLM path with nothing to talk to (no base URL, no key) is a configuration error,
    reported now rather than as a cycle of failed requests.
    """
    environ = os.environ if environ is None else environ
    values = read_service_settings(
        environ, LLMSettings, ENV_VARS, minimums=_MINIMUMS,
        converters={"provider": choice(PROVIDERS), "base_url": normalise_base_url},
    )
    if "provider" not in values and _looks_like_azure(values.get("base_url")):
        values["provider"] = "azure"
    settings = LLMSettings(**values)
    if settings.enabled:
        if settings.provider == "azure" and not settings.base_url:
            raise SettingsError("CURATOR_LLM_PROVIDER=azure needs CURATOR_LLM_BASE_URL (the resource endpoint)")
        if not settings.base_url and not (settings.api_key or environ.get("OPENAI_API_KEY")):
            raise SettingsError(
                "CURATOR_LLM_ENABLED is set but neither CURATOR_LLM_BASE_URL nor an API key "
                "(CURATOR_LLM_API_KEY or OPENAI_API_KEY) is"
            )
    return settings

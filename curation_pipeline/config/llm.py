"""LLM settings for steps 2 and 3, from environment variables; the LLM path is off by default.

Each setting has a `CURATOR_LLM_*` variable; the reference curator's names
(`SULCUS_EXTRACTION_ENABLED`, `_ENDPOINT`, `_API_KEY`, `_MODEL`) are accepted as aliases, and
when both are set the `CURATOR_LLM_*` one wins. The key is a `SecretStr`: it is never shown in
a repr, an error, a log or the Dagster launchpad (the `llm` resource does not offer it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
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
    TextLimit,
    choice_of,
)
from curation_pipeline.config.environment import EnvironmentSettings

PROVIDERS = ("openai", "azure")
# "responses": OpenAI's Responses API; "chat": Chat Completions, which every OpenAI-compatible
# server (vLLM, Ollama, LM Studio, llama.cpp) and every Azure deployment speaks.
APIS = ("responses", "chat")


def normalise_base_url(raw: str) -> str:
    """Accept a base URL or a full endpoint (`.../v1/responses`, as the reference's ENDPOINT
    variable holds, or `.../v1/chat/completions`): the client wants the base and appends the
    path of its API itself."""
    url = raw.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http(s) URL")
    return url.removesuffix("/responses").removesuffix("/chat/completions")


def looks_like_azure(base_url: str | None) -> bool:
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    return host.endswith((".openai.azure.com", ".cognitiveservices.azure.com"))


class LLMSettings(EnvironmentSettings):
    enabled: bool = Field(False, validation_alias=AliasChoices("CURATOR_LLM_ENABLED", "SULCUS_EXTRACTION_ENABLED"))
    # None: the OpenAI API. Declared before `provider` and `api`, whose defaults depend on it.
    base_url: Annotated[str, AfterValidator(normalise_base_url)] | None = Field(
        None, validation_alias=AliasChoices("CURATOR_LLM_BASE_URL", "SULCUS_EXTRACTION_ENDPOINT"))
    # "openai": the OpenAI API or any OpenAI-compatible server at base_url. "azure": Azure OpenAI;
    # base_url is the resource endpoint, model the deployment. Unset: azure for an Azure host.
    provider: Annotated[Literal[PROVIDERS] | None, choice_of(PROVIDERS)] = Field(
        None, validation_alias="CURATOR_LLM_PROVIDER")
    # Which API the requests use. Unset: responses for the OpenAI API itself, chat for any other
    # base URL and for Azure.
    api: Annotated[Literal[APIS] | None, choice_of(APIS)] = Field(None, validation_alias="CURATOR_LLM_API")
    api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("CURATOR_LLM_API_KEY", "SULCUS_EXTRACTION_API_KEY"))
    # The OpenAI SDK reads this itself when no key is given; here only to tell whether one exists.
    openai_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    # A small model, as in the reference; Azure: the deployment name.
    model: str = Field("gpt-4o-mini", validation_alias=AliasChoices("CURATOR_LLM_MODEL", "SULCUS_EXTRACTION_MODEL"))
    # The first Azure version with the Responses API.
    azure_api_version: str = Field("2025-04-01-preview", validation_alias="CURATOR_LLM_AZURE_API_VERSION")
    timeout_secs: PositiveSeconds = Field(30.0, validation_alias="CURATOR_LLM_TIMEOUT_SECS")  # per request (connect + read)
    # Retries of one request after a timeout, 429, 5xx, bad body, lost connection.
    max_retries: Cap = Field(2, validation_alias="CURATOR_LLM_MAX_RETRIES")
    backoff_secs: Seconds = Field(1.0, validation_alias="CURATOR_LLM_BACKOFF_SECS")  # first retry wait; doubles each retry
    # A Retry-After longer than this is not waited for.
    max_retry_wait_secs: Seconds = Field(30.0, validation_alias="CURATOR_LLM_MAX_RETRY_WAIT_SECS")
    # This many requests failing in a row: offline for the rest of the cycle.
    breaker_failures: AtLeastOne = Field(3, validation_alias="CURATOR_LLM_BREAKER_FAILURES")
    # HTTP requests per cycle (retries included); 20 merges + 30 summaries fit.
    max_calls: Cap = Field(60, validation_alias="CURATOR_LLM_MAX_CALLS")
    max_tokens: Cap = Field(200_000, validation_alias="CURATOR_LLM_MAX_TOKENS")  # input + output tokens per cycle
    # Per answer: a 2,000-character merge in JSON fits with room.
    max_output_tokens: Annotated[int, Field(ge=16)] = Field(2048, validation_alias="CURATOR_LLM_MAX_OUTPUT_TOKENS")
    summary_chars: TextLimit = Field(500, validation_alias="CURATOR_LLM_SUMMARY_CHARS")  # an LLM summary is at most this long
    cache: bool = Field(True, validation_alias="CURATOR_LLM_CACHE")  # reuse answers to identical requests (table llm_cache)
    # Requests in flight at once within a step.
    concurrency: AtLeastOne = Field(4, validation_alias="CURATOR_LLM_CONCURRENCY")

    @field_validator("provider", mode="after")
    @classmethod
    def _provider_from_host(cls, provider: str | None, info: ValidationInfo) -> str:
        return provider or ("azure" if looks_like_azure(info.data.get("base_url")) else "openai")

    @field_validator("api", mode="after")
    @classmethod
    def _api_for_provider(cls, api: str | None, info: ValidationInfo) -> str:
        if api:
            return api
        openai_itself = info.data.get("provider") == "openai" and info.data.get("base_url") is None
        return "responses" if openai_itself else "chat"

    @model_validator(mode="after")
    def _somewhere_to_send_requests(self) -> LLMSettings:
        # An enabled LLM path with nothing to talk to is reported now, not as a cycle of failures.
        if self.enabled and self.provider == "azure" and not self.base_url:
            raise ValueError("CURATOR_LLM_PROVIDER=azure needs CURATOR_LLM_BASE_URL (the resource endpoint)")
        if self.enabled and not self.base_url and not (self.api_key or self.openai_api_key):
            raise ValueError(
                "CURATOR_LLM_ENABLED is set but neither CURATOR_LLM_BASE_URL nor an API key "
                "(CURATOR_LLM_API_KEY or OPENAI_API_KEY) is"
            )
        return self


def load_llm_settings(environ: Mapping[str, str] | None = None) -> LLMSettings:
    """LLMSettings from the environment (or a mapping); SettingsError naming a bad variable."""
    return LLMSettings.from_environment(environ)

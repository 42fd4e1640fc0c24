"""The official `openai` client, built for the configured provider, and what both of our clients
of it (the LLM, the embedder) say about its errors.

The SDK's own retries are off: every attempt is one HTTP request, retried (and counted) by
`clients/resilience.py`. `openai` is imported where it is used: importing it costs about half a
second, which every run process would pay at start-up even with the LLM path off (the default).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from curation_pipeline.clients.resilience import Retryable, retry_after_secs
from curation_pipeline.config.environment import revealed
from curation_pipeline.core.text import clip

if TYPE_CHECKING:
    import openai

OPENAI_API = "https://api.openai.com/v1"


def make_openai_client(settings: Any) -> openai.OpenAI:
    """The SDK client for LLM or embedder settings (both have these fields)."""
    import openai

    common = {"max_retries": 0, "timeout": settings.timeout_secs}
    if settings.provider == "azure":
        base = settings.base_url or ""
        if base.rstrip("/").endswith("/openai/v1"):
            # Azure's v1 API is OpenAI-compatible at <endpoint>/openai/v1, key in `api-key`.
            key = revealed(settings.api_key) or ""
            return openai.OpenAI(base_url=base, api_key=key or "unused",
                                 default_headers={"api-key": key}, **common)
        # Classic Azure: <endpoint>/openai/<path>?api-version=..., the deployment is `model`.
        return openai.AzureOpenAI(azure_endpoint=base, api_key=revealed(settings.api_key),
                                  api_version=settings.azure_api_version, **common)
    # A local OpenAI-compatible server often wants no key, but the SDK insists on one.
    api_key = revealed(settings.api_key) or (None if settings.base_url is None else "unused")
    return openai.OpenAI(base_url=settings.base_url, api_key=api_key, **common)


def is_retryable_status(status: int) -> bool:
    """Status codes a later attempt may get past; every other 4xx is the request's (our) fault."""
    return status in (408, 409, 429) or status >= 500


def short(text: str, limit: int = 200) -> str:
    return clip(text, limit)


def transient_failure(error: Exception, timeout_secs: float,
                      redact: Callable[[str], str] = str) -> Retryable | None:
    """A failed SDK call that another attempt may get past, as the resilience layer's Retryable
    (a timeout, a lost connection, a retryable HTTP status with its Retry-After); else None, and
    the caller says what the failure means for it. `redact` cleans a message of secrets."""
    import openai

    if isinstance(error, openai.APITimeoutError):  # before APIConnectionError: it is a subclass
        return Retryable(f"timed out after {timeout_secs:g} s")
    if isinstance(error, openai.APIConnectionError):
        return Retryable(f"connection error: {short(redact(str(error)))}")
    if isinstance(error, openai.APIStatusError) and is_retryable_status(error.status_code):
        headers = error.response.headers if error.response is not None else None
        return Retryable(status_detail(error, redact), retry_after_secs(headers))
    return None


def status_detail(error: openai.APIStatusError, redact: Callable[[str], str] = str) -> str:
    return f"HTTP {error.status_code}: {short(redact(str(error)))}"

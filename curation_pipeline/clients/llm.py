"""The LLM behind steps 2 and 3: one request in, one answer text (or a reason there is none) out.

`LLMClient` wraps the official `openai` client (Responses API) with what a curation cycle
needs and the SDK does not decide for us:

- **bounded retries** of timeouts, 429 (waiting what Retry-After says, unless that is longer
  than `max_retry_wait_secs`), 5xx, lost connections and malformed bodies, with doubling
  backoff; the SDK's own retries are off so every request is counted;
- a **circuit breaker**: after `breaker_failures` requests in a row failed (each after its
  retries), the client sends nothing more for the rest of the cycle and callers use the offline
  path;
- a **budget** of HTTP requests and tokens per cycle: a request that might not fit is not sent;
- a **cache** keyed by a hash of the exact request (and the endpoint), so an identical request is
  never sent twice (see `store/llm_cache.py`).

One client lives for one cycle (a run of one namespace): budget and breaker are per cycle.
`complete` never raises for anything the service does; it returns a `Completion` whose `text`
is None when there is no answer, with the reason in `outcome` / `error`.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# openai is imported where it is used: importing it costs about half a second, which every
# run process would pay at start-up even with the LLM path off (the default).
from curation_pipeline.config.llm import LLMSettings
from curation_pipeline.core.answer_cache import AnswerCache, CachedAnswer, request_hash

if TYPE_CHECKING:
    import openai

# Outcomes of one `complete` call.
ANSWERED = "answered"  # a fresh answer from the service
CACHED = "cached"  # the answer to an identical earlier request
FAILED = "failed"  # every attempt failed (or a non-retryable error)
INCOMPLETE = "incomplete"  # the service stopped early (e.g. max_output_tokens); not retried
BREAKER_OPEN = "breaker_open"  # not sent: too many failures earlier in this cycle
OVER_BUDGET = "over_budget"  # not sent: the cycle's call or token budget is used up


class MalformedResponse(Exception):
    """A 2xx body that is not a Responses API answer."""


@dataclass
class Completion:
    """What one request came to. Token counts are what this cycle paid (0 for a cache hit)."""

    outcome: str
    text: str | None = None
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0  # HTTP requests sent, retries included
    waited_secs: float = 0.0  # time spent waiting between attempts (backoff, Retry-After)
    error: str | None = None


@dataclass
class CycleUsage:
    """Running totals of one cycle, shared by the steps of a run."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    consecutive_failures: int = 0
    breaker_open: bool = False

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def retry_after_secs(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, or `retry-after` in seconds or as
    an HTTP date. None when absent or unreadable."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def _estimated_input_tokens(request: Mapping[str, Any]) -> int:
    # ~3 characters a token errs on the high side for English and JSON: the budget is a ceiling.
    return len(json.dumps(request, ensure_ascii=False)) // 3 + 1


def answer_text(response: object) -> tuple[str | None, str]:
    """(output text, status) of a Responses API answer; MalformedResponse if it is not one."""
    from openai.types.responses import Response

    if not isinstance(response, Response) or not isinstance(response.output, list):
        raise MalformedResponse(f"not a Responses API answer ({type(response).__name__})")
    status = response.status or "completed"  # some compatible servers leave it out
    return (response.output_text if status == "completed" else None), status


class LLMClient:
    """See the module docstring. `sleep` is injectable so unit tests need not wait."""

    def __init__(
        self,
        client: Any,
        settings: LLMSettings,
        *,
        cache: AnswerCache | None = None,
        usage: CycleUsage | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self.settings = settings
        self.cache = cache if settings.cache else None
        self.usage = usage or CycleUsage()
        self._sleep = sleep
        self.endpoint = f"{settings.provider}:{settings.base_url or 'https://api.openai.com/v1'}"

    @property
    def model(self) -> str:
        return self.settings.model

    def complete(self, request: Mapping[str, Any], purpose: str) -> Completion:
        key = request_hash(request, self.endpoint)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return Completion(CACHED, text=hit.text, model=hit.model)
        if self.usage.breaker_open:
            return Completion(BREAKER_OPEN, model=self.model, error="circuit breaker open")
        completion = self._send_with_retries(request)
        if completion.outcome == ANSWERED and self.cache is not None:
            self.cache.put(key, CachedAnswer(completion.text or "", self.model, purpose,
                                             completion.input_tokens, completion.output_tokens))
        return completion

    def _fits_budget(self, request: Mapping[str, Any]) -> str | None:
        s, u = self.settings, self.usage
        if u.requests >= s.max_calls:
            return f"call budget used up ({u.requests} of {s.max_calls} requests)"
        worst_case = _estimated_input_tokens(request) + s.max_output_tokens
        if u.tokens + worst_case > s.max_tokens:
            return f"token budget used up ({u.tokens} of {s.max_tokens} tokens used, next may need {worst_case})"
        return None

    def _send_with_retries(self, request: Mapping[str, Any]) -> Completion:
        result = Completion(FAILED, model=self.model)
        for attempt in range(self.settings.max_retries + 1):
            over = self._fits_budget(request)
            if over is not None:
                # Not a failure of the service: the breaker is not involved.
                result.outcome, result.error = OVER_BUDGET, over
                return result
            self.usage.requests += 1
            result.requests += 1
            wait, retryable = self._attempt(request, result)
            if result.outcome in (ANSWERED, INCOMPLETE):
                self.usage.consecutive_failures = 0
                return result
            if not retryable:
                break
            if wait is None:
                wait = self.settings.backoff_secs * (2 ** attempt) * (1 + random.random() / 4)
            if wait > self.settings.max_retry_wait_secs:
                result.error += f" (asked to wait {wait:.0f} s, more than {self.settings.max_retry_wait_secs:.0f} s)"
                break
            if attempt < self.settings.max_retries:
                self._sleep(wait)
                result.waited_secs += wait
        self.usage.consecutive_failures += 1
        if self.usage.consecutive_failures >= self.settings.breaker_failures:
            self.usage.breaker_open = True
        return result

    def _attempt(self, request: Mapping[str, Any], result: Completion) -> tuple[float | None, bool]:
        """Send once; fill `result`. Returns (server-requested wait or None, retryable)."""
        import openai

        try:
            response = self._client.responses.create(**request, timeout=self.settings.timeout_secs)
        except openai.APITimeoutError:
            result.error = f"timed out after {self.settings.timeout_secs:g} s"
            return None, True
        except openai.APIConnectionError as error:
            result.error = f"connection error: {error}"
            return None, True
        except openai.APIStatusError as error:
            result.error = f"HTTP {error.status_code}: {_short(str(error))}"
            wait = retry_after_secs(error.response.headers if error.response is not None else None)
            retryable = error.status_code in (408, 409, 429) or error.status_code >= 500
            return wait, retryable
        except (openai.APIResponseValidationError, ValueError, TypeError, AttributeError) as error:
            result.error = f"malformed response: {type(error).__name__}: {_short(str(error))}"
            return None, True
        try:
            text, status = answer_text(response)
        except MalformedResponse as error:
            result.error = f"malformed response: {error}"
            return None, True
        usage = response.usage
        if usage is not None:
            result.input_tokens += int(usage.input_tokens or 0)
            result.output_tokens += int(usage.output_tokens or 0)
            self.usage.input_tokens += int(usage.input_tokens or 0)
            self.usage.output_tokens += int(usage.output_tokens or 0)
        if status == "completed":
            result.outcome, result.text, result.error = ANSWERED, text, None
            result.model = response.model or self.model
            return None, False
        if status == "incomplete":
            details = response.incomplete_details
            result.outcome = INCOMPLETE
            result.error = f"incomplete answer ({details.reason if details else 'no reason given'})"
            return None, False
        result.error = f"answer status {status!r}"
        return None, True


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def make_openai_client(settings: LLMSettings) -> openai.OpenAI:
    import openai

    """The SDK client for the configured provider; its own retries off (LLMClient retries)."""
    common = {"max_retries": 0, "timeout": settings.timeout_secs}
    if settings.provider == "azure":
        base = settings.base_url or ""
        if base.rstrip("/").endswith("/openai/v1"):
            # Azure's v1 API is OpenAI-compatible at <endpoint>/openai/v1, key in `api-key`.
            key = settings.api_key or ""
            return openai.OpenAI(base_url=base, api_key=key or "unused",
                                 default_headers={"api-key": key}, **common)
        # Classic Azure: <endpoint>/openai/responses?api-version=..., the deployment is `model`.
        return openai.AzureOpenAI(azure_endpoint=base, api_key=settings.api_key,
                                  api_version=settings.azure_api_version, **common)
    # A local OpenAI-compatible server often wants no key, but the SDK insists on one.
    api_key = settings.api_key or (None if settings.base_url is None else "unused")
    return openai.OpenAI(base_url=settings.base_url, api_key=api_key, **common)


@dataclass
class StepTally:
    """One step's LLM numbers, for the cycle row and Dagster metadata."""

    requests: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    accepted: int = 0
    rejected: int = 0
    unavailable: int = 0
    waited_secs: float = 0.0
    notes: list[dict] = field(default_factory=list)

    def add(self, completion: Completion) -> None:
        self.requests += completion.requests
        self.cache_hits += completion.outcome == CACHED
        self.input_tokens += completion.input_tokens
        self.output_tokens += completion.output_tokens
        self.waited_secs += completion.waited_secs

    def counts(self, client: LLMClient) -> dict:
        return {
            "llm_model": client.model,
            "llm_requests": self.requests,
            "llm_cache_hits": self.cache_hits,
            "llm_input_tokens": self.input_tokens,
            "llm_output_tokens": self.output_tokens,
            "llm_accepted": self.accepted,
            "llm_rejected": self.rejected,
            "llm_unavailable": self.unavailable,
            "llm_waited_secs": round(self.waited_secs, 3),
            "llm_breaker_open": client.usage.breaker_open,
        }

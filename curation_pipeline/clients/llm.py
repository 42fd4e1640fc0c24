"""The LLM behind steps 2 and 3: one prompt in, one answer text (or a reason there is none) out.

`LLMClient` sends a `Prompt` (core/prompts.py) through the official `openai` client, over the
API chosen by `CURATOR_LLM_API`: the Responses API (`text.format`) or Chat Completions
(`response_format`), both with the same strict JSON schema. Around each request:

- **retries, Retry-After, circuit breaker and call budget** come from `clients/resilience.py`,
  the layer the OpenAI embedder uses too (its docstring says why tenacity);
- a **token budget** per cycle: a request whose worst case (estimated input + the output cap)
  might not fit is not sent. Worst cases of requests in flight are reserved until their answer
  says what they cost, so concurrent requests cannot pass the budget together;
- a **cache** keyed by a hash of the exact request (and the endpoint), so an identical request is
  never sent twice (see `store/llm_cache.py`); two identical requests in flight at once wait for
  one another rather than both being sent;
- errors that name the setting to fix: a 404 (no such API at that server, or no such model), a
  server that refuses JSON-schema output, and one that ignores it (answers that are not JSON)
  all name `CURATOR_LLM_API`. A 404 or a refused schema opens the breaker at once: every other
  request of the cycle would meet the same error.

One client lives for one cycle (a run of one namespace): budget and breaker are per cycle. It is
safe to call from several threads (steps 2 and 3 send up to `CURATOR_LLM_CONCURRENCY` requests
at once). `complete` never raises for anything the service does; it returns a `Completion` whose
`text` is None when there is no answer, with the reason in `outcome` / `error`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from curation_pipeline.clients.openai_sdk import (
    OPENAI_API,
    short,
    status_detail,
    transient_failure,
)
from curation_pipeline.clients.resilience import (
    BreakerOpen,
    CallReport,
    GaveUp,
    OverBudget,
    Policy,
    Resilience,
    ResilienceCounters,
    Retryable,
)
from curation_pipeline.config.environment import revealed
from curation_pipeline.config.llm import LLMSettings
from curation_pipeline.core.answer_cache import AnswerCache, CachedAnswer, request_hash
from curation_pipeline.core.prompts import CHAT, RESPONSES, Prompt, chat_request, responses_request
from curation_pipeline.core.text import clip

# Outcomes of one `complete` call.
ANSWERED = "answered"  # a fresh answer from the service
CACHED = "cached"  # the answer to an identical earlier request
FAILED = "failed"  # every attempt failed (or a non-retryable error)
INCOMPLETE = "incomplete"  # the service stopped early (e.g. the output cap); not retried
NOT_JSON = "not_json"  # the answer ignored the JSON schema: the server does not enforce it
REFUSED = "refused"  # the model declined to answer (refusal, content filter); not retried
TOO_LONG = "too_long"  # an answer longer than its task allows: refused unread, never cached
BREAKER_OPEN = "breaker_open"  # not sent: too many failures earlier in this cycle
OVER_BUDGET = "over_budget"  # not sent: the cycle's call or token budget is used up

API_NAMES = {RESPONSES: "Responses API", CHAT: "Chat Completions API"}
# What a server says about itself (its model name, a status, a reason) is kept at most this long:
# it lands in revisions, cycle rows and logs, and a hostile server can send megabytes of it.
ECHO_CHARS = 200


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


class _NotRetried(Exception):
    """A failure another attempt cannot get past (a 4xx, a configuration error, an answer that
    ignored the schema); it counts towards the breaker."""

    def __init__(self, message: str, outcome: str = FAILED) -> None:
        super().__init__(message)
        self.outcome = outcome


class CycleUsage(ResilienceCounters):
    """Running totals of one cycle, shared by the steps of a run (and their threads)."""

    def __init__(self, resilience: Resilience) -> None:
        super().__init__(resilience)
        self.lock = threading.Lock()
        self.input_tokens = 0
        self.output_tokens = 0
        self.reserved_tokens = 0  # worst cases of the requests in flight

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens



def estimated_input_tokens(request: Mapping[str, Any]) -> int:
    # ~3 characters a token errs on the high side for English and JSON: the budget is a ceiling.
    return len(json.dumps(request, ensure_ascii=False)) // 3 + 1


class LLMClient:
    """See the module docstring. `sleep` is injectable so unit tests need not wait."""

    def __init__(
        self,
        client: Any,
        settings: LLMSettings,
        *,
        cache: AnswerCache | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self.settings = settings
        self.api: str = settings.api
        self.cache = cache if settings.cache else None
        self.resilience = Resilience(Policy.of(settings, "requests this cycle; CURATOR_LLM_MAX_CALLS"), sleep=sleep)
        self.usage = CycleUsage(self.resilience)
        self.where = settings.base_url or OPENAI_API
        self.endpoint = f"{settings.provider}:{self.where}"
        # OpenAI's and Azure's reasoning models refuse the older `max_tokens`; the compatible
        # servers do not all know `max_completion_tokens` (Ollama).
        openai_or_azure = settings.provider == "azure" or settings.base_url is None
        self._token_limit_field = "max_completion_tokens" if openai_or_azure else "max_tokens"
        self._key_locks: dict[str, threading.Lock] = {}
        self._key_locks_lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def concurrency(self) -> int:
        return self.settings.concurrency

    def request(self, prompt: Prompt) -> dict:
        """The SDK call's arguments for `prompt` in the configured API."""
        if self.api == CHAT:
            return chat_request(self.model, prompt, token_limit_field=self._token_limit_field)
        return responses_request(self.model, prompt)

    def complete(self, prompt: Prompt) -> Completion:
        request = self.request(prompt)
        key = request_hash(request, self.endpoint)
        # One identical request at a time: the second finds the first's answer in the cache.
        with self._lock_for(key):
            if self.cache is not None:
                hit = self.cache.get(key)
                if hit is not None:
                    return Completion(CACHED, text=hit.text, model=hit.model)
            completion = self._send(request, prompt.max_output_tokens, prompt.max_answer_chars)
            if completion.outcome == ANSWERED and self.cache is not None:
                self.cache.put(key, CachedAnswer(completion.text or "", self.model, prompt.purpose,
                                                 completion.input_tokens, completion.output_tokens))
            return completion

    # ------------------------------------------------------------------------------------------

    def _lock_for(self, key: str) -> threading.Lock:
        with self._key_locks_lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def _send(self, request: dict, output_cap: int, max_answer_chars: int) -> Completion:
        report = CallReport()
        result = Completion(FAILED, model=self.model)
        reserved = [0]  # the worst case the attempt under way holds in the token budget

        def gate() -> str | None:
            # Called under the resilience lock, just before the request is counted.
            worst = estimated_input_tokens(request) + output_cap  # the request's own cap
            with self.usage.lock:
                committed = self.usage.tokens + self.usage.reserved_tokens
                if committed + worst > self.settings.max_tokens:
                    return (f"token budget used up ({committed} of {self.settings.max_tokens} tokens "
                            f"used or reserved, next may need {worst}; CURATOR_LLM_MAX_TOKENS)")
                self.usage.reserved_tokens += worst
            reserved[0] = worst
            return None

        def attempt() -> None:
            spent = [0, 0]  # what this attempt's reply says it cost
            try:
                self._attempt(request, result, spent, max_answer_chars)
            finally:
                result.input_tokens += spent[0]
                result.output_tokens += spent[1]
                with self.usage.lock:
                    self.usage.reserved_tokens -= reserved[0]
                    self.usage.input_tokens += spent[0]
                    self.usage.output_tokens += spent[1]
                reserved[0] = 0

        try:
            self.resilience.call(attempt, gate=gate, report=report)
        except BreakerOpen as refused:
            result.outcome, result.error = BREAKER_OPEN, str(refused)
        except OverBudget as refused:
            result.outcome, result.error = OVER_BUDGET, str(refused)
        except GaveUp as failure:
            result.outcome, result.error = FAILED, failure.last_error
        except _NotRetried as failure:
            result.outcome, result.error = failure.outcome, str(failure)
        result.requests, result.waited_secs = report.requests, report.waited_secs
        return result

    def _attempt(self, request: dict, result: Completion, spent: list[int], max_answer_chars: int) -> None:
        """Send once. Returns with `result` holding an answer (or an incomplete or refused one),
        or raises `Retryable` or `_NotRetried`. `spent` gets the tokens the reply reports."""
        import openai

        try:
            if self.api == CHAT:
                response = self._client.chat.completions.create(**request, timeout=self.settings.timeout_secs)
            else:
                response = self._client.responses.create(**request, timeout=self.settings.timeout_secs)
        except (openai.APIConnectionError, openai.APIStatusError) as error:
            if (retry := transient_failure(error, self.settings.timeout_secs, self._redact)) is not None:
                raise retry from None
            raise _NotRetried(self._advice(error.status_code, status_detail(error, self._redact))) from None
        except (openai.APIResponseValidationError, ValueError, TypeError, AttributeError) as error:
            # A 2xx whose body is not JSON (cut off, garbled, an HTML error page).
            raise Retryable(f"malformed response: {type(error).__name__}: {short(str(error))}") from None
        try:
            text, status, model, used = (_chat_answer if self.api == CHAT else _responses_answer)(response)
        except (TypeError, ValueError, AttributeError, IndexError) as error:
            raise Retryable(f"malformed response: {short(str(error) or type(error).__name__)}") from None
        spent[0], spent[1] = used
        if status == "completed":
            self._finish_answer(result, text, model, max_answer_chars)
        elif status == "incomplete":
            result.outcome, result.error = INCOMPLETE, f"incomplete answer ({short(text or 'no reason given')})"
        elif status == "refused":
            result.outcome, result.error = REFUSED, f"the model declined: {short(text or '')}"
        else:
            raise Retryable(f"answer status {short(repr(status))}")

    def _finish_answer(self, result: Completion, text: str | None, model: str | None,
                       max_answer_chars: int) -> None:
        if text is None:
            raise Retryable("malformed response: an answer without text")
        if len(text) > max_answer_chars:
            # Not retried (the same request would likely get the same), not a failure of the
            # service (the breaker stays closed), and not cached: the step falls back.
            result.outcome, result.text, result.model = TOO_LONG, None, _echoed(model) or self.model
            result.error = (f"the answer is {len(text):,} characters, longer than the {max_answer_chars:,} "
                            "an answer to this request can need")
            return
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            # Strict JSON-schema output cannot produce this: the server ignored the schema.
            other = RESPONSES if self.api == CHAT else CHAT
            error = (f"the answer is not the JSON object the schema asks for: the server at "
                            f"{self.where} does not enforce JSON-schema output on the "
                            f"{API_NAMES[self.api]} (CURATOR_LLM_API={self.api}); use a server that "
                            f"does, or CURATOR_LLM_API={other} if it enforces it there")
            raise _NotRetried(error, NOT_JSON)
        result.outcome, result.text, result.error = ANSWERED, text, None
        result.model = _echoed(model) or self.model

    def _redact(self, text: str) -> str:
        # Servers sometimes echo (part of) the key they refused; an error ends up in the node's
        # revision and the run's log, where the key must never be.
        key = revealed(self.settings.api_key)
        return text.replace(key, "***") if key else text

    def _advice(self, status: int, detail: str) -> str:
        """A non-retryable HTTP error, with what to check; configuration errors open the breaker."""
        api = API_NAMES[self.api]
        other = RESPONSES if self.api == CHAT else CHAT
        if status == 404:
            message = (f"{detail}; no {api} or no model {self.model!r} at {self.where}: check "
                       f"CURATOR_LLM_API={self.api} (CURATOR_LLM_API={other} if the server "
                       f"serves the other API) and CURATOR_LLM_MODEL")
        elif status in (400, 422) and any(word in detail for word in ("response_format", "json_schema", "text.format")):
            message = (f"{detail}; the server refuses JSON-schema output on the {api}: set "
                       f"CURATOR_LLM_API={other} if it supports it there, or use a model/server that does")
        elif status in (401, 403):
            message = f"{detail}; the server refused the key: check CURATOR_LLM_API_KEY"
        else:
            return detail
        self.resilience.trip(message)
        return message


def _echoed(value: str | None) -> str | None:
    """Something the server said about itself, clipped to ECHO_CHARS (None stays None)."""
    return clip(value, ECHO_CHARS) if isinstance(value, str) else None


def _responses_answer(response: Any) -> tuple[str | None, str, str | None, tuple[int, int]]:
    """(text, status, model, (input, output tokens)) of a Responses API answer."""
    from openai.types.responses import Response

    if not isinstance(response, Response) or not isinstance(response.output, list):
        raise TypeError(f"not a Responses API answer ({type(response).__name__})")
    usage = response.usage
    used = (int(usage.input_tokens or 0), int(usage.output_tokens or 0)) if usage is not None else (0, 0)
    status = response.status or "completed"  # some compatible servers leave it out
    if status == "completed":
        # A refusal completes too, as a content item of its own instead of output text.
        refusals = [part.refusal for item in response.output if item.type == "message"
                    for part in item.content if part.type == "refusal"]
        if refusals:
            return " ".join(refusals), "refused", response.model, used
        return response.output_text, status, response.model, used
    if status == "incomplete":
        details = response.incomplete_details
        return (details.reason if details else None), status, response.model, used
    return None, status, response.model, used


def _chat_answer(response: Any) -> tuple[str | None, str, str | None, tuple[int, int]]:
    """(text, status, model, (input, output tokens)) of a Chat Completions answer, in the
    Responses API's terms: finish_reason "length" is an incomplete answer."""
    from openai.types.chat import ChatCompletion

    if not isinstance(response, ChatCompletion) or not response.choices:
        raise TypeError(f"not a Chat Completions answer ({type(response).__name__})")
    usage = response.usage
    used = (int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)) if usage is not None else (0, 0)
    choice = response.choices[0]
    message = choice.message
    if getattr(message, "refusal", None):
        return message.refusal, "refused", response.model, used
    if choice.finish_reason == "length":
        return "max_tokens", "incomplete", response.model, used
    if choice.finish_reason == "content_filter":
        return "content filter", "refused", response.model, used
    return message.content, "completed", response.model, used


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
            "llm_api": client.api,
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

"""What every outside HTTP call of a cycle goes through: retries, Retry-After, a circuit breaker
and a call budget. One `Resilience` per cycle and service, shared by all its calls (threads too).

Used by the LLM client (`clients/llm.py`) and the OpenAI embedder
(`clients/embedders/openai_api.py`); each says what one attempt is and which of its failures
another attempt may get past (`Retryable`), this module decides whether and when to try again.

**Why tenacity, not the SDK's own retries.** The `openai` SDK can retry by itself, but then one
`create()` call may send several requests that we neither see nor can refuse: the call budget
("at most N requests per cycle, retries included") could only be checked between calls, a
Retry-After longer than we want to wait would be slept through (the SDK waits up to a minute),
and tests would have to really sleep. With the SDK's retries off, each attempt is exactly one
HTTP request, and tenacity (a small, well-kept library) gives us the loop with the hooks we
need: a gate before every attempt (budget, breaker), our own wait (the server's Retry-After, or
doubling backoff with jitter), a stop that also refuses a too-long wait, and an injectable
sleep.

**Rules** (the same for every service):

- an attempt that raises `Retryable` is tried again, up to `max_retries` times, after the wait
  the server asked for (Retry-After) or `backoff_secs` doubling per retry plus up to 25 % jitter;
  a wait longer than `max_retry_wait_secs` is not waited for: the call gives up at once;
- any other exception is not retried and propagates unchanged;
- every request is counted before it is sent, and a request past `max_calls` is not sent
  (`OverBudget`); the caller may add its own gate (the LLM's token budget), checked under the
  same lock so that concurrent calls can never pass a budget together;
- after `breaker_failures` calls in a row failed (gave up, or raised), the breaker opens: nothing
  more is sent for the rest of the cycle (`BreakerOpen`), including the retries of calls still
  in flight. A call refused by a budget is not a failure of the service and does not count;
- `trip()` opens the breaker at once, for an error no later request can get past (a wrong URL or
  API: every request of the cycle would fail the same way).
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import tenacity

T = TypeVar("T")


class Retryable(Exception):
    """One attempt failed in a way another attempt may not. `wait`: what the server asked for
    (Retry-After), None for our own backoff."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


class Unavailable(Exception):
    """No result this time, and not because of the request itself; the message says why."""


class BreakerOpen(Unavailable):
    pass


class OverBudget(Unavailable):
    pass


class GaveUp(Unavailable):
    """Every attempt failed (or the server asked for a wait longer than we accept)."""

    def __init__(self, attempts: int, last_error: str) -> None:
        super().__init__(f"gave up after {attempts} attempt{'s' * (attempts != 1)}: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


@dataclass(frozen=True)
class Policy:
    max_retries: int
    backoff_secs: float
    max_retry_wait_secs: float
    breaker_failures: int
    max_calls: int
    # How a refused request names the budget, e.g. "embedding requests this cycle; CURATION_EMBEDDER_MAX_CALLS".
    calls_described_as: str = "requests this cycle"

    @classmethod
    def of(cls, settings: Any, calls_described_as: str) -> Policy:
        """From LLM or embedder settings (both have these fields)."""
        return cls(settings.max_retries, settings.backoff_secs, settings.max_retry_wait_secs,
                   settings.breaker_failures, settings.max_calls, calls_described_as)


@dataclass
class CallReport:
    """What one call cost; filled as it goes, so it is right whichever way the call ends."""

    requests: int = 0
    waited_secs: float = 0.0
    last_error: str = ""


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


class Resilience:
    """See the module docstring. `sleep` is injectable so that tests need not wait."""

    def __init__(self, policy: Policy, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.policy = policy
        self._sleep = sleep
        self._lock = threading.Lock()
        self.requests = 0  # sent this cycle, retries included
        self.retries = 0  # of those, the ones that repeated a failed attempt
        self.waited_secs = 0.0  # slept between attempts, all calls together
        self.consecutive_failures = 0
        self.breaker_open = False
        self._breaker_cause = ""

    # ------------------------------------------------------------------------------------------

    def call(self, attempt: Callable[[], T], *, gate: Callable[[], str | None] | None = None,
             report: CallReport | None = None) -> T:
        """`attempt()` with the rules of the module docstring. `gate`, called under the lock just
        before each request is counted, may refuse it by returning the reason (a budget of the
        caller's own). Raises BreakerOpen, OverBudget, GaveUp, or what `attempt` raised."""
        report = report if report is not None else CallReport()
        with self._lock:
            self._refuse_if_open()
        too_long: list[str] = []

        def once() -> T:
            self._admit(gate, report)
            try:
                return attempt()
            except Retryable as failure:
                report.last_error = str(failure)
                raise

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(Retryable),
            wait=self._wait,
            stop=self._stop(too_long),
            sleep=self._sleeper(report),
            reraise=True,
        )
        try:
            result = retrying(once)
        except Retryable:
            self._record(ok=False)
            raise GaveUp(report.requests, report.last_error + "".join(too_long)) from None
        except Unavailable:
            raise  # refused before sending: not the service's failure
        except BaseException:
            self._record(ok=False)
            raise
        self._record(ok=True)
        return result

    def trip(self, cause: str) -> None:
        """Open the breaker now: `cause` is an error every later request would meet too."""
        with self._lock:
            if not self.breaker_open:
                self.breaker_open, self._breaker_cause = True, cause

    def breaker_message(self) -> str:
        return f"circuit breaker open ({self._breaker_cause})" if self._breaker_cause else "circuit breaker open"

    # ------------------------------------------------------------------------------------------

    def _refuse_if_open(self) -> None:
        if self.breaker_open:
            raise BreakerOpen(self.breaker_message())

    def _admit(self, gate: Callable[[], str | None] | None, report: CallReport) -> None:
        """Count the next request, or refuse it (under the lock: concurrent calls see one count)."""
        with self._lock:
            self._refuse_if_open()  # opened by another call while this one was waiting
            last = f"; last error: {report.last_error}" if report.last_error else ""
            if self.requests >= self.policy.max_calls:
                raise OverBudget(f"call budget used up ({self.requests} of {self.policy.max_calls} "
                                 f"{self.policy.calls_described_as}){last}")
            refusal = gate() if gate is not None else None
            if refusal:
                raise OverBudget(refusal + last)
            self.requests += 1
            self.retries += report.requests > 0
            report.requests += 1

    def _record(self, *, ok: bool) -> None:
        with self._lock:
            if ok:
                self.consecutive_failures = 0
                return
            self.consecutive_failures += 1
            if self.consecutive_failures >= self.policy.breaker_failures and not self.breaker_open:
                self.breaker_open = True
                self._breaker_cause = (f"{self.consecutive_failures} calls in a row failed this cycle, "
                                       "so no more requests are sent until the next cycle")

    def _wait(self, state: tenacity.RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        if isinstance(failure, Retryable) and failure.wait is not None:
            return failure.wait
        # attempt_number is 1 after the first attempt: the first retry waits backoff_secs.
        return self.policy.backoff_secs * (2 ** (state.attempt_number - 1)) * (1 + random.random() / 4)

    def _stop(self, too_long: list[str]) -> Callable[[tenacity.RetryCallState], bool]:
        # tenacity computes the wait (upcoming_sleep) before it asks whether to stop.
        def stop(state: tenacity.RetryCallState) -> bool:
            wait, limit = state.upcoming_sleep, self.policy.max_retry_wait_secs
            if wait > limit:
                too_long.append(f" (asked to wait {wait:g} s, more than {limit:g} s)")
                return True
            return state.attempt_number > self.policy.max_retries

        return stop

    def _sleeper(self, report: CallReport) -> Callable[[float], None]:
        def sleep(seconds: float) -> None:
            self._sleep(seconds)
            report.waited_secs += seconds
            with self._lock:
                self.waited_secs += seconds

        return sleep


class ResilienceCounters:
    """What a client's usage report reads from its resilience layer; clients' usage classes
    extend it with their own counts."""

    def __init__(self, resilience: Resilience) -> None:
        self._resilience = resilience

    @property
    def requests(self) -> int:  # HTTP requests sent, retries included
        return self._resilience.requests

    @property
    def retries(self) -> int:  # of those, the ones that repeated a failed attempt
        return self._resilience.retries

    @property
    def waited_secs(self) -> float:  # time slept between attempts (backoff, Retry-After)
        return self._resilience.waited_secs

    @property
    def consecutive_failures(self) -> int:
        return self._resilience.consecutive_failures

    @property
    def breaker_open(self) -> bool:
        return self._resilience.breaker_open

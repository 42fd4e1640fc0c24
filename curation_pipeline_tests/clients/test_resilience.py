"""The shared resilience layer on its own: the rules both HTTP clients rely on (their HTTP faults
are tested through them, in test_llm.py and embedders/test_openai_api.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from curation_pipeline.clients.resilience import (
    BreakerOpen,
    CallReport,
    GaveUp,
    OverBudget,
    Policy,
    Resilience,
    Retryable,
)


def _resilience(**overrides) -> tuple[Resilience, list[float]]:
    values = {"max_retries": 2, "backoff_secs": 0.5, "max_retry_wait_secs": 10, "breaker_failures": 2, "max_calls": 10}
    values.update(overrides)
    waits: list[float] = []
    return Resilience(Policy(**values), sleep=waits.append), waits


def _failing(times: int, wait: float | None = None):
    """An attempt that fails `times` times, then answers."""
    calls = []

    def attempt():
        calls.append(1)
        if len(calls) <= times:
            raise Retryable(f"failure {len(calls)}", wait)
        return "answer"

    return attempt


def test_a_retried_call_reports_what_it_cost():
    resilience, waits = _resilience()
    report = CallReport()
    assert resilience.call(_failing(2), report=report) == "answer"
    assert report.requests == 3 and resilience.requests == 3 and resilience.retries == 2
    assert len(waits) == 2 and 0.5 <= waits[0] <= 0.625 and 1.0 <= waits[1] <= 1.25  # doubling, 25 % jitter
    assert report.waited_secs == resilience.waited_secs == pytest.approx(sum(waits))
    assert resilience.consecutive_failures == 0


def test_the_servers_wait_wins_and_a_too_long_one_ends_the_call():
    resilience, waits = _resilience()
    assert resilience.call(_failing(1, wait=3.0)) == "answer" and waits == [3.0]
    with pytest.raises(GaveUp, match=r"after 1 attempt: failure 1 \(asked to wait 60 s, more than 10 s\)"):
        resilience.call(_failing(5, wait=60.0))
    assert waits == [3.0]


def test_other_exceptions_are_not_retried_and_count_towards_the_breaker():
    resilience, _ = _resilience()

    def broken():
        raise ValueError("a bad request")

    with pytest.raises(ValueError):
        resilience.call(broken)
    with pytest.raises(GaveUp):
        resilience.call(_failing(9))
    assert resilience.breaker_open and resilience.requests == 1 + 3
    with pytest.raises(BreakerOpen, match="2 calls in a row failed"):
        resilience.call(_failing(0))
    assert resilience.requests == 4  # nothing sent once open


def test_a_refused_request_is_not_a_failure_of_the_service():
    resilience, _ = _resilience(max_calls=2, breaker_failures=1)
    with pytest.raises(OverBudget, match=r"call budget used up \(2 of 2 requests this cycle\); last error: failure 2"):
        resilience.call(_failing(5))
    assert not resilience.breaker_open and resilience.requests == 2
    resilience, _ = _resilience(breaker_failures=1)
    with pytest.raises(OverBudget, match="no tokens left"):  # the caller's own budget
        resilience.call(_failing(0), gate=lambda: "no tokens left")
    assert not resilience.breaker_open and resilience.requests == 0


def test_trip_opens_the_breaker_at_once_and_names_why():
    resilience, _ = _resilience(breaker_failures=5)
    resilience.trip("HTTP 404: check CURATOR_LLM_API")
    with pytest.raises(BreakerOpen, match="HTTP 404: check CURATOR_LLM_API"):
        resilience.call(_failing(0))


def test_concurrent_calls_never_pass_the_call_budget():
    resilience, _ = _resilience(max_calls=7, max_retries=3)
    started = threading.Barrier(8)

    def call(_):
        started.wait()
        try:
            return resilience.call(_failing(1))
        except OverBudget:
            return None

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(call, range(8)))
    assert resilience.requests == 7
    assert results.count("answer") <= 3  # each answer took two requests

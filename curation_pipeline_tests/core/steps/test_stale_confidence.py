"""Step 5 planning: which memories become ``stale``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import polars as pl
import pytest

from curation_pipeline.core.steps.stale_confidence import (
    STALE_SCHEMA,
    plan_stale_confidence,
)

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
CUTOFF = NOW - timedelta(days=30)
OLD = NOW - timedelta(days=90)


def nodes(**columns: list) -> pl.DataFrame:
    count = len(next(iter(columns.values())))
    base = {
        "id": [f"m{k}" for k in range(count)],
        "confidence": ["default"] * count,
        "last_recalled_at": [None] * count,
        "created_at": [OLD] * count,
    }
    base.update(columns)
    return pl.DataFrame(base, schema_overrides={
        "last_recalled_at": pl.Datetime("us", "UTC"), "created_at": pl.Datetime("us", "UTC")
    })


def test_exactly_thirty_days_is_not_stale_one_microsecond_more_is() -> None:
    frame = nodes(id=["at", "older"], created_at=[CUTOFF, CUTOFF - timedelta(microseconds=1)])
    assert plan_stale_confidence(frame, now=NOW)["id"].to_list() == ["older"]


def test_recent_recall_protects_an_old_memory() -> None:
    frame = nodes(id=["recalled", "never"], last_recalled_at=[NOW - timedelta(days=1), None])
    plan = plan_stale_confidence(frame, now=NOW)
    assert plan.rows() == [("never", OLD)]


def test_last_seen_is_last_recall_when_present() -> None:
    recalled = NOW - timedelta(days=40)
    plan = plan_stale_confidence(nodes(last_recalled_at=[recalled]), now=NOW)
    assert plan["last_seen_at"].to_list() == [recalled]


def test_verified_and_stale_are_left_alone_null_counts_as_default() -> None:
    frame = nodes(id=["v", "s", "d", "n", "x"], confidence=["verified", "stale", "default", None, "inferred"])
    assert plan_stale_confidence(frame, now=NOW)["id"].to_list() == ["d", "n", "x"]


def test_oldest_first_then_id() -> None:
    frame = nodes(id=["b", "a", "c"], created_at=[OLD, OLD, OLD - timedelta(days=1)])
    assert plan_stale_confidence(frame, now=NOW)["id"].to_list() == ["c", "a", "b"]


def test_stale_after_days_parameter_and_other_timezones() -> None:
    frame = nodes(created_at=[NOW - timedelta(days=5)])
    assert plan_stale_confidence(frame, now=NOW).is_empty()
    assert plan_stale_confidence(frame, now=NOW, stale_after_days=4).height == 1
    paris_now = NOW.astimezone(timezone(timedelta(hours=2)))
    assert plan_stale_confidence(frame, now=paris_now, stale_after_days=4).height == 1


def test_naive_now_is_rejected() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        plan_stale_confidence(nodes(id=["x"]), now=datetime(2024, 6, 1))


def test_empty_input_gives_typed_empty_output() -> None:
    untyped = pl.DataFrame({"id": [], "confidence": [], "last_recalled_at": [], "created_at": []})
    plan = plan_stale_confidence(untyped, now=NOW)
    assert plan.is_empty() and plan.schema == STALE_SCHEMA
    assert plan_stale_confidence(nodes(id=["x"], confidence=["verified"]), now=NOW).schema == STALE_SCHEMA

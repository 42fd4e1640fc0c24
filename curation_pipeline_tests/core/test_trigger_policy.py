"""The trigger rules as pure functions, the interval -> cron conversion, and their settings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice

import pytest
from dagster._utils.schedules import cron_string_iterator

from curation_pipeline.config.settings import SettingsError, load_settings
from curation_pipeline.core.cron import expressible_intervals, interval_to_cron
from curation_pipeline.core.trigger_policy import (
    ACTIVITY,
    CEILING,
    NEVER_CURATED,
    NamespaceState,
    decode_cursor,
    plan_idle_runs,
    plan_scheduled_runs,
    scheduled_reason,
)

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def ago(**delta) -> datetime:
    return NOW - timedelta(**delta)


def state(namespace="support", *, interaction=None, started=None, curated=None, tenant="acme") -> NamespaceState:
    return NamespaceState(tenant, namespace, interaction, started, curated or started)


@pytest.mark.parametrize(
    ("row", "ceiling", "expected"),
    [
        (state(interaction=ago(minutes=5), started=ago(hours=1)), 21600, ACTIVITY),
        (state(interaction=ago(hours=2), started=ago(hours=1)), 21600, None),  # quiet since
        (state(), 21600, NEVER_CURATED),
        (state(interaction=ago(days=3)), 0, ACTIVITY),  # interacted, never curated
        (state(interaction=ago(days=3), started=ago(hours=7)), 21600, CEILING),  # busy elsewhere
        (state(interaction=ago(days=3), started=ago(hours=7)), 0, None),  # ceiling off
        (state(interaction=ago(days=3), started=ago(hours=5)), 21600, None),  # within ceiling
    ],
)
def test_the_schedule_curates_only_namespaces_with_something_to_do(row, ceiling, expected):
    assert scheduled_reason(row, now=NOW, ceiling_secs=ceiling) == expected


def test_an_interaction_during_a_run_counts_as_activity_after_it():
    # The run started at 11:00 and finished at 11:10; the agent wrote at 11:05.
    row = NamespaceState("acme", "support", ago(minutes=55), ago(hours=1), ago(minutes=50))
    assert scheduled_reason(row, now=NOW, ceiling_secs=0) == ACTIVITY


def test_the_schedule_skips_namespaces_with_a_run_in_flight():
    rows = [state("a", interaction=ago(minutes=1)), state("b", interaction=ago(minutes=1))]
    planned = plan_scheduled_runs(rows, now=NOW, ceiling_secs=0, in_flight={("acme", "a")})
    assert [run.state.namespace for run in planned] == ["b"]


IDLE = {"idle_threshold_secs": 600, "idle_floor_secs": 900}


@pytest.mark.parametrize(
    ("row", "due"),
    [
        (state(interaction=ago(minutes=11), started=ago(hours=1)), True),
        (state(interaction=ago(minutes=9), started=ago(hours=1)), False),  # still busy
        (state(interaction=ago(minutes=11), started=ago(minutes=5)), False),  # nothing new
        (state(interaction=ago(minutes=11)), True),  # never curated
        (state(), False),  # no interaction known: the schedule's business
        # curated 14 minutes ago, an interaction a minute later, idle since: floor not elapsed
        (NamespaceState("acme", "support", ago(minutes=13), ago(minutes=20), ago(minutes=14)), False),
        (NamespaceState("acme", "support", ago(minutes=13), ago(minutes=20), ago(minutes=16)), True),
    ],
)
def test_the_idle_sensor_rules(row, due):
    plan = plan_idle_runs([row], now=NOW, cap=10, **IDLE)
    assert bool(plan.due) is due


def test_the_cursor_goes_round_the_namespaces_and_the_cap_holds():
    rows = [state(name, interaction=ago(hours=1)) for name in "edcba"]
    seen = []
    cursor = None
    for _ in range(3):
        plan = plan_idle_runs(rows, now=NOW, cap=2, cursor=cursor, **IDLE)
        assert len(plan.due) == 2
        seen.append([row.namespace for row in plan.due])
        cursor = plan.cursor
    assert seen == [["a", "b"], ["c", "d"], ["e", "a"]]
    assert plan.skipped == {"over the per-tick cap": 3}


def test_a_namespace_in_flight_does_not_use_up_the_cap():
    rows = [state(name, interaction=ago(hours=1)) for name in "abc"]
    plan = plan_idle_runs(rows, now=NOW, cap=2, in_flight={("acme", "a")}, **IDLE)
    assert [row.namespace for row in plan.due] == ["b", "c"]
    assert plan.skipped == {"a run is already queued or in progress": 1}


def test_an_unreadable_cursor_starts_over_and_no_due_keeps_the_cursor():
    assert decode_cursor("not json") is None and decode_cursor(None) is None
    plan = plan_idle_runs([], now=NOW, cap=2, cursor='{"after": ["acme", "x"]}', **IDLE)
    assert plan.due == [] and plan.cursor == '{"after": ["acme", "x"]}'


@pytest.mark.parametrize(
    ("seconds", "cron"),
    [(60, "* * * * *"), (300, "*/5 * * * *"), (1800, "*/30 * * * *"), (3600, "0 * * * *"),
     (21600, "0 */6 * * *"), (86400, "0 0 * * *"), (604800, "0 0 * * 0")],
)
def test_intervals_that_cron_can_express(seconds, cron):
    assert interval_to_cron(seconds) == cron


@pytest.mark.parametrize("seconds", [90, 5400, 7 * 3600, 2 * 86400, 45 * 60 + 1])
def test_intervals_that_no_cron_can_express_are_an_error_not_a_rounding(seconds):
    with pytest.raises(SettingsError, match=r"CURATOR_INTERVAL_SECS=\d+ .*use one of 60, 120"):
        interval_to_cron(seconds)


def test_every_listed_interval_fires_at_exactly_that_pace():
    # Dagster's own cron iterator (what the daemon ticks by), over two weeks of firings from an
    # awkward start: every gap must be the interval, so no cron string is merely "close".
    start = datetime(2026, 3, 7, 13, 17, 29, tzinfo=UTC).timestamp()
    for seconds in expressible_intervals():
        cron = interval_to_cron(seconds)
        firings = list(islice(cron_string_iterator(start, cron, "UTC"), min(3000, 2 + 14 * 86400 // seconds)))
        gaps = {int((later - earlier).total_seconds()) for earlier, later in zip(firings, firings[1:])}
        assert gaps == {seconds}, (seconds, cron, sorted(gaps)[:5])


def test_trigger_settings_defaults_and_environment():
    defaults = load_settings({})
    assert (defaults.interval_secs, defaults.idle_threshold_secs, defaults.ceiling_secs) == (1800, 600, 21600)
    assert defaults.curation_enabled is True
    custom = load_settings({"CURATOR_ENABLED": "false", "IDLE_THRESHOLD_SECS": "60", "CURATOR_CEILING_SECS": "0"})
    assert (custom.curation_enabled, custom.idle_threshold_secs, custom.ceiling_secs) == (False, 60, 0)


@pytest.mark.parametrize(
    ("variable", "value"),
    [("CURATOR_ENABLED", "maybe"), ("CURATOR_INTERVAL_SECS", "30"), ("IDLE_THRESHOLD_SECS", "-1"),
     ("CURATOR_IDLE_MAX_RUNS_PER_TICK", "0")],
)
def test_invalid_trigger_settings_name_the_variable(variable, value):
    with pytest.raises(SettingsError, match=variable):
        load_settings({variable: value})

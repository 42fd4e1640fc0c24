"""`curation_schedule` evaluated against a real Dagster instance and real namespace_activity rows."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from curation_pipeline.config.settings import SettingsError
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.definitions import load_defs
from curation_pipeline.defs.job import step_run_config
from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
from curation_pipeline.defs.resources import MemoryStore
from curation_pipeline.defs.schedules import build_curation_schedule
from curation_pipeline_tests.conftest import insert, node, run_cycle
from curation_pipeline_tests.support.trigger_fixtures import (
    UNREACHABLE_STORE,
    queue_run,
    requested_namespaces,
    set_activity,
    trigger_settings,
)

pytestmark = pytest.mark.slow


def tick(instance, settings=None, *, store=None, now=None):
    schedule = build_curation_schedule(settings or trigger_settings())
    with dg.build_schedule_context(
        instance=instance, instance_ref=instance.get_ref(), scheduled_execution_time=now or datetime.now(UTC),
        resources={"memory_store": store or MemoryStore()}, repository_def=load_defs().get_repository_def(),
    ) as context:
        return schedule.evaluate_tick(context)


def ago(**delta):
    return datetime.now(UTC) - timedelta(**delta)


def test_a_tick_requests_one_run_per_namespace_with_something_to_do(db, instance):
    set_activity(db, "busy", interaction=ago(minutes=1), curated=ago(minutes=40))
    set_activity(db, "quiet", interaction=ago(hours=2), curated=ago(hours=1))
    set_activity(db, "new")  # registered by discovery, never curated
    set_activity(db, "starved", interaction=ago(hours=8), curated=ago(hours=7))  # past the ceiling
    set_activity(db, "quiet-then-idle", interaction=ago(minutes=15), curated=ago(minutes=30))

    result = tick(instance)

    reasons = {r.tags["curation/namespace"]: r.tags["curation/reason"] for r in result.run_requests}
    assert reasons == {
        "busy": "activity", "new": "never_curated", "starved": "ceiling", "quiet-then-idle": "activity",
    }
    for request in result.run_requests:
        key = partition_key("acme", request.tags["curation/namespace"])
        assert request.partition_key == key and request.tags["dagster/partition"] == key
        assert request.run_key == f"schedule:{key}"
        assert request.tags["curation/tenant"] == "acme"
        assert request.tags["dagster/schedule_name"] == "curation_schedule"
        assert request.tags["dagster/priority"] == "0"
        # The Runs list says who started it: the schedule, or the ceiling for a starved namespace.
        assert request.tags["curation/trigger"] == ("ceiling" if reasons[request.tags["curation/namespace"]]
                                                    == "ceiling" else "schedule")
        # Dagster refuses a run for an unknown partition: the tick registered it.
        assert instance.has_dynamic_partition(PARTITIONS_DEF_NAME, key)


def test_the_ceiling_can_be_turned_off(db, instance):
    set_activity(db, "starved", interaction=ago(hours=8), curated=ago(hours=7))
    assert tick(instance, trigger_settings(ceiling_secs=0)).run_requests == []
    assert requested_namespaces(tick(instance, trigger_settings(ceiling_secs=3600)).run_requests) == ["starved"]


def test_nothing_happened_means_no_run(db, instance):
    for index in range(20):
        set_activity(db, f"ns{index}", interaction=ago(hours=2), curated=ago(hours=1))
    result = tick(instance)
    assert result.run_requests == []
    assert "no namespace has anything to do (0 read)" in result.skip_message


def test_disabled_namespaces_and_namespaces_with_a_run_in_flight_get_no_run(db, instance):
    set_activity(db, "off", interaction=ago(minutes=1), curated=ago(hours=9), enabled=False)
    set_activity(db, "queued", interaction=ago(minutes=1), curated=ago(hours=1))
    set_activity(db, "running", interaction=ago(minutes=1), curated=ago(hours=1))
    set_activity(db, "done-before", interaction=ago(minutes=1), curated=ago(hours=1))
    queue_run(instance, "queued")
    queue_run(instance, "running", status=dg.DagsterRunStatus.STARTED)
    queue_run(instance, "done-before", status=dg.DagsterRunStatus.SUCCESS)  # finished: no obstacle

    assert requested_namespaces(tick(instance).run_requests) == ["done-before"]


def test_the_global_off_switch_requests_nothing_and_reads_nothing(db, instance):
    set_activity(db, "busy", interaction=ago(minutes=1))
    # The store is unreachable: a tick that read it would fail instead of skipping.
    result = tick(instance, trigger_settings(curation_enabled=False), store=UNREACHABLE_STORE)
    assert result.run_requests == [] and "CURATOR_ENABLED=false" in result.skip_message


def test_a_successful_run_counts_as_curated_and_a_failed_one_does_not(db, instance):
    insert(db, node(namespace="support", text="The customer prefers email."))
    db.execute("UPDATE namespace_activity SET last_interaction_at = now() - interval '1 hour'")

    failed = run_cycle(instance, run_config=step_run_config(
        {"consolidate_duplicates": {"similarity_threshold": 1.5}}))
    assert not failed.success
    assert requested_namespaces(tick(instance).run_requests) == ["support"]

    assert run_cycle(instance).success
    assert tick(instance).run_requests == []

    # An interaction during the run (after it started, before it finished) is still new work.
    started, finished = db.execute(
        "SELECT last_curation_started_at, last_curated_at FROM namespace_activity"
    ).fetchone()
    assert started < finished
    db.execute("UPDATE namespace_activity SET last_interaction_at = %s", (started + (finished - started) / 2,))
    assert [r.tags["curation/reason"] for r in tick(instance).run_requests] == ["activity"]


def test_an_interval_no_cron_can_express_is_an_error_when_the_code_location_loads(curation_home):
    with pytest.raises(SettingsError, match="CURATOR_INTERVAL_SECS=5400"):
        build_curation_schedule(trigger_settings(interval_secs=5400))
    loaded = subprocess.run(
        [sys.executable, "-c", "from dagster._core.definitions.reconstruct import ReconstructableRepository;"
         "ReconstructableRepository.for_module('curation_pipeline.defs.definitions', 'defs').get_definition()"],
        env={**os.environ, "CURATOR_INTERVAL_SECS": "5400"}, capture_output=True, text=True, timeout=120,
    )
    assert loaded.returncode != 0
    assert "CURATOR_INTERVAL_SECS=5400 is invalid" in loaded.stderr


def test_the_definitions_schedule_follows_the_interval_setting(curation_home):
    loaded = subprocess.run(
        [sys.executable, "-W", "ignore", "-c",
         "from curation_pipeline.defs.definitions import load_defs;"
         "print(load_defs().get_repository_def().get_schedule_def('curation_schedule').cron_schedule)"],
        env={**os.environ, "CURATOR_INTERVAL_SECS": "3600"}, capture_output=True, text=True, timeout=120,
    )
    assert loaded.stdout.strip() == "0 * * * *", loaded.stderr


def test_a_tick_caps_its_requests_and_serves_the_longest_waiting_first(db, instance):
    set_activity(db, "a-busy", interaction=ago(minutes=1), curated=ago(minutes=40))
    set_activity(db, "b-busy", interaction=ago(minutes=1), curated=ago(hours=3))
    set_activity(db, "c-new")
    result = tick(instance, trigger_settings(schedule_max_runs_per_tick=2))
    assert sorted(requested_namespaces(result.run_requests)) == ["b-busy", "c-new"]

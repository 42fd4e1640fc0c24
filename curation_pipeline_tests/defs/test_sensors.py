"""The idle sensor and namespace discovery, evaluated against a real instance and real rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.definitions import load_defs
from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
from curation_pipeline.defs.resources import MemoryStore
from curation_pipeline.defs.sensors import build_discovery_sensor, build_idle_sensor
from curation_pipeline_tests.conftest import insert, node
from curation_pipeline_tests.support.trigger_fixtures import (
    UNREACHABLE_STORE,
    queue_run,
    requested_namespaces,
    set_activity,
    trigger_settings,
)

pytestmark = pytest.mark.slow


def ago(**delta):
    return datetime.now(UTC) - timedelta(**delta)


def tick(sensor, instance, *, cursor=None, store=None):
    with dg.build_sensor_context(
        instance=instance, instance_ref=instance.get_ref(), cursor=cursor,
        resources={"memory_store": store or MemoryStore()},
        repository_def=load_defs().get_repository_def(),
    ) as context:
        return sensor.evaluate_tick(context)


def idle_tick(instance, *, cursor=None, store=None, **settings):
    return tick(build_idle_sensor(trigger_settings(**settings)), instance, cursor=cursor, store=store)


def test_an_idle_namespace_gets_a_run_ahead_of_scheduled_ones(db, instance):
    set_activity(db, "idle", interaction=ago(minutes=11), curated=ago(hours=1))
    set_activity(db, "busy", interaction=ago(minutes=2), curated=ago(hours=1))  # still talking
    set_activity(db, "quiet", interaction=ago(hours=2), curated=ago(hours=1))  # nothing new
    set_activity(db, "unknown")  # never reported an interaction: left to the schedule

    result = idle_tick(instance)

    [request] = result.run_requests
    key = partition_key("acme", "idle")
    assert request.partition_key == key and request.tags["dagster/partition"] == key
    assert request.tags["dagster/priority"] == "10"  # scheduled runs have 0
    assert (request.tags["curation/tenant"], request.tags["curation/namespace"]) == ("acme", "idle")
    assert request.tags["curation/trigger"] == "idle"
    assert request.tags["dagster/sensor_name"] == "idle_namespace_sensor"
    assert instance.has_dynamic_partition(PARTITIONS_DEF_NAME, key)


def test_one_run_per_idle_episode(db, instance):
    last_interaction = ago(minutes=20)
    set_activity(db, "idle", interaction=last_interaction, curated=ago(hours=1))
    first = idle_tick(instance).run_requests[0].run_key
    assert first == idle_tick(instance).run_requests[0].run_key  # same episode: Dagster dedups
    set_activity(db, "idle", interaction=last_interaction + timedelta(minutes=1), curated=ago(hours=1))
    assert idle_tick(instance).run_requests[0].run_key != first  # a new episode: a new run


def test_a_namespace_curated_less_than_the_floor_ago_waits(db, instance):
    # Curated 12 minutes ago, one interaction right after, idle for 11 minutes since.
    set_activity(db, "recent", interaction=ago(minutes=11), curated=ago(minutes=12))
    assert idle_tick(instance, idle_floor_secs=900).run_requests == []
    assert "curated less than the floor ago" in idle_tick(instance, idle_floor_secs=900).skip_message
    assert requested_namespaces(idle_tick(instance, idle_floor_secs=600).run_requests) == ["recent"]


def test_no_second_run_while_one_is_queued_or_running(db, instance):
    for name in ("queued", "running", "free"):
        set_activity(db, name, interaction=ago(minutes=30), curated=ago(hours=1))
    queue_run(instance, "queued")
    queue_run(instance, "running", status=dg.DagsterRunStatus.STARTED)
    assert requested_namespaces(idle_tick(instance).run_requests) == ["free"]


def test_disabled_per_namespace_or_globally_requests_nothing(db, instance):
    set_activity(db, "off", interaction=ago(minutes=30), curated=ago(hours=1), enabled=False)
    assert idle_tick(instance).run_requests == []
    set_activity(db, "on", interaction=ago(minutes=30), curated=ago(hours=1))
    # Globally off: skipped before touching the (here unreachable) store.
    result = idle_tick(instance, curation_enabled=False, store=UNREACHABLE_STORE)
    assert result.run_requests == [] and "CURATOR_ENABLED=false" in result.skip_message


def test_more_idle_namespaces_than_the_cap_are_served_in_turn_from_the_cursor(db, instance):
    names = [f"ns{index}" for index in range(5)]
    for name in names:
        set_activity(db, name, interaction=ago(minutes=30), curated=ago(hours=1))
    served, cursor = [], None
    for _ in range(3):
        result = idle_tick(instance, cursor=cursor, idle_max_runs_per_tick=2)
        assert len(result.run_requests) == 2
        served.append(requested_namespaces(result.run_requests))
        cursor = result.cursor
    assert served == [["ns0", "ns1"], ["ns2", "ns3"], ["ns0", "ns4"]]


def test_discovery_registers_new_namespaces_once(db, instance):
    insert(db, node(tenant_id="acme", namespace="support"), node(tenant_id="globex", namespace="a,b c"))
    # A namespace an agent wrote to directly, without its namespace_activity row.
    db.execute(
        "INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary) VALUES ('initech', 'raw', 'x')"
    )
    sensor = build_discovery_sensor(trigger_settings())

    result = tick(sensor, instance)

    [request] = result.dynamic_partitions_requests
    assert request.partitions_def_name == PARTITIONS_DEF_NAME
    assert sorted(request.partition_keys) == ["acme:support", "globex:a%2Cb%20c", "initech:raw"]
    # The schedule reads namespace_activity alone: the raw namespace now has its row there.
    assert db.execute(
        "SELECT count(*) FROM namespace_activity WHERE tenant_id = 'initech' AND namespace = 'raw'"
    ).fetchone()[0] == 1

    instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, list(request.partition_keys))  # what the daemon does
    again = tick(sensor, instance)
    assert not again.dynamic_partitions_requests and "no new namespace (3 known)" in again.skip_message


def test_discovery_skips_names_that_cannot_be_partition_keys(db, instance):
    db.execute(
        "INSERT INTO namespace_activity (tenant_id, namespace) VALUES ('acme', 'bad\tname'), ('acme', 'good')"
    )
    result = tick(build_discovery_sensor(trigger_settings()), instance)
    [request] = result.dynamic_partitions_requests
    assert list(request.partition_keys) == ["acme:good"]

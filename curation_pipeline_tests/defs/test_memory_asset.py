"""The `memory_namespace` asset as the UI shows it (read through Dagster's GraphQL API): a
graph-backed asset whose ops are the curation steps, materialized once per cycle and partition
with the namespace's health, failed when its cycle fails, with its checks and its automations."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.test_utils import poll_for_finished_run

from curation_pipeline.core.health import HEALTH_FIELDS
from curation_pipeline.core.health_checks import CHECK_RULES
from curation_pipeline.defs.assets import metadata_label
from curation_pipeline.defs.run_tags import TRIGGER_TAG
from curation_pipeline.defs.schedules import SCHEDULE_NAME
from curation_pipeline.defs.sensors import DISCOVERY_SENSOR_NAME, IDLE_SENSOR_NAME
from curation_pipeline_tests.conftest import (
    cycle_row,
    fetch_node,
    insert,
    node,
    refuse_vector_writes,
    run_cycle,
)
from curation_pipeline_tests.support.ui_graphql import (
    CHECK_EXECUTIONS,
    IMPLICIT_ASSET_JOB,
    asset_definition,
    check_statuses,
    materializations,
    materialize,
    ui_graphql,
)

pytestmark = pytest.mark.slow

CHECKS = {rule.name for rule in CHECK_RULES}
STEP_OPS = {"reclassify_stale", "consolidate_duplicates", "summarize_verbose", "revectorize",
            "mark_stale_confidence", "sync_graph", "associate_concepts", "log_curation_activity"}


def _namespace_with_work(db, namespace: str) -> dict[str, str]:
    keeper, absorbed, pinned, missing = insert(
        db,
        node(namespace=namespace, text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
        node(namespace=namespace, text="Customer Dana Reyes prefers email to phone calls."),
        node(namespace=namespace, text="The deploy pipeline runs on Fridays.", pinned=True),
        node(namespace=namespace, text="No vector yet.", embed=False),
    )
    return {"keeper": keeper, "absorbed": absorbed, "pinned": pinned, "missing": missing}


def test_the_asset_is_materializable_and_made_of_the_steps_with_its_automations(instance):
    with ui_graphql(instance) as query:
        asset = asset_definition(query)
    # Not an external asset: Materialize is enabled, and lineage shows the steps as its ops.
    assert asset["isMaterializable"] and asset["isExecutable"] and asset["isPartitioned"]
    assert asset["graphName"] == "memory_namespace" and set(asset["opNames"]) == {f"memory_namespace.{op}" for op in STEP_OPS}
    assert "curate_namespace" in asset["jobNames"]  # beside Dagster's implicit __ASSET_JOB
    # The Automation panel: the schedule and both sensors.
    assert sorted(i["name"] for i in asset["targetingInstigators"]) == sorted(
        [SCHEDULE_NAME, IDLE_SENSOR_NAME, DISCOVERY_SENSOR_NAME])
    assert asset["owners"] == [{"__typename": "TeamAssetOwner", "team": "agent-memory"}]
    assert {"postgres", "polars"} <= set(asset["kinds"]) and asset["groupName"] == "curation"
    assert {"key": "domain", "value": "agent-memory"} in asset["tags"]
    # A short description; every metadata key is explained in the definition's metrics table.
    assert len(asset["description"]) < 400 and "Plots tab" not in asset["description"]
    [metrics] = [entry["mdStr"] for entry in asset["metadataEntries"] if entry["label"] == "metrics"]
    for field in HEALTH_FIELDS:
        assert f"| `{metadata_label(field)}` | {field.meaning} |" in metrics


def test_every_cycle_records_the_namespace_health_on_its_partition(db, instance):
    _namespace_with_work(db, "support")
    _namespace_with_work(db, "sales")
    runs = {ns: [run_cycle(instance, namespace=ns) for _ in range(2)] for ns in ("support", "sales")}
    assert all(result.success for results in runs.values() for result in results)

    with ui_graphql(instance) as query:
        for namespace, results in runs.items():
            events = materializations(query, f"acme:{namespace}")
            # Two cycles, two events on the partition, newest first, each from its own run.
            assert [e["run_id"] for e in events] == [r.run_id for r in reversed(results)]
            for event, result in zip(events, reversed(results)):
                recorded = cycle_row(db, result.run_id)["health"]
                for field in HEALTH_FIELDS:
                    shown, value = event["metadata"].get(metadata_label(field)), recorded[field.key]
                    if value is None:  # the LLM's acceptance rate, with the LLM off: not plotted as 0
                        assert shown is None, field.key
                    elif field.unit == "share":
                        assert shown == pytest.approx(100 * value, abs=0.05), field.key
                    elif field.unit == "seconds":
                        assert shown == pytest.approx(value, abs=0.0051), field.key
                    else:
                        assert shown == value, field.key
            newest, first = events[0]["metadata"], events[1]["metadata"]
            # The keeper already said what it absorbed: its text and vector stay, only "No vector yet." is embedded.
            assert (first["merged"], first["re_embedded"], first["active_nodes"], first["archived_nodes"]) == (1, 1, 3, 1)
            assert (newest["merged"], newest["re_embedded"], newest["active_nodes"]) == (0, 0, 3)
            assert newest["pinned_nodes"] == 1 and newest["embedding_backlog"] == 0
            assert newest["cycle_status"] == "success"

        # Every check has a result on both partitions, all green.
        statuses = check_statuses(query, "acme:support")
        assert set(statuses) == CHECKS
        for name, status in statuses.items():
            assert sorted(status["succeeded"]) == ["acme:sales", "acme:support"], name
            assert status["failed"] == []
        second, first = query(CHECK_EXECUTIONS, check="embedding_backlog_not_growing",
                              partition="acme:sales")["assetCheckExecutions"]
        assert [second["runId"], first["runId"]] == [r.run_id for r in reversed(runs["sales"])]
        assert "first recorded cycle" in first["evaluation"]["description"]
        assert "stayed: 0 -> 0" in second["evaluation"]["description"]


def test_a_failed_cycle_is_a_failed_materialization_of_its_partition(db, instance):
    _namespace_with_work(db, "support")
    _namespace_with_work(db, "sales")
    assert run_cycle(instance, namespace="sales").success
    with refuse_vector_writes(db):
        failed = run_cycle(instance)
    assert not failed.success

    with ui_graphql(instance) as query:
        statuses = asset_definition(query)["assetPartitionStatuses"]
        assert statuses["failedPartitions"] == ["acme:support"]
        assert statuses["materializedPartitions"] == ["acme:sales"]
        # Its checks were not evaluated by the failed cycle: no green left over from it.
        for name in CHECKS:
            assert query(CHECK_EXECUTIONS, check=name, partition="acme:support")["assetCheckExecutions"] == [] \
                or all(e["runId"] != failed.run_id or e["status"] != "SUCCEEDED"
                       for e in query(CHECK_EXECUTIONS, check=name, partition="acme:support")["assetCheckExecutions"])

    # The next good cycle materializes it again.
    assert run_cycle(instance).success
    with ui_graphql(instance) as query:
        statuses = asset_definition(query)["assetPartitionStatuses"]
        assert sorted(statuses["materializedPartitions"]) == ["acme:sales", "acme:support"]
        assert statuses["failedPartitions"] == []


def test_an_orphaned_archived_node_fails_the_orphan_check_on_its_partition_only(db, instance):
    ids = _namespace_with_work(db, "support")
    _namespace_with_work(db, "sales")
    assert run_cycle(instance).success and run_cycle(instance, namespace="sales").success
    assert fetch_node(db, ids["absorbed"])["merged_into"] is not None
    # An agent archives the keeper: the node merged into it now points at an archived node.
    db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (ids["keeper"],))
    orphaned = run_cycle(instance)
    assert orphaned.success

    with ui_graphql(instance) as query:
        statuses = check_statuses(query, "acme:support")
        assert statuses["no_orphaned_archives"] == {"succeeded": ["acme:sales"], "failed": ["acme:support"]}
        assert all(statuses[name]["failed"] == [] for name in CHECKS - {"no_orphaned_archives"})
        [latest, earlier] = query(CHECK_EXECUTIONS, check="no_orphaned_archives",
                                  partition="acme:support")["assetCheckExecutions"]
        assert (latest["runId"], latest["status"]) == (orphaned.run_id, "FAILED")
        assert latest["evaluation"]["severity"] == "ERROR"
        assert "1 archived node(s) point at a keeper" in latest["evaluation"]["description"]
        assert ids["absorbed"] in latest["evaluation"]["description"]
        assert earlier["status"] == "SUCCEEDED"


def test_materialize_in_the_ui_runs_a_cycle_tagged_ui_and_checks_again(db, instance):
    """What the asset page's Materialize does: a curation cycle of the partition, whose checks
    see an orphan fixed by hand since the last cycle."""
    ids = _namespace_with_work(db, "support")
    assert run_cycle(instance).success
    db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (ids["keeper"],))
    assert run_cycle(instance).success  # the orphan check fails on this cycle

    with ui_graphql(instance) as query:
        assert check_statuses(query, "acme:support")["no_orphaned_archives"]["failed"] == ["acme:support"]
        db.execute("UPDATE memory_nodes SET archived_at = NULL WHERE id = %s", (ids["keeper"],))
        run_id = materialize(query, "acme:support")
        query.start_queued_run(run_id)
        run = poll_for_finished_run(instance, run_id, timeout=180)
        assert run.status == dg.DagsterRunStatus.SUCCESS
        assert instance.get_run_by_id(run_id).tags[TRIGGER_TAG] == "ui"
        assert materializations(query, "acme:support")[0]["run_id"] == run_id
        assert check_statuses(query, "acme:support")["no_orphaned_archives"]["succeeded"] == ["acme:support"]
    assert cycle_row(db, run_id)["status"] == "success"


def test_materialize_from_the_catalog_runs_the_cycle_as_curate_namespace_does(db, instance, monkeypatch):
    """The catalog's Materialize launches Dagster's implicit asset job, not curate_namespace: it
    must still run the cycle in one process (one namespace lease, no process per step) with the
    step settings in force, here a similarity threshold no pair of this namespace reaches."""
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME

    ids = _namespace_with_work(db, "support")
    instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, ["acme:support"])  # as discovery would
    # No pair exceeds a cosine of 1; the default (0.92) merges this pair (the test above).
    monkeypatch.setenv("CURATOR_SIMILARITY_THRESHOLD", "1.0")
    with ui_graphql(instance) as query:
        run_id = materialize(query, "acme:support", job_name=IMPLICIT_ASSET_JOB)
        query.start_queued_run(run_id)
        run = poll_for_finished_run(instance, run_id, timeout=180)
        assert run.status == dg.DagsterRunStatus.SUCCESS and run.job_name == IMPLICIT_ASSET_JOB
        [event] = [e for e in materializations(query, "acme:support") if e["run_id"] == run_id]
    # The setting in force reached step 2: the pair the default threshold merges stays apart.
    assert event["metadata"]["merged"] == 0
    assert fetch_node(db, ids["absorbed"])["merged_into"] is None
    # One process for every step: no step worker of its own, every step event from one pid.
    records = instance.all_logs(run_id)
    step_events = [r for r in records if r.step_key is not None and r.dagster_event is not None
                   and r.dagster_event.event_type == dg.DagsterEventType.STEP_START]
    assert {r.step_key.split(".")[-1] for r in step_events} == STEP_OPS
    assert not [r for r in records if r.dagster_event is not None
                and r.dagster_event.event_type == dg.DagsterEventType.STEP_WORKER_STARTING]
    assert len({r.dagster_event.pid for r in step_events}) == 1
    # One lease for the whole cycle: one session, so one cycle row whose steps all ran in it.
    assert cycle_row(db, run_id)["status"] == "success"


def test_a_backfill_run_is_tagged_as_one(db, instance):
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME

    _namespace_with_work(db, "support")
    instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, ["acme:support"])
    result = load_defs().resolve_job_def("curate_namespace").execute_in_process(
        partition_key="acme:support", instance=instance, tags={"dagster/backfill": "nightly"})
    assert result.success
    assert instance.get_run_by_id(result.run_id).tags[TRIGGER_TAG] == "backfill"


def test_an_undo_is_an_observation_on_the_partition_it_restored(db, instance):
    ids = _namespace_with_work(db, "support")
    curated = run_cycle(instance)
    assert curated.success and fetch_node(db, ids["absorbed"])["merged_into"] is not None
    from curation_pipeline.defs.definitions import load_defs

    undo = load_defs().resolve_job_def("undo_curation_run").execute_in_process(
        instance=instance, run_config={"ops": {"undo_run_op": {"config": {"run_id": curated.run_id}}}})
    assert undo.success and fetch_node(db, ids["absorbed"])["merged_into"] is None

    with ui_graphql(instance) as query:
        asset = asset_definition(query)
        [observation] = asset["assetObservations"]
        assert (observation["runId"], observation["partition"]) == (undo.run_id, "acme:support")
        assert observation["description"] == f"undo of run {curated.run_id}: success"
        entries = {entry["label"]: entry for entry in observation["metadataEntries"]}
        assert entries["rows_restored"]["intValue"] >= 2 and entries["rows_left_alone"]["intValue"] == 0
        # The namespace's numbers as the undo left them, under the cycle's keys: the plots follow.
        active, archived = db.execute("SELECT count(*) FILTER (WHERE archived_at IS NULL),"
                                      " count(*) FILTER (WHERE archived_at IS NOT NULL) FROM memory_nodes").fetchone()
        assert (entries["active_nodes"]["intValue"], entries["archived_nodes"]["intValue"]) == (active, archived)
        assert (active, archived) == (4, 0)  # the merge undone
        # An observation is not a cycle: the partition's latest materialization is still the cycle's.
        assert materializations(query, "acme:support")[0]["run_id"] == curated.run_id

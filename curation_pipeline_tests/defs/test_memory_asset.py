"""The `memory_namespace` asset as the UI shows it (read through Dagster's GraphQL API): one
materialization per cycle and partition with the namespace's health, and its checks."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.test_utils import poll_for_finished_run

from curation_pipeline.core.health import HEALTH_KEYS
from curation_pipeline.core.health_checks import CHECK_RULES
from curation_pipeline_tests.conftest import (
    cycle_row,
    fetch_node,
    insert,
    node,
    run_cycle,
)
from curation_pipeline_tests.support.ui_graphql import (
    CHECK_EXECUTIONS,
    check_statuses,
    execute_checks,
    materializations,
    ui_graphql,
)

pytestmark = pytest.mark.slow

CHECKS = {rule.name for rule in CHECK_RULES}


def _namespace_with_work(db, namespace: str) -> dict[str, str]:
    keeper, absorbed, pinned, missing = insert(
        db,
        node(namespace=namespace, text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
        node(namespace=namespace, text="Customer Dana Reyes prefers email to phone calls."),
        node(namespace=namespace, text="The deploy pipeline runs on Fridays.", pinned=True),
        node(namespace=namespace, text="No vector yet.", embed=False),
    )
    return {"keeper": keeper, "absorbed": absorbed, "pinned": pinned, "missing": missing}


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
                numbers = {key: event["metadata"][key] for key in HEALTH_KEYS if key in event["metadata"]}
                # Every number but the LLM's acceptance rate (the LLM is off) is plotted.
                assert set(HEALTH_KEYS) - set(numbers) == {"llm_acceptance_rate"}
                assert numbers == {key: value for key, value in recorded.items() if value is not None}
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


def test_the_checks_run_on_their_own_see_an_orphan_fixed_by_hand(db, instance):
    """What "Execute" on the asset's Checks tab does: the latest cycle's checks, orphans afresh."""
    ids = _namespace_with_work(db, "support")
    assert run_cycle(instance).success
    db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (ids["keeper"],))

    with ui_graphql(instance) as query:
        def run_checks() -> dict[str, bool]:
            run_id = execute_checks(query, "acme:support", sorted(CHECKS))
            query.start_queued_run(run_id)
            assert poll_for_finished_run(instance, run_id, timeout=120).status == dg.DagsterRunStatus.SUCCESS
            return {name: query(CHECK_EXECUTIONS, check=name, partition="acme:support")
                    ["assetCheckExecutions"][0]["evaluation"]["success"] for name in CHECKS}

        assert run_checks() == {name: name != "no_orphaned_archives" for name in CHECKS}
        assert check_statuses(query, "acme:support")["no_orphaned_archives"]["failed"] == ["acme:support"]
        db.execute("UPDATE memory_nodes SET archived_at = NULL WHERE id = %s", (ids["keeper"],))
        assert run_checks() == {name: True for name in CHECKS}
        assert check_statuses(query, "acme:support")["no_orphaned_archives"]["succeeded"] == ["acme:support"]

"""What a run's page shows, read through Dagster's GraphQL API as the UI reads it: graph changes,
the cycle table (across a re-execution), a failure's cause, and previews that say so."""

from __future__ import annotations

import json

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.previews import DRY_RUN_TAG, PREVIEW_JOB_NAME
from curation_pipeline_tests.conftest import (
    insert,
    node,
    refuse_vector_writes,
    run_cycle,
)
from curation_pipeline_tests.support.ui_graphql import (
    RUNS_TAGGED,
    materializations,
    output_metadata,
    run_events,
    table_rows,
    ui_graphql,
)

pytestmark = pytest.mark.slow

# The second says the first's fact and one more: the keeper's text changes, and step 4 has to
# embed it again (which a fault can refuse).
DUPLICATES = ("Customer Dana Reyes prefers email over phone calls.",
              "Customer Dana Reyes prefers email over phone calls and texts.")


def _store(db) -> list[str]:
    return insert(db, node(text=DUPLICATES[0], base_utility=0.9), node(text=DUPLICATES[1]),
                  node(text="Never used.", recall_count=0, epoch=0))


def test_the_graph_sync_lists_the_vertices_and_edges_it_wrote(db, instance):
    keeper, absorbed, other = _store(db)
    result = run_cycle(instance)
    assert result.success
    with ui_graphql(instance) as query:
        changes = {(row["node"], row["graph change"].split(":")[0])
                   for row in table_rows(output_metadata(query, result.run_id, "sync_graph")["changes"])}
    assert {(node_id, "created") for node_id in (keeper, absorbed, other)} <= changes
    assert (absorbed, f"edge merged_into → {keeper}") in changes


def test_step_2_shows_the_text_of_every_keeper_even_one_it_left_as_it_was(db, instance):
    # Two pairs: one keeper says its absorbed node's fact already (left as it was), the other
    # takes one more clause (rewritten).
    kept, absorbed_kept = insert(db, node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
                                 node(text="Customer Dana Reyes prefers email to phone calls."))
    grown, absorbed_grown = insert(db, node(text="The nightly backup of the billing database runs at 02:00 UTC.",
                                            base_utility=0.9),
                                   node(text="The nightly backup of the billing database runs at 02:00 UTC and takes an hour."))
    result = run_cycle(instance, run_config={"ops": {"memory_namespace": {"ops": {
        "consolidate_duplicates": {"config": {"max_archive_fraction": 1.0}}}}}})
    assert result.success
    with ui_graphql(instance) as query:
        rows = {row["keeper"]: row for row in table_rows(output_metadata(query, result.run_id,
                                                                          "consolidate_duplicates")["changes"])}
    assert set(rows) == {kept, grown}, rows
    assert rows[kept]["keeper's text before"] == "Customer Dana Reyes prefers email over phone calls."
    assert rows[grown]["keeper's text before"] == "The nightly backup of the billing database runs at 02:00 UTC."
    assert not [row for row in rows.values() if row["keeper's text before"].startswith("(not rewritten")]


def _reconstructable_job():
    return ReconstructableRepository.for_module(
        "curation_pipeline.defs.definitions", "defs").get_reconstructable_job(JOB_NAME)


def test_a_reexecuted_run_shows_the_whole_cycle_and_a_failure_shows_its_cause(db, instance):
    _store(db)
    key = partition_key("acme", "support")
    instance.add_dynamic_partitions("namespaces", [key])
    with refuse_vector_writes(db), dg.execute_job(_reconstructable_job(), instance,
                                                  tags={"dagster/partition": key}) as failed:
        assert not failed.success
        parent = failed.run_id
    with dg.execute_job(_reconstructable_job(), instance, tags={"dagster/partition": key},
                        reexecution_options=dg.ReexecutionOptions.from_failure(parent, instance)) as retried:
        assert retried.success
        child = retried.run_id

    with ui_graphql(instance) as query:
        [failure] = [e for e in run_events(query, parent) if e["__typename"] == "ExecutionStepFailureEvent"]
        first_line = failure["error"]["message"].splitlines()[0]
        assert "revectorize failed" in first_line and "vector writes are refused" in first_line

        step7 = output_metadata(query, child, "log_curation_activity")
        table = step7["counts"]["table"]
        assert [c["name"] for c in table["schema"]["columns"]] == ["step", "status", "run", "result", "counts"]
        rows = {row["step"]: row for row in map(json.loads, table["records"])}
        assert list(rows) == ["1 reclassify_stale", "2 consolidate_duplicates", "3 summarize_verbose",
                              "4 revectorize", "5 mark_stale_confidence", "6 sync_graph", "6b associate_concepts"]
        assert all(row["status"] == "succeeded" for row in rows.values())
        assert rows["2 consolidate_duplicates"]["run"] == parent
        assert rows["2 consolidate_duplicates"]["result"] == "merged: 1"
        assert rows["4 revectorize"]["run"] == f"{child} (this run)"
        assert step7["outcome"]["text"].startswith(f"success over 2 runs (first {parent}, last {child})")

        # The asset's event for the cycle carries the combined numbers of both runs.
        [event] = materializations(query, key)
        assert event["run_id"] == child
        assert event["metadata"]["merged"] == 1 and event["metadata"]["cycle_runs"] == f"{parent}, {child}"


def test_a_preview_is_tagged_says_so_first_and_stays_off_the_asset(db, instance):
    keeper, absorbed, _ = _store(db)
    preview = run_cycle(instance, job_name=PREVIEW_JOB_NAME)
    assert preview.success
    with ui_graphql(instance) as query:
        tagged = query(RUNS_TAGGED, key=DRY_RUN_TAG, value="true")["runsOrError"]["results"]
        assert [(run["runId"], run["jobName"]) for run in tagged] == [(preview.run_id, PREVIEW_JOB_NAME)]

        events = run_events(query, preview.run_id)
        messages = [e for e in events if e["__typename"] == "LogMessageEvent"]
        first_step = next(i for i, e in enumerate(events) if e["__typename"] == "ExecutionStepStartEvent")
        assert messages[0]["message"].startswith("preview, nothing written")
        assert events.index(messages[0]) < first_step

        for step in ("consolidate_duplicates", "log_curation_activity"):
            metadata = output_metadata(query, preview.run_id, step)
            assert metadata["preview"]["text"] == "preview, nothing written"
            assert metadata["dry_run"]["boolValue"] is True
        [merge] = table_rows(output_metadata(query, preview.run_id, "consolidate_duplicates")["changes"])
        assert (merge["keeper"], merge["absorbed"]) == (keeper, absorbed)
        assert materializations(query, "acme:support") == []
    assert db.execute("SELECT archived_at FROM memory_nodes WHERE merged_into = %s", (keeper,)).fetchall() == []

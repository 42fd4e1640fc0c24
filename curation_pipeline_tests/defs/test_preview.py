"""Dry runs: plan every step, write nothing but one preview row, and predict the real run."""

from __future__ import annotations

from datetime import timedelta

import pytest

from curation_pipeline.defs.previews import DRY_RUN_TAG, PREVIEW_JOB_NAME
from curation_pipeline.store.activity import preview_metadata
from curation_pipeline.store.revisions import run_changes, run_signals
from curation_pipeline_tests.conftest import (
    NOW,
    cycle_row,
    insert,
    node,
    refuse_vector_writes,
    run_cycle,
)

pytestmark = pytest.mark.slow

VERBOSE = ("Customer Dana Reyes prefers email over phone calls and wants every invoice in EUR. " * 8).strip()


def _everything(db) -> dict:
    tables = ("memory_nodes", "training_signals", "graph_vertices", "graph_edges", "node_revisions",
              "graph_revisions", "signal_revisions", "namespace_activity")
    return {
        table: db.execute(f"SELECT to_jsonb(t) FROM {table} t ORDER BY 1::text").fetchall()
        for table in tables
    } | {"activity": db.execute("SELECT action, run_id FROM activity_log ORDER BY id").fetchall()}


def _comparable(changes: list[dict]) -> list[tuple]:
    """A change as (node, step, column -> new value), timestamps reduced to set/unset."""
    out = []
    for change in changes:
        diff = {
            column: (value if column != "archived_at" else value is not None)
            for column, value in change["after"].items()
            if change["before"].get(column) != value and column not in ("row_version", "updated_at")
        }
        out.append((change["node_id"], change["step"], tuple(sorted(diff.items()))))
    return sorted(out)


def _store_with_work_for_every_step(db):
    insert(
        db,
        node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
        # Says the keeper's fact and one more: the merged text is this one, and is re-embedded.
        node(text="Customer Dana Reyes prefers email over phone calls and texts."),
        node(text=VERBOSE, recall_count=0),
        node(text="Never recalled, long ago.", recall_count=0, epoch=0),
        node(text="Not recalled for two months.", last_recalled_at=NOW - timedelta(days=60)),
        node(text="No vector yet.", embed=False),
    )
    db.execute("UPDATE namespace_activity SET current_epoch = 500")


def test_a_dry_run_writes_nothing_but_a_preview_and_the_real_run_does_exactly_that(db, instance):
    _store_with_work_for_every_step(db)
    before = _everything(db)

    preview_run = run_cycle(instance, job_name=PREVIEW_JOB_NAME)
    assert preview_run.success
    after_preview = _everything(db)
    assert after_preview.pop("activity") == [("curation_preview", preview_run.run_id)]
    before.pop("activity")
    assert after_preview == before  # no node, signal, graph, revision or bookkeeping change

    preview = preview_metadata(db, preview_run.run_id, "acme", "support")
    assert preview["preview"] is True and preview["status"] == "success"
    steps = {step for step, counts in preview["steps"].items() if any(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 and k not in ("candidates", "nodes_compared")
        for k, v in counts.items())}
    assert steps >= {"reclassify_stale", "consolidate_duplicates", "summarize_verbose", "revectorize",
                     "mark_stale_confidence", "sync_graph"}
    # Steps saw each other's work: the merged keeper is re-embedded in the same preview.
    assert preview["steps"]["revectorize"]["embedded"] >= 3

    real = run_cycle(instance)
    assert real.success
    assert _comparable(run_changes(db, real.run_id)) == _comparable(preview["changes"])
    assert run_signals(db, real.run_id) == preview["signals"]
    real_steps = cycle_row(db, real.run_id)["steps"]
    assert {s: c for s, c in real_steps.items()} == {s: c for s, c in preview["steps"].items()}


def test_the_preview_is_shown_in_dagster_and_on_the_command_line(db, instance, capsys):
    _store_with_work_for_every_step(db)
    result = run_cycle(instance, job_name=PREVIEW_JOB_NAME)
    metadata = {
        e.node_name: e.event_specific_data.metadata
        for e in result.all_events if e.is_successful_output
    }

    def rows(step: str, key: str = "changes") -> list[dict]:
        return [record.data for record in metadata[step][key].records]

    [merge] = rows("consolidate_duplicates")
    assert merge["similarity"].startswith("0.95")
    assert "Customer Dana Reyes prefers email over phone calls and texts." in (
        merge["keeper's text before"] + merge["absorbed text"])
    assert "pointer_summary" in {row["column"] for row in rows("summarize_verbose")}
    assert {(row["column"], row["before"], row["after"]) for row in rows("mark_stale_confidence")} == {
        ("confidence", "default", "stale")}
    assert metadata["consolidate_duplicates"]["dry_run"].value is True

    from curation_pipeline.core.render.changes import preview_text
    from curation_pipeline.service.steps.registry import STEPS

    text = preview_text("acme:support", preview_metadata(db, result.run_id, "acme", "support"), STEPS)
    assert "merge " in text and "summarize " in text and "mark stale " in text
    assert "signal reclassify_pending for" in text and "embed " in text


def test_a_failed_step_in_a_dry_run_is_part_of_the_preview_and_nothing_is_written(db, instance):
    _store_with_work_for_every_step(db)
    before = _everything(db)
    with refuse_vector_writes(db):
        result = run_cycle(instance, job_name=PREVIEW_JOB_NAME)
    assert not result.success
    preview = preview_metadata(db, result.run_id, "acme", "support")
    assert preview["status"] == "partial" and preview["failed_steps"] == ["revectorize"]
    assert preview["steps"]["consolidate_duplicates"]["pairs_merged"] == 1
    after = _everything(db)
    assert after.pop("activity") == [("curation_preview", result.run_id)]
    before.pop("activity")
    assert after == before


def test_a_preview_tag_on_another_job_fails_instead_of_writing(db, instance):
    from curation_pipeline.defs.definitions import load_defs

    _store_with_work_for_every_step(db)
    real = run_cycle(instance)
    before = _everything(db)
    for job, kwargs in (
        ("undo_curation_run", {"run_config": {"ops": {"undo_run_op": {"config": {"run_id": real.run_id}}}}}),
        ("curate_namespace", {"partition_key": "acme:support"}),
    ):
        result = load_defs().resolve_job_def(job).execute_in_process(
            tags={DRY_RUN_TAG: "true"}, instance=instance, raise_on_error=False, **kwargs,
        )
        assert not result.success, job
        errors = [e.event_specific_data.error.to_string() for e in result.all_events if e.is_failure]
        assert errors and all(PREVIEW_JOB_NAME in error for error in errors), job
    after = _everything(db)
    after.pop("activity"), before.pop("activity")
    assert after == before

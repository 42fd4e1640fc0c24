"""A run that loses its namespace's lease mid-run stops writing: the run that takes the
namespace over is the only one whose changes land from then on (store/locking.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

import curation_pipeline.defs.ops
from curation_pipeline.defs.previews import PREVIEW_JOB_NAME
from curation_pipeline_tests.conftest import NOW, cycle_row, insert, node, run_cycle
from curation_pipeline_tests.support.lease_faults import kill_lease_connection

pytestmark = pytest.mark.slow

VERBOSE = ("The onboarding call with Initech covered SSO setup, billing contacts and data "
           "retention. " * 7).strip()


def _corpus() -> list[dict]:
    """Work for every step, so that each step of a run would write if it were let."""
    return [
        node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
        node(text="Customer Dana Reyes prefers email to phone calls.", recall_count=0, epoch=0),
        node(text=VERBOSE, recall_count=0),
        node(text="Old fact.", last_recalled_at=NOW - timedelta(days=60)),
        node(text="Waiting for its vector.", embed=False),
    ]


def _errors(result) -> list[str]:
    return [
        event.event_specific_data.error.to_string() for event in result.all_events
        if event.is_step_failure
    ]


def _steps(result, event_type: str) -> set[str]:
    return {event.node_name for event in result.all_events if event.event_type_value == event_type}


def test_a_run_whose_lease_was_taken_over_writes_nothing_more(db, instance, monkeypatch):
    insert(db, *_corpus())
    db.execute("UPDATE namespace_activity SET current_epoch = 500")
    real_run_step = curation_pipeline.defs.ops.run_step
    takeover = {}

    def lose_the_lease_after_the_first_step(run, work):
        outcome = real_run_step(run, work)
        if not takeover:
            # Between two steps of the first run its lease connection dies, and a second run of
            # the same namespace starts and curates it whole.
            takeover["after"] = run.scope.step
            kill_lease_connection(db, "acme", "support")
            takeover["revision"] = db.execute("SELECT coalesce(max(id), 0) FROM node_revisions").fetchone()[0]
            takeover["second"] = run_cycle(instance)
        return outcome

    monkeypatch.setattr(curation_pipeline.defs.ops, "run_step", lose_the_lease_after_the_first_step)
    first = run_cycle(instance)
    second = takeover["second"]

    assert second.success
    assert not first.success
    # The first run did its first step, then every step it still started failed saying why.
    assert _steps(first, "STEP_SUCCESS") == {takeover["after"]}
    failed = _steps(first, "STEP_FAILURE")
    assert failed, "the first run must have tried to go on"
    errors = _errors(first)
    assert len(errors) == len(failed)
    assert all(
        f"run {first.run_id} lost its lease on namespace acme:support: another run "
        f"(run {second.run_id}) took the namespace over" in error
        for error in errors
    ), errors
    # After the takeover only the second run's changes landed; the first changed no memory, its
    # own cycle row says which steps failed and why, and the namespace counts as curated by the
    # second run.
    later = db.execute(
        "SELECT DISTINCT run_id FROM node_revisions WHERE id > %s", (takeover["revision"],)
    ).fetchall()
    assert later == [(second.run_id,)]
    first_cycle = cycle_row(db, first.run_id)
    assert first_cycle["status"] == "partial"
    assert first_cycle["steps"][takeover["after"]]["status"] == "succeeded"
    assert set(first_cycle["failed_steps"]) == failed
    assert all("lost its lease" in error for error in first_cycle["errors"].values())
    assert cycle_row(db, second.run_id)["status"] == "success"
    assert db.execute("SELECT last_curation_run_id FROM namespace_activity").fetchone()[0] == second.run_id
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL").fetchone()[0] == 1


def test_a_dry_run_whose_lease_was_lost_fails_and_records_no_preview(db, instance, monkeypatch):
    insert(db, *_corpus())
    real_run_step = curation_pipeline.defs.ops.run_step
    killed = []

    def lose_the_lease_after_the_first_step(run, work):
        outcome = real_run_step(run, work)
        if not killed:
            killed.append(kill_lease_connection(db, "acme", "support"))
        return outcome

    monkeypatch.setattr(curation_pipeline.defs.ops, "run_step", lose_the_lease_after_the_first_step)
    preview = run_cycle(instance, job_name=PREVIEW_JOB_NAME)

    assert not preview.success
    assert _steps(preview, "STEP_FAILURE")
    assert all("the connection holding it was closed or killed" in error for error in _errors(preview))
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] == 0
    assert db.execute(
        "SELECT count(*) FROM activity_log WHERE action IN ('curation_preview', 'curation_cycle')"
    ).fetchone()[0] == 0

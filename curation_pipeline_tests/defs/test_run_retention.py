"""Run history stays bounded (defs/run_retention.py): old runs are deleted, the runs a younger
failure's re-execution needs stay, undo still works on a deleted run, and the UI says the run is
gone. Real runs of the job on the embedded store; "old" is a cut-off between two moments of the
test (the retention takes any age; the command line and the schedule take it in days)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.run_retention import prune_run_history
from curation_pipeline.service.undo import undo_run
from curation_pipeline_tests.conftest import fetch_node, insert, node, refuse_vector_writes, run_cycle
from curation_pipeline_tests.support.ui_graphql import ui_graphql

pytestmark = pytest.mark.slow

RUN_OR_ERROR = "query Run($runId: ID!) { pipelineRunOrError(runId: $runId) { __typename ... on RunNotFoundError { message } } }"


def _job():
    return ReconstructableRepository.for_module("curation_pipeline.defs.definitions", "defs").get_reconstructable_job(JOB_NAME)


def test_old_runs_go_but_a_young_failures_lineage_and_every_revision_stay(db, instance, database_url):
    keeper, absorbed = insert(db, node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
                              node(text="Customer Dana Reyes prefers email to phone calls."))
    key = partition_key("acme", "support")
    old_success = run_cycle(instance)  # merges the pair
    assert old_success.success and fetch_node(db, absorbed)["archived_at"] is not None
    revisions = db.execute("SELECT count(*) FROM node_revisions WHERE run_id = %s", (old_success.run_id,)).fetchone()[0]
    assert revisions > 0
    insert(db, node(text="A note without a vector.", embed=False))
    with refuse_vector_writes(db):
        with dg.execute_job(_job(), instance, tags={"dagster/partition": key}) as failed:
            assert not failed.success
            old_failure = failed.run_id
        time.sleep(1.0)
        cutoff = datetime.now(UTC)
        time.sleep(1.0)
        with dg.execute_job(_job(), instance, tags={"dagster/partition": key},
                            reexecution_options=dg.ReexecutionOptions.from_failure(old_failure, instance)) as retried:
            assert not retried.success  # still refused: a young failure, child of an old one
            young_failure = retried.run_id
    young_success = run_cycle(instance, namespace="other")
    older_than = datetime.now(UTC) - cutoff

    dry = prune_run_history(instance, older_than=older_than, dry_run=True)
    assert dry.deleted == [old_success.run_id] and dry.kept_for_reexecution == [old_failure]
    assert instance.get_run_by_id(old_success.run_id) is not None  # a dry run deletes nothing

    report = prune_run_history(instance, older_than=older_than)
    assert report.deleted == [old_success.run_id] and report.kept_for_reexecution == [old_failure]
    assert instance.get_run_by_id(old_success.run_id) is None
    assert all(instance.get_run_by_id(run_id) for run_id in (old_failure, young_failure, young_success.run_id))
    # The store keeps every revision of the deleted run...
    assert db.execute("SELECT count(*) FROM node_revisions WHERE run_id = %s",
                      (old_success.run_id,)).fetchone()[0] == revisions
    with ui_graphql(instance) as query:
        answer = query(RUN_OR_ERROR, runId=old_success.run_id)["pipelineRunOrError"]
    # ...and the UI's run page shows "No run found" for this answer.
    assert answer["__typename"] == "RunNotFoundError"
    # The young failure is re-executed from failure: its old parent is still there.
    with dg.execute_job(_job(), instance, tags={"dagster/partition": key},
                        reexecution_options=dg.ReexecutionOptions.from_failure(young_failure, instance)) as finished:
        assert finished.success
    # Undo works on the deleted run: it reads the store, not Dagster.
    undo_run(database_url, old_success.run_id, force=True)
    assert fetch_node(db, absorbed)["archived_at"] is None and fetch_node(db, keeper)["archived_at"] is None

"""The shipped instance's automatic retries: a step's own failure is not retried (it would fail
again the same way, a second red run for one fault), a run whose process died is.

Dagster decides when the run's failure is stored and writes it as the `dagster/will_retry` tag,
which the daemon then acts on; so the shipped `run_retries` section is tested on that tag."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.definitions.reconstruct import ReconstructableRepository
from dagster._core.events import JobFailureData, RunFailureReason

from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline_tests.conftest import insert, node, refuse_vector_writes

pytestmark = pytest.mark.slow

SHIPPED = Path(__file__).resolve().parents[2] / "curation_pipeline" / "instance" / "dagster.yaml"
WILL_RETRY = "dagster/will_retry"


def _shipped_instance():
    run_retries = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))["run_retries"]
    return dg.instance_for_test(overrides={"run_retries": run_retries})


def _job():
    return ReconstructableRepository.for_module("curation_pipeline.defs.definitions", "defs").get_reconstructable_job(JOB_NAME)


def test_a_step_that_fails_is_not_retried_automatically(db):
    insert(db, node(text="Invoices for Orbital Foods go to ap@orbital.example.", embed=False))
    key = partition_key("acme", "support")
    with _shipped_instance() as instance:
        instance.add_dynamic_partitions("namespaces", [key])
        with refuse_vector_writes(db), dg.execute_job(_job(), instance, tags={"dagster/partition": key}) as failed:
            assert not failed.success
        run = instance.get_run_by_id(failed.run_id)
        assert run.tags["dagster/failure_reason"] == RunFailureReason.STEP_FAILURE.value
        assert run.tags[WILL_RETRY] == "false"


def test_a_run_whose_process_died_is_retried_once(db):
    key = partition_key("acme", "support")
    with _shipped_instance() as instance:
        instance.add_dynamic_partitions("namespaces", [key])
        job = _job().get_definition()
        run = instance.create_run_for_job(job, tags={"dagster/partition": key})
        instance.report_run_failed(run, "the run worker was killed", job_failure_data=JobFailureData(
            error=None, failure_reason=RunFailureReason.UNEXPECTED_TERMINATION))
        assert instance.get_run_by_id(run.run_id).tags[WILL_RETRY] == "true"
        # What `curation-pipeline run` prints of it: Dagster's reason, and that a retry follows.
        from curation_pipeline.cli.runner import run_end

        message, will_retry = run_end(instance, run.run_id)
        assert "the run worker was killed" in message and will_retry


def test_the_retry_of_a_cli_run_is_tagged_retry_with_its_parent(db):
    """The daemon's retry copies the failed run's tags, `curation/trigger=cli` included: its
    first step says who really started it."""
    insert(db, node(text="Invoices for Orbital Foods go to ap@orbital.example."))
    key = partition_key("acme", "support")
    with _shipped_instance() as instance:
        instance.add_dynamic_partitions("namespaces", [key])
        parent = instance.create_run_for_job(_job().get_definition(), tags={"dagster/partition": key})
        copied = {"dagster/partition": key, "curation/trigger": "cli", "dagster/retry_number": "1",
                  "dagster/parent_run_id": parent.run_id, "dagster/root_run_id": parent.run_id}
        with dg.execute_job(_job(), instance, tags=copied) as retried:
            assert retried.success
        tags = instance.get_run_by_id(retried.run_id).tags
        assert (tags["curation/trigger"], tags["curation/retry_of"]) == ("retry", parent.run_id)

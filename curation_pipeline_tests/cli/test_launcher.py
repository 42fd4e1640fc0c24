"""Runs started from the CLI must look exactly like runs launched from the Dagster UI.

This leans on dagster internals (see launcher.py): if a dagster upgrade breaks them, this test
is the one that says so.
"""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.storage.tags import PARTITION_SET_TAG, REPOSITORY_LABEL_TAG

from curation_pipeline.cli.launcher import LOCATION_NAME, code_location_workspace
from curation_pipeline.cli.runner import run_partitions
from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline_tests.conftest import cycle_row, insert, node

pytestmark = pytest.mark.slow


def test_cli_runs_show_in_the_ui_partition_status_with_the_origin_the_ui_reexecutes_from(db, dagster_home):
    insert(db, node(text="Something the agent learned.", embed=False))
    key = partition_key("acme", "support")

    [result] = run_partitions(load_settings(), [key, key])  # named twice, curated once

    assert result.run_status == "SUCCESS"
    assert cycle_row(db, result.run_id)["steps"]["revectorize"]["embedded"] == 1
    assert (dagster_home / "dagster.yaml").exists()
    with dg.DagsterInstance.get() as instance:
        # Stored in the Postgres-backed instance, not a throwaway one.
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        run = instance.get_run_by_id(result.run_id)
        assert run.tags["dagster/partition"] == key
        # The UI can only re-execute runs created from the code location.
        assert run.remote_job_origin is not None
        assert run.remote_job_origin.location_name == LOCATION_NAME
        with code_location_workspace(instance) as workspace:
            location = workspace.get_code_location(LOCATION_NAME)
            repository = next(iter(location.get_repositories().values()))
            [partition_set] = [
                ps for ps in repository.get_partition_sets() if ps.job_name == JOB_NAME
            ]
            label = repository.handle.get_remote_origin().get_label()
        # The same query the UI's partition status makes.
        partition_data = instance.run_storage.get_run_partition_data(
            dg.RunsFilter(tags={PARTITION_SET_TAG: partition_set.name, REPOSITORY_LABEL_TAG: label})
        )
        # (Dagster's storage is shared by the session's tests: other tests' partitions are there too.)
        assert [(p.partition, p.status) for p in partition_data if p.partition == key] == [
            (key, dg.DagsterRunStatus.SUCCESS)]
        assert key in instance.get_dynamic_partitions("namespaces")

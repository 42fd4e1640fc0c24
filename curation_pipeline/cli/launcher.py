"""Launch partition runs from Python exactly as the Dagster UI would.

Runs made by `execute_job` / `execute_in_process` don't show in the UI's partition status and
can't be re-executed from the UI: the UI reads the partition-set tags and needs a run created
from the code location (a remote job origin). This module loads the code location the way the
UI does, creates the run with the tags the location computes for the partition, and launches it
directly (like `dagster job launch`, skipping the queue that would otherwise wait for a daemon).

It uses `dagster._core` internals, which is why dagster is pinned; test_launcher.py fails loudly
if an upgrade breaks this.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import dagster as dg
import psutil
from dagster._core.remote_representation.external_data import PartitionTagsSnap
from dagster._core.storage.tags import PARTITION_SET_TAG, REPOSITORY_LABEL_TAG
from dagster._core.workspace.context import (
    WorkspaceProcessContext,
    WorkspaceRequestContext,
)
from dagster._core.workspace.load_target import ModuleTarget

from curation_pipeline.defs.job import JOB_NAME

LOCATION_NAME = "curation_pipeline"  # must match workspace.yaml, or the UI sees another location
DEFINITIONS_MODULE = "curation_pipeline.defs.definitions"


@contextmanager
def code_location_workspace(instance: dg.DagsterInstance) -> Iterator[WorkspaceRequestContext]:
    target = ModuleTarget(
        module_name=DEFINITIONS_MODULE, attribute=None, working_directory=None,
        location_name=LOCATION_NAME,
    )
    before = {child.pid for child in psutil.Process().children(recursive=True)}
    try:
        with WorkspaceProcessContext(
            instance, target, code_server_log_level="WARNING"
        ) as process_context:
            workspace = process_context.create_request_context()
            error = workspace.get_code_location_error(LOCATION_NAME)
            if error:
                raise RuntimeError(f"the code location failed to load: {error.to_string()}")
            yield workspace
    finally:
        _wait_for_child_processes(before)


def _wait_for_child_processes(before: set[int], timeout_s: float = 20.0) -> None:
    """Let the code server we started shut down before this process goes on.

    Leaving it behind would keep it polling Dagster's storage after the embedded Postgres
    (whose last handle may be this process) has stopped. Only the processes started meanwhile:
    others this process runs (a daemon, workers) are not ours to stop.
    """
    children = [child for child in psutil.Process().children(recursive=True) if child.pid not in before]
    _, alive = psutil.wait_procs(children, timeout=timeout_s)
    for process in alive:
        process.terminate()


def launch_partition_runs(
    instance: dg.DagsterInstance,
    workspace: WorkspaceRequestContext,
    partition_keys: Sequence[str],
    *,
    run_config: Mapping | None = None,
    tags: Mapping[str, str] | None = None,
    job_name: str = JOB_NAME,
    queued: bool = False,
) -> list[str]:
    """Create and launch one run of the curation job (or `job_name`, e.g. the preview job) per
    partition key; returns the run ids. `queued`: submit them to the run queue instead, as the
    UI's Launch button does (the daemon dequeues them within the queue's limits)."""
    location = workspace.get_code_location(LOCATION_NAME)
    repository = next(iter(location.get_repositories().values()))
    remote_job = repository.get_full_job(job_name)
    partition_set = next(
        ps for ps in repository.get_partition_sets() if ps.job_name == job_name
    )
    execution_plan = location.get_execution_plan(
        remote_job, dict(run_config or {}), step_keys_to_execute=None, known_state=None,
        instance=instance,
    ).execution_plan_snapshot
    run_ids = []
    for key in partition_keys:
        partition_tags = location.get_partition_tags_from_repo(
            repository.handle, job_name, key, instance
        )
        if not isinstance(partition_tags, PartitionTagsSnap):
            raise RuntimeError(f"cannot compute tags for partition {key!r}: {partition_tags.error}")
        run_tags = {
            **remote_job.tags,
            **partition_tags.tags,
            PARTITION_SET_TAG: partition_set.name,
            REPOSITORY_LABEL_TAG: f"{repository.name}@{location.name}",
            **(tags or {}),
        }
        run = instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config=dict(run_config or {}),
            resolved_op_selection=None,
            step_keys_to_execute=execution_plan.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags=run_tags,
            job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=execution_plan,
            parent_job_snapshot=remote_job.parent_job_snapshot,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=repository.asset_graph,
        )
        if queued:
            instance.submit_run(run.run_id, workspace)
        else:
            instance.launch_run(run.run_id, workspace)
        run_ids.append(run.run_id)
    return run_ids

"""Launch partition runs from Python exactly as the Dagster UI would.

Runs made by `execute_job` / `execute_in_process` don't show in the UI's partition status and
can't be re-executed from the UI: the UI reads the partition-set tags and needs a run created
from the code location (a remote job origin). This module loads the code location the way the
UI does, creates the run with the tags the location computes for the partition, and launches it
directly (like `dagster job launch`, skipping the queue that would otherwise wait for a daemon).

The code server is started here, in a session of its own, rather than by Dagster (which would
start it in ours): the terminal's Ctrl-C goes to the whole foreground process group, and would
otherwise interrupt the code server and every run it launched at once, whatever the command
decides to do about it (cli/runner.py lets the runs in flight finish, or cancels them itself).
A heartbeat keeps the server alive while this process is; if this process dies, the server
stops once its runs have finished.

It uses `dagster._core` internals, which is why dagster is pinned; test_launcher.py fails loudly
if an upgrade breaks this.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import psutil
from dagster._core.remote_representation.external_data import PartitionTagsSnap
from dagster._core.storage.tags import PARTITION_SET_TAG, REPOSITORY_LABEL_TAG
from dagster._core.workspace.context import (
    WorkspaceProcessContext,
    WorkspaceRequestContext,
)
from dagster._core.workspace.load_target import GrpcServerTarget
from dagster._grpc.client import DagsterGrpcClient
from dagster._grpc.server import wait_for_grpc_server
from dagster._serdes import serialize_value

from curation_pipeline.config.steps import StepSettings
from curation_pipeline.defs.job import JOB_NAME, with_step_defaults

LOCATION_NAME = "curation_pipeline"  # must match workspace.yaml, or the UI sees another location
DEFINITIONS_MODULE = "curation_pipeline.defs.definitions"


HEARTBEAT_TIMEOUT_S = 60  # the code server outlives a dead launcher by this long (plus its runs)
_HEARTBEAT_EVERY_S = 5
_STARTUP_TIMEOUT_S = 120


@contextmanager
def code_location_workspace(instance: dg.DagsterInstance) -> Iterator[WorkspaceRequestContext]:
    before = {child.pid for child in psutil.Process().children(recursive=True)}
    try:
        with _code_server(instance) as socket, WorkspaceProcessContext(
            instance, GrpcServerTarget(host="localhost", port=None, socket=socket, location_name=LOCATION_NAME),
        ) as process_context:
            workspace = process_context.create_request_context()
            error = workspace.get_code_location_error(LOCATION_NAME)
            if error:
                raise RuntimeError(f"the code location failed to load: {error.to_string()}")
            yield workspace
    finally:
        _wait_for_child_processes(before)


@contextmanager
def _code_server(instance: dg.DagsterInstance) -> Iterator[str]:
    """`dagster api grpc` for the definitions, in a new session, on a unix socket; yields the
    socket's path. The arguments are those Dagster gives the code servers it starts itself."""
    with tempfile.TemporaryDirectory(prefix="curation-code-") as directory:
        socket = str(Path(directory) / "grpc.sock")
        command = [
            sys.executable, "-m", "dagster", "api", "grpc", "--socket", socket,
            "--module-name", DEFINITIONS_MODULE, "--location-name", LOCATION_NAME,
            "--heartbeat", "--heartbeat-timeout", str(HEARTBEAT_TIMEOUT_S), "--log-level", "WARNING",
            "--inject-env-vars-from-instance", "--instance-ref", serialize_value(instance.get_ref()),
        ]
        server = subprocess.Popen(command, start_new_session=True)
        client = DagsterGrpcClient(socket=socket, host="localhost")
        stop = threading.Event()
        beating = threading.Thread(target=_heartbeat, args=(client, server, stop), daemon=True,
                                   name="code-server-heartbeat")
        try:
            try:
                wait_for_grpc_server(server, client, command, timeout=_STARTUP_TIMEOUT_S)
            except Exception:  # noqa: BLE001 - its message repeats the whole command line
                raise RuntimeError(
                    "the code location failed to load: its code server "
                    + ("stopped (its error is above)" if server.poll() is not None
                       else f"did not answer within {_STARTUP_TIMEOUT_S} s")
                ) from None
            beating.start()
            yield socket
        finally:
            stop.set()
            if beating.is_alive():
                beating.join()
            if server.poll() is None:
                try:
                    client.shutdown_server()  # it stops once the runs it launched have finished
                except Exception:  # noqa: BLE001 - already gone, or unreachable: terminate it below
                    server.terminate()


def _heartbeat(client: DagsterGrpcClient, server: subprocess.Popen, stop: threading.Event) -> None:
    while not stop.wait(_HEARTBEAT_EVERY_S) and server.poll() is None:
        try:
            client.heartbeat("curation-pipeline")
        except Exception:  # noqa: BLE001 - a missed beat is retried; the server waits a minute
            pass


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
    launcher = PartitionRunLauncher(instance, workspace, run_config=run_config, tags=tags, job_name=job_name)
    return [launcher.launch(key, queued=queued) for key in partition_keys]


class PartitionRunLauncher:
    """Launches runs of one job, one partition each, with one run config and tags. What does not
    depend on the partition (the job, its partition set, its execution plan: a call to the code
    server each, seconds on a busy machine) is asked once, not once per run, so runs launched
    one after another start promptly."""

    def __init__(self, instance: dg.DagsterInstance, workspace: WorkspaceRequestContext, *,
                 run_config: Mapping | None = None, tags: Mapping[str, str] | None = None,
                 job_name: str = JOB_NAME) -> None:
        # Partial run config is completed with the step settings in force (Dagster would use
        # only what is given: defs/job.py, with_step_defaults).
        self.run_config = with_step_defaults(StepSettings.from_environment(), run_config)
        self.instance, self.workspace, self.tags, self.job_name = instance, workspace, dict(tags or {}), job_name
        self.location = workspace.get_code_location(LOCATION_NAME)
        self.repository = next(iter(self.location.get_repositories().values()))
        self.remote_job = self.repository.get_full_job(job_name)
        self.partition_set = next(ps for ps in self.repository.get_partition_sets() if ps.job_name == job_name)
        self.execution_plan = self.location.get_execution_plan(
            self.remote_job, dict(self.run_config), step_keys_to_execute=None, known_state=None,
            instance=instance,
        ).execution_plan_snapshot

    def launch(self, key: str, *, queued: bool = False) -> str:
        """Create the run of partition `key` and launch it (or queue it); its run id."""
        partition_tags = self.location.get_partition_tags_from_repo(
            self.repository.handle, self.job_name, key, self.instance
        )
        if not isinstance(partition_tags, PartitionTagsSnap):
            raise RuntimeError(f"cannot compute tags for partition {key!r}: {partition_tags.error}")
        run_tags = {
            **self.remote_job.tags,
            **partition_tags.tags,
            PARTITION_SET_TAG: self.partition_set.name,
            REPOSITORY_LABEL_TAG: f"{self.repository.name}@{self.location.name}",
            **self.tags,
        }
        run = self.instance.create_run(
            job_name=self.job_name,
            run_id=None,
            run_config=dict(self.run_config),
            resolved_op_selection=None,
            step_keys_to_execute=self.execution_plan.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags=run_tags,
            job_snapshot=self.remote_job.job_snapshot,
            execution_plan_snapshot=self.execution_plan,
            parent_job_snapshot=self.remote_job.parent_job_snapshot,
            remote_job_origin=self.remote_job.get_remote_origin(),
            job_code_origin=self.remote_job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=self.repository.asset_graph,
        )
        if queued:
            self.instance.submit_run(run.run_id, self.workspace)
        else:
            self.instance.launch_run(run.run_id, self.workspace)
        return run.run_id


def launch_job_run(
    instance: dg.DagsterInstance,
    workspace: WorkspaceRequestContext,
    job_name: str,
    *,
    run_config: Mapping | None = None,
    tags: Mapping[str, str] | None = None,
) -> str:
    """Create and launch one run of an unpartitioned job (the undo job) as the UI's launchpad
    would; returns its run id."""
    location = workspace.get_code_location(LOCATION_NAME)
    repository = next(iter(location.get_repositories().values()))
    remote_job = repository.get_full_job(job_name)
    execution_plan = location.get_execution_plan(
        remote_job, dict(run_config or {}), step_keys_to_execute=None, known_state=None,
        instance=instance,
    ).execution_plan_snapshot
    run = instance.create_run(
        job_name=job_name, run_id=None, run_config=dict(run_config or {}),
        resolved_op_selection=None, step_keys_to_execute=execution_plan.step_keys_to_execute,
        op_selection=None, status=None, root_run_id=None, parent_run_id=None,
        tags={**remote_job.tags, REPOSITORY_LABEL_TAG: f"{repository.name}@{location.name}", **(tags or {})},
        job_snapshot=remote_job.job_snapshot, execution_plan_snapshot=execution_plan,
        parent_job_snapshot=remote_job.parent_job_snapshot,
        remote_job_origin=remote_job.get_remote_origin(), job_code_origin=remote_job.get_python_origin(),
        asset_selection=None, asset_check_selection=None, asset_graph=repository.asset_graph,
    )
    instance.launch_run(run.run_id, workspace)
    return run.run_id


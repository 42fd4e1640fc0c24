"""A run killed with kill -9 (its worker, and the launcher and code server with it) is marked
failed by the daemon's run monitoring (instance/dagster.yaml), and its namespace stays due.

A run is launched the way `curation-pipeline run` launches one, from a process of its own; it
blocks in its first write on rows the test holds. The test then kills that whole process tree,
so nothing is left that could report the run's end: only the daemon can. The run carries the
`dagster/max_runtime` tag (seconds), which stands in for the shipped `max_runtime_seconds` (an
hour) so that the test takes a minute; `dagster/max_retries` 0 keeps the daemon from retrying it.
Every wait is bounded; the daemon runs in its own process group and is stopped whole.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime

import dagster as dg
import psutil
import pytest

from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.core.trigger_policy import plan_scheduled_runs
from curation_pipeline.defs.trigger_runs import namespaces_with_unfinished_runs
from curation_pipeline.store.database import open_connection, start_embedded_server
from curation_pipeline.store.triggers import load_candidates
from curation_pipeline_tests.conftest import cycle_row, insert, node
from curation_pipeline_tests.defs.test_daemon_e2e import _stop_group, dagster_home  # noqa: F401 (fixture)
from curation_pipeline_tests.support.lease_faults import lease_holder_pid

pytestmark = pytest.mark.slow

WAIT_S = 240
MAX_RUNTIME_S = 5

LAUNCH_ONE_RUN = """
import sys, time
import dagster as dg
from curation_pipeline.cli.launcher import code_location_workspace, launch_partition_runs
from curation_pipeline.defs.partitions import register_partitions

key, max_runtime = sys.argv[1], sys.argv[2]
with dg.DagsterInstance.get() as instance:
    register_partitions(instance, [key])
    with code_location_workspace(instance) as workspace:
        [run_id] = launch_partition_runs(
            instance, workspace, [key],
            tags={"dagster/max_runtime": max_runtime, "dagster/max_retries": "0"},
        )
        print(run_id, flush=True)
        time.sleep(3600)  # killed by the test long before
"""


def _start_daemon(home, log_path) -> subprocess.Popen:
    env = {
        **os.environ,
        # The sensors and the schedule must not start another run of the namespace meanwhile.
        "IDLE_THRESHOLD_SECS": "86400",
        "CURATOR_INTERVAL_SECS": "604800",
    }
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "dagster._daemon", "run", "-w", str(home / "workspace.yaml")],
            cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )


def wait_for(predicate, what: str, log_path=None):
    """The predicate's first truthy value, polled for up to WAIT_S; else fail, with the end of the
    daemon's log when there is one."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    log = f"; daemon log:\n{log_path.read_text(errors='replace')[-4000:]}" if log_path is not None else ""
    raise AssertionError(f"{what} within {WAIT_S}s{log}")


def _kill_tree(process: subprocess.Popen) -> set[int]:
    """kill -9 the process and all its descendants; returns their pids."""
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    for member in tree:
        try:
            member.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(tree, timeout=30)
    return {member.pid for member in tree}


def test_a_run_killed_with_kill_9_is_marked_failed_and_its_namespace_stays_due(
    db, dagster_home, database_url, tmp_path,  # noqa: F811 (the fixture imported above)
):
    namespace = f"killed-{uuid.uuid4().hex[:8]}"
    insert(db, node(namespace=namespace, text="Customer Dana Reyes prefers email over phone calls."),
           node(namespace=namespace, text="Customer Dana Reyes prefers email to phone calls."))
    log_path = tmp_path / "daemon.log"
    # Dagster's storage tables exist before two processes start at once: each would otherwise
    # try to create them, and one fails ("type run_tags already exists").
    with dg.DagsterInstance.get() as instance:
        instance.get_runs(limit=1)
    daemon = _start_daemon(dagster_home, log_path)
    launcher = None
    with open_connection(database_url) as holder:
        try:
            # Every step that writes waits for these rows, so the run is in flight when killed.
            holder.execute("SELECT id FROM memory_nodes WHERE namespace = %s FOR UPDATE", (namespace,))
            launcher = subprocess.Popen(
                [sys.executable, "-c", LAUNCH_ONE_RUN, partition_key("acme", namespace), str(MAX_RUNTIME_S)],
                env=dict(os.environ), stdout=subprocess.PIPE, text=True, start_new_session=True,
            )
            run_id = launcher.stdout.readline().strip()
            assert run_id, "the launcher printed no run id"
            with dg.DagsterInstance.get() as instance:
                wait_for(lambda: lease_holder_pid(db, "acme", namespace),
                          "the run never took its namespace's lease", log_path)
                assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.STARTED
                killed = _kill_tree(launcher)  # the run worker, its code server and the launcher

                run = wait_for(
                    lambda: _finished(instance, run_id), "the daemon never marked the dead run finished",
                    log_path,
                )
                assert run.status == dg.DagsterRunStatus.FAILURE
                in_flight = namespaces_with_unfinished_runs(instance)
        finally:
            holder.rollback()
            if launcher is not None and launcher.poll() is None:
                _kill_tree(launcher)
            _stop_group(daemon)

    # Nothing counts the dead run as a curation: the namespace is still due, and no run of it is
    # in flight any more to hold the schedule, the idle sensor or the queue back.
    assert ("acme", namespace) not in in_flight
    assert cycle_row(db, run_id) is None or cycle_row(db, run_id)["status"] != "success"
    planned = plan_scheduled_runs(load_candidates(db), now=datetime.now(UTC), ceiling_secs=0,
                                  in_flight=in_flight)
    assert ("acme", namespace) in {run.state.name for run in planned}
    # The killed worker had signed up as a user of the embedded server and never signed off; the
    # next process to start the server takes it off, so the server still stops when its last
    # living user exits instead of running for ever.
    pgdata = load_settings().pgdata_dir
    start_embedded_server(pgdata)
    assert not killed & set(json.loads((pgdata / ".handle_pids.json").read_text()))


def _finished(instance: dg.DagsterInstance, run_id: str) -> dg.DagsterRun | None:
    run = instance.get_run_by_id(run_id)
    return run if run.is_finished else None

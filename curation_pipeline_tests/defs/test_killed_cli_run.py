"""`curation-pipeline run` whose run worker is killed with kill -9 mid-step, end to end: the
command's table shows the run failed (its cycle not "running"), standard error says what happened
and what comes next, and `runs` lists the run as failed (issue "An operator's day, round two",
point 4).

The run blocks in its first write on rows the test holds; the test then kills only the run
worker (the `dagster api execute_run` process under the command's code server), as the
out-of-memory killer would. Every wait is bounded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import psutil
import pytest

from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.conftest import insert, node
from curation_pipeline_tests.defs.test_daemon_e2e import _stop_group, dagster_home  # noqa: F401 (fixture)
from curation_pipeline_tests.defs.test_killed_run import WAIT_S, wait_for
from curation_pipeline_tests.support.lease_faults import lease_holder_pid

pytestmark = pytest.mark.slow


def _cli(*args: str, **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "curation_pipeline.cli.main", *args], env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)


def _run_worker(command: subprocess.Popen) -> psutil.Process | None:
    for child in psutil.Process(command.pid).children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                return child
        except psutil.NoSuchProcess:
            continue
    return None


def test_a_cli_run_whose_worker_is_killed_says_what_happened(db, dagster_home, database_url):  # noqa: F811
    namespace = f"killed-{uuid.uuid4().hex[:8]}"
    key = partition_key("acme", namespace)
    insert(db, node(namespace=namespace, text="Customer Dana Reyes prefers email over phone calls."),
           node(namespace=namespace, text="Customer Dana Reyes prefers email to phone calls."))
    command = None
    with open_connection(database_url) as holder:
        try:
            # Every step that writes waits for these rows, so the run is in flight when killed.
            holder.execute("SELECT id FROM memory_nodes WHERE namespace = %s FOR UPDATE", (namespace,))
            command = _cli("run", "--partition", key, start_new_session=True)
            wait_for(lambda: lease_holder_pid(db, "acme", namespace), "the run never took its namespace's lease")
            worker = wait_for(lambda: _run_worker(command), "no run worker under the command")
            worker.send_signal(signal.SIGKILL)
        finally:
            holder.rollback()
    try:
        out, err = command.communicate(timeout=WAIT_S)
    finally:
        if command.poll() is None:
            _stop_group(command)
    assert command.returncode != 0
    # Its table row: the run failed, and its cycle is not shown as running (it never finished).
    [row] = [line for line in out.splitlines() if line.startswith(key)]
    assert "FAILURE" in row and "running" not in row, out
    # What happened, and what comes next.
    assert f"failed: {key}: run " in err and "ended FAILURE" in err, err
    assert "its cycle did not finish" in err, err
    assert ("the daemon retries it" in err) or (f"curation-pipeline run --partition {key}" in err), err
    # `runs` lists it as failed.
    listing = subprocess.run([sys.executable, "-m", "curation_pipeline.cli.main", "runs", "--partition", key],
                             env=dict(os.environ), capture_output=True, text=True, timeout=WAIT_S)
    assert listing.returncode == 0, listing.stderr
    assert any(key in line and "FAILURE" in line for line in listing.stdout.splitlines()), listing.stdout

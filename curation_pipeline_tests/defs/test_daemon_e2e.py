"""End to end: the real Dagster daemon, Postgres storage, and no manual launch.

A namespace gets an interaction, then goes quiet; the daemon's idle sensor requests a run, the
run queue dequeues it, and the run curates the namespace. The test starts the daemon in its own
process group and stops the whole group itself; every wait is bounded.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from importlib import resources
from urllib.parse import urlsplit

import dagster as dg
import pytest

from curation_pipeline.cli.dagster_home import (
    STORAGE_URL_VARIABLE,
    prepare_dagster_home,
)
from curation_pipeline.config.settings import load_settings
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.conftest import cycle_row, insert, node

pytestmark = pytest.mark.slow

RUN_TIMEOUT_S = 240


@pytest.fixture
def dagster_home(tmp_path, monkeypatch, database_url):
    """A persistent Postgres-backed DAGSTER_HOME like `curation-pipeline ui` makes (env restored),
    whose storage is a database of its own: the daemon's runs and partitions must not show up
    in other tests' instances (nor theirs here)."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv(STORAGE_URL_VARIABLE, "")
    home = prepare_dagster_home(load_settings())
    storage = f"dagster_e2e_{uuid.uuid4().hex[:8]}"
    with open_connection(database_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {storage}")
    monkeypatch.setenv(
        STORAGE_URL_VARIABLE, urlsplit(os.environ[STORAGE_URL_VARIABLE])._replace(path=f"/{storage}").geturl()
    )
    with resources.as_file(resources.files("curation_pipeline") / "instance" / "workspace.yaml") as source:
        shutil.copyfile(source, home / "workspace.yaml")
    yield home
    with open_connection(database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {storage} WITH (FORCE)")


def _start_daemon(home, log_path) -> subprocess.Popen:
    env = {
        **os.environ,
        "IDLE_THRESHOLD_SECS": "3",
        "CURATOR_SENSOR_INTERVAL_SECS": "2",
        "CURATOR_IDLE_FLOOR_SECS": "0",
        "CURATOR_INTERVAL_SECS": "604800",  # the schedule stays out of this test's way
    }
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "dagster._daemon", "run", "-w", str(home / "workspace.yaml")],
            cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )


def _stop_group(process: subprocess.Popen) -> None:
    for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:  # the daemon's children (code server, run workers)
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)


def _wait_for_sensor_run(instance: dg.DagsterInstance, namespace: str) -> dg.DagsterRun | None:
    finished = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        runs = instance.get_runs(dg.RunsFilter(
            job_name=JOB_NAME,
            tags={"dagster/sensor_name": "idle_namespace_sensor", "curation/namespace": namespace},
        ))
        if runs and runs[0].status in finished:
            return runs[0]
        time.sleep(1)
    return None


def test_the_daemon_curates_a_namespace_that_went_idle_without_any_manual_launch(db, dagster_home, tmp_path):
    namespace = f"e2e-{uuid.uuid4().hex[:8]}"
    insert(db, node(namespace=namespace, text="The customer asked to be called after 5 pm.", embed=False))
    # The import stamped an interaction just now: the namespace is busy until IDLE_THRESHOLD_SECS pass.
    log_path = tmp_path / "daemon.log"
    daemon = _start_daemon(dagster_home, log_path)
    try:
        with dg.DagsterInstance.get() as instance:
            run = _wait_for_sensor_run(instance, namespace)
    finally:
        _stop_group(daemon)
    log_tail = log_path.read_text(errors="replace")[-4000:]
    assert run is not None, f"no idle-sensor run finished within {RUN_TIMEOUT_S}s; daemon log:\n{log_tail}"
    assert run.status == dg.DagsterRunStatus.SUCCESS, log_tail
    assert run.tags["curation/trigger"] == "idle" and run.tags["dagster/priority"] == "10"
    assert cycle_row(db, run.run_id)["status"] == "success"
    assert cycle_row(db, run.run_id)["steps"]["revectorize"]["embedded"] == 1
    curated_by = db.execute(
        "SELECT last_curation_run_id FROM namespace_activity WHERE namespace = %s", (namespace,)
    ).fetchone()[0]
    assert curated_by == run.run_id  # the job recorded it: the triggers now see it as curated
    with pytest.raises(ProcessLookupError):
        os.killpg(daemon.pid, 0)  # nothing of the daemon's process group is left

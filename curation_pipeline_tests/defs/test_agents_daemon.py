"""The real daemon (schedule and idle sensor) against agents that only write and read: one
through plain SQL (INSERT, recall(), an UPDATE of its own), one through MemoryClient. Nothing
else moves the activity clocks (sql/015 does, by trigger): while the agents are busy the
schedule curates their namespaces, once they go quiet the idle sensor curates what came after,
and then the curations alone trigger nothing more."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid

import dagster as dg
import pytest

from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.service.memory_client import MemoryClient
from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.conftest import EMBEDDER
from curation_pipeline_tests.defs.test_daemon_e2e import _stop_group, dagster_home  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

IDLE_SECS = 15
WAIT_S = 300
FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def _start_daemon(home, log_path) -> subprocess.Popen:
    env = {**os.environ, "IDLE_THRESHOLD_SECS": str(IDLE_SECS), "CURATOR_SENSOR_INTERVAL_SECS": "2",
           "CURATOR_IDLE_FLOOR_SECS": "0", "CURATOR_INTERVAL_SECS": "60", "CURATOR_CEILING_SECS": "0"}
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "dagster._daemon", "run", "-w", str(home / "workspace.yaml")],
            cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


class Agents:
    """Both agents, acting every 2 s on a thread until stopped."""

    def __init__(self, url: str, sql_namespace: str, client_namespace: str):
        self.url, self.sql_namespace, self.client_namespace = url, sql_namespace, client_namespace
        self.stop, self.turns, self.errors = threading.Event(), 0, []
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _sql_agent_turn(self, conn, turn: int) -> None:
        text = f"Ticket T-{turn}: the customer asked for a call back after 5 pm."
        vector = EMBEDDER.embed([text])[0]
        conn.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary, embedding, embedding_model)"
                     " VALUES ('acme', %s, %s, %s, %s)", (self.sql_namespace, text, vector, EMBEDDER.name))
        found = conn.execute("SELECT id FROM recall('acme', %s, %s, 3)", (self.sql_namespace, vector)).fetchall()
        assert found
        conn.execute("UPDATE memory_nodes SET heat = least(1.0, heat + 0.1) WHERE id = %s", (found[0][0],))

    def _loop(self) -> None:
        try:
            with open_connection(self.url, autocommit=True) as conn, \
                    MemoryClient("acme", self.client_namespace) as client:
                while not self.stop.is_set():
                    self.turns += 1
                    self._sql_agent_turn(conn, self.turns)
                    client.remember(f"Order O-{self.turns} ships on Friday by courier.")
                    assert client.recall("When does the order ship?", k=2)
                    client.touch()
                    self.stop.wait(2)
        except Exception as error:  # reported by the test, not lost on the thread
            self.errors.append(repr(error))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.stop.set()
        self.thread.join(timeout=60)


def _runs(instance, namespace: str, trigger: str | None = None) -> list[dg.DagsterRun]:
    tags = {"curation/namespace": namespace, **({"curation/trigger": trigger} if trigger else {})}
    return list(instance.get_runs(dg.RunsFilter(job_name=JOB_NAME, tags=tags)))


def _cycles_started(db, runs: list[dg.DagsterRun]) -> bool:
    """Every run has begun its cycle (its activity_log row, whose start the triggers compare with)."""
    ids = [run.run_id for run in runs]
    return bool(ids) and db.execute(
        "SELECT count(DISTINCT run_id) FROM activity_log WHERE action = 'curation_cycle' AND run_id = ANY(%s)",
        (ids,)).fetchone()[0] == len(ids)


def _wait(predicate, what: str, log_path) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(1)
    raise AssertionError(f"{what} within {WAIT_S}s; daemon log:\n{log_path.read_text(errors='replace')[-4000:]}")


def test_agents_that_only_write_and_read_get_their_namespaces_curated(db, database_url, dagster_home, tmp_path):  # noqa: F811
    suffix = uuid.uuid4().hex[:6]
    namespaces = (f"sql-agent-{suffix}", f"client-agent-{suffix}")
    log_path = tmp_path / "daemon.log"
    daemon = _start_daemon(dagster_home, log_path)
    try:
        with dg.DagsterInstance.get() as instance:
            with Agents(database_url, *namespaces) as agents:
                # Busy agents are never idle: the schedule curates them, after their activity.
                _wait(lambda: bool(agents.errors) or (
                    all(_runs(instance, ns, "schedule") for ns in namespaces)
                    and _cycles_started(db, [run for ns in namespaces for run in _runs(instance, ns, "schedule")])),
                    "no scheduled cycle of both namespaces began", log_path)
                time.sleep(4)  # activity after the scheduled cycles began: more for the idle sensor
            assert not agents.errors, agents.errors
            quiet_since = time.monotonic()
            # Quiet now: the idle sensor curates what came after the scheduled runs.
            _wait(lambda: all(any(run.status in FINISHED for run in _runs(instance, ns, "idle")) for ns in namespaces),
                  "no finished idle-sensor run of both namespaces", log_path)
            assert time.monotonic() - quiet_since >= IDLE_SECS - 1
            _wait(lambda: all(run.status in FINISHED for ns in namespaces for run in _runs(instance, ns)),
                  "runs still unfinished", log_path)
            settled = {ns: len(_runs(instance, ns)) for ns in namespaces}
            # The curations alone trigger nothing: a schedule tick and many sensor ticks later,
            # no further run, and nothing pending.
            time.sleep(70)
            assert {ns: len(_runs(instance, ns)) for ns in namespaces} == settled
            runs = [run for ns in namespaces for run in _runs(instance, ns)]
    finally:
        _stop_group(daemon)
    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs), [(r.run_id, r.status) for r in runs]
    pending = db.execute(
        "SELECT namespace FROM namespace_activity WHERE namespace = ANY(%s)"
        " AND (last_curation_started_at IS NULL OR last_interaction_at > last_curation_started_at)",
        (list(namespaces),)).fetchall()
    assert pending == []

"""A fleet for the Celery tests: the real Dagster daemon and real `curation-pipeline worker`
processes, fed by the embedded broker, against the session's embedded Postgres.

Every process gets its environment spelled out: the daemon and a "local" worker share this
test's CURATION_HOME (where the embedded broker lives); a worker "on another machine" has a
CURATION_HOME of its own and shares only DATABASE_URL, CURATION_DAGSTER_STORAGE_URL and the
broker's URL. Each process runs in its own process group, stopped whole; every wait is bounded.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import dagster as dg
import psutil

from curation_pipeline.cli.dagster_home import STORAGE_URL_VARIABLE, prepare_dagster_home
from curation_pipeline.config.settings import load_settings
from curation_pipeline.instance.embedded_broker import start_embedded_broker, stop_embedded_broker
from curation_pipeline.store.database import open_connection

WAIT_S = 240
# Keeps the triggers out of the way: the tests launch or submit their runs themselves.
QUIET_TRIGGERS = {"IDLE_THRESHOLD_SECS": "86400", "CURATOR_INTERVAL_SECS": "604800"}


@dataclass
class Fleet:
    """The environment of a test's fleet, and the processes it started."""

    root: Path
    database_url: str
    storage_url: str
    broker_url: str
    broker_dir: Path
    broker_is_embedded: bool = True
    logs: list[Path] = field(default_factory=list)
    processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def home(self) -> Path:  # the daemon's and the local workers' CURATION_HOME
        return self.root / "home"

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster_home"

    def local_env(self, **extra: str) -> dict[str, str]:
        """The daemon's and a local worker's: CURATION_BROKER_URL unset (the embedded broker),
        unless the fleet's broker is one of its own."""
        env = {name: value for name, value in os.environ.items()
               if name not in ("CURATION_BROKER_URL", "DAGSTER_HOME")}
        broker = {} if self.broker_is_embedded else {"CURATION_BROKER_URL": self.broker_url}
        return {**env, "CURATION_HOME": str(self.home), "DATABASE_URL": self.database_url,
                STORAGE_URL_VARIABLE: self.storage_url, "CURATION_RUN_LAUNCHER": "celery",
                "DAGSTER_HOME": str(self.dagster_home), **QUIET_TRIGGERS, **broker, **extra}

    def remote_env(self, name: str, **extra: str) -> dict[str, str]:
        """A worker on another machine: its own CURATION_HOME (and so DAGSTER_HOME); only the
        three URLs in common, and the embedder the store's vectors are of (every machine that
        curates a store is configured with its embedder)."""
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("CURATION_", "DAGSTER_")) and key != "DATABASE_URL"}
        embedder = {key: os.environ[key] for key in ("CURATION_EMBEDDER",) if key in os.environ}
        return {**env, **embedder, "CURATION_HOME": str(self.root / name), "DATABASE_URL": self.database_url,
                STORAGE_URL_VARIABLE: self.storage_url, "CURATION_BROKER_URL": self.broker_url,
                "CURATION_RUN_LAUNCHER": "celery", **QUIET_TRIGGERS, **extra}

    def start(self, command: list[str], env: Mapping[str, str], name: str) -> subprocess.Popen:
        log = self.root / f"{name}.log"
        self.logs.append(log)
        with open(log, "ab") as out:
            process = subprocess.Popen(command, env=dict(env), cwd=self.root, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        self.processes.append(process)
        return process

    def start_daemon(self, **extra: str) -> subprocess.Popen:
        return self.start([sys.executable, "-m", "dagster._daemon", "run", "-w",
                           str(self.dagster_home / "workspace.yaml")], self.local_env(**extra), "daemon")

    def start_worker(self, env: Mapping[str, str], name: str, *options: str) -> subprocess.Popen:
        return self.start([sys.executable, "-m", "curation_pipeline.cli.main", "worker", *options], env, name)

    def log_tail(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in self.logs if log.exists())

    def wait_for(self, predicate: Callable, what: str, timeout_s: float = WAIT_S):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.5)
        raise AssertionError(f"{what} within {timeout_s:.0f} s\n{self.log_tail()}")

    def set_instance(self, **run_monitoring: int) -> None:
        """This fleet's dagster.yaml with other run monitoring values (the package's file is
        left alone; the copy here is marked as edited so that nothing rewrites it)."""
        path = self.dagster_home / "dagster.yaml"
        text = path.read_text(encoding="utf-8").replace("# Managed by curation-pipeline", "# Edited by a test")
        for key, value in run_monitoring.items():
            text, count = re.subn(rf"(\n  {key}: )\d+", rf"\g<1>{value}", text)
            assert count == 1, key
        path.write_text(text, encoding="utf-8")


def stop(process: subprocess.Popen, *, timeout_s: float = 30.0) -> None:
    """SIGTERM, then SIGKILL, to the process's whole group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            continue
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
    process.wait()


def kill_tree(process: subprocess.Popen) -> set[int]:
    """kill -9 the process and every process under it; returns their pids."""
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    for member in tree:
        try:
            member.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(tree, timeout=30)
    process.wait()
    return {member.pid for member in tree}


def pool_pids(worker: subprocess.Popen) -> set[int]:
    """The worker's pool processes (where its runs execute)."""
    return {child.pid for child in psutil.Process(worker.pid).children(recursive=True)}


@contextmanager
def celery_fleet(tmp_path: Path, database_url: str, *, embedded_broker: bool = True) -> Iterator[Fleet]:
    """A fleet on a Dagster storage of its own (runs and partitions of other tests stay out)
    and a broker of its own; stops everything it started.

    `embedded_broker`: the embedded broker of the fleet's CURATION_HOME, which any process of
    the fleet starts again when it needs it and finds it gone. Otherwise a Valkey server of the
    test's own, named by CURATION_BROKER_URL everywhere, as a broker run by someone else would
    be: when the test stops it, it stays down until the test starts it again."""
    storage = f"dagster_celery_{uuid.uuid4().hex[:8]}"
    with open_connection(database_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {storage}")
    probe = urlsplit(database_url)
    storage_url = probe._replace(scheme="postgresql+psycopg2", path=f"/{storage}").geturl()
    root = Path(tmp_path)
    home = root / "home"
    saved = {name: os.environ.get(name) for name in
             ("CURATION_HOME", "DATABASE_URL", "DAGSTER_HOME", STORAGE_URL_VARIABLE, "CURATION_RUN_LAUNCHER",
              "CURATION_BROKER_URL")}
    broker_dir = home / "broker" if embedded_broker else root / "broker-server"
    broker_url = start_embedded_broker(broker_dir)  # this test process keeps it up
    fleet = Fleet(root, database_url, storage_url, broker_url, broker_dir, embedded_broker)
    try:
        os.environ.update({"CURATION_HOME": str(home), "DATABASE_URL": database_url,
                           STORAGE_URL_VARIABLE: storage_url, "CURATION_RUN_LAUNCHER": "celery",
                           "DAGSTER_HOME": str(fleet.dagster_home)})
        if embedded_broker:
            os.environ.pop("CURATION_BROKER_URL", None)
        else:
            os.environ["CURATION_BROKER_URL"] = broker_url
        prepare_dagster_home(load_settings(), keep_storage_url=True)
        with resources.as_file(resources.files("curation_pipeline") / "instance" / "workspace.yaml") as source:
            shutil.copyfile(source, fleet.dagster_home / "workspace.yaml")
        yield fleet
    finally:
        for process in reversed(fleet.processes):
            stop(process)
        stop_embedded_broker(broker_dir)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        with open_connection(database_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {storage} WITH (FORCE)")


def answering_workers(expected: int) -> Callable[[], list[str]]:
    """A predicate: the names of the workers answering a ping, once there are `expected`."""
    from curation_pipeline.instance.celery_app import make_celery_app

    app = make_celery_app(load_settings())

    def predicate() -> list[str]:
        names = [name for reply in app.control.ping(timeout=1.0) for name in reply]
        return names if len(names) >= expected else []

    return predicate


def run_pid(instance: dg.DagsterInstance, run_id: str) -> int:
    """The process that executed the run (Dagster's "Started process for run" event)."""
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        data = entry.dagster_event.engine_event_data
        if entry.message.startswith("Started process for run") and "pid" in data.metadata:
            return int(data.metadata["pid"].value)
    raise AssertionError(f"run {run_id} never started a process")


def run_span(instance: dg.DagsterInstance, run_id: str) -> tuple[float, float]:
    """When the run started and when it ended, from its event log."""
    kinds = {dg.DagsterEventType.RUN_START: "start", dg.DagsterEventType.RUN_SUCCESS: "end",
             dg.DagsterEventType.RUN_FAILURE: "end"}
    marks = {kinds[entry.dagster_event.event_type]: entry.timestamp
             for entry in instance.all_logs(run_id, of_type=set(kinds))}
    return marks["start"], marks["end"]


def finished(instance: dg.DagsterInstance, run_ids: list[str]) -> list[dg.DagsterRun]:
    runs = instance.get_runs(dg.RunsFilter(run_ids=run_ids))
    return runs if len(runs) == len(run_ids) and all(run.is_finished for run in runs) else []

"""`curation-pipeline ui` starts the webserver and the daemon, and stops all of it cleanly.

Started the way a user would (the real command, real processes), including from a
non-interactive shell, where a background job inherits an ignored SIGINT. Every wait is bounded
and the test kills whatever it started if something goes wrong.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest

pytestmark = pytest.mark.slow

START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 90


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _ignore_sigint() -> None:
    """What a non-interactive shell does to `command &`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _default_sigint() -> None:
    """What a terminal gives a command, whatever this test session inherited (a suite started
    with `pytest &` from a script has SIGINT ignored, and its children with it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _command_line(process: psutil.Process) -> str:
    """A child's command line, or "" once it has ended: a process listed a moment ago may have
    exited (a zombie until its parent reaps it) before it is read."""
    try:
        return " ".join(process.cmdline())
    except psutil.NoSuchProcess:  # ZombieProcess is one
        return ""


def _left_running(processes: list[psutil.Process]) -> list[str]:
    return [line for line in map(_command_line, processes) if line]


def _wait_until_serving(ui: subprocess.Popen, port: int) -> list[psutil.Process]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert ui.poll() is None, "curation-pipeline ui exited while starting"
        processes = psutil.Process(ui.pid).children(recursive=True)
        command_lines = _left_running(processes)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as answer:
                serving = answer.status == 200
        except OSError:
            serving = False
        if serving and any("dagster._daemon" in line for line in command_lines):
            return processes
        time.sleep(1)
    raise AssertionError(f"the UI did not answer on port {port} within {START_TIMEOUT_S}s")


@pytest.mark.parametrize(
    ("started_with_sigint_ignored", "stop_signal"),
    [(True, signal.SIGTERM), (False, signal.SIGINT)],
    ids=["background-job-SIGTERM", "terminal-Ctrl-C"],
)
def test_ui_serves_webserver_and_daemon_and_stops_without_orphans(
    curation_home, tmp_path, started_with_sigint_ignored, stop_signal
):
    port = _free_port()
    # A memory store of its own: the daemon it starts must not curate other tests' namespaces
    # or record runs in their Dagster storage.
    env = {**os.environ, "CURATION_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dagster_home")}
    env.pop("XDG_RUNTIME_DIR", None)  # as in containers, cron and CI: no start-up warning about it
    log = open(tmp_path / "ui.log", "wb")
    ui = subprocess.Popen(
        [sys.executable, "-m", "curation_pipeline.cli.main", "ui", "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=_ignore_sigint if started_with_sigint_ignored else _default_sigint,
    )
    try:
        started = _wait_until_serving(ui, port)
        names = " ".join(_left_running(started))
        assert "dagster_webserver" in names and "dagster._daemon" in names
        # The first page opens no "Join the Dagster community" dialog (what the page asks).
        request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps(
            {"query": "{ shouldShowNux }"}).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert json.load(answer) == {"data": {"shouldShowNux": False}}

        ui.send_signal(stop_signal)
        code = ui.wait(timeout=STOP_TIMEOUT_S)

        assert code == 0
        assert _left_running(started) == [], "orphans"
    finally:
        if ui.poll() is None:
            os.killpg(ui.pid, signal.SIGKILL)
            ui.wait()
        log.close()
    output = (tmp_path / "ui.log").read_text(errors="replace")
    assert f"Dagster UI: http://127.0.0.1:{port}" in output
    # Stopped through dagster dev's own shutdown (webserver and daemon told to stop), not killed.
    assert "Dagster services shut down." in output, output[-3000:]
    # No start-up noise: Dagster's "dev_command is superseded" and platformdirs' warning.
    assert "superseded" not in output and "XDG_RUNTIME_DIR" not in output, output[-3000:]


def test_ui_with_workers_runs_the_namespaces_on_its_workers_and_stops_them_all(tmp_path):
    """`ui --workers 2`: two Celery workers beside the daemon on the embedded broker; a run
    launched from another command goes to them; SIGTERM stops everything, the broker too."""
    from curation_pipeline.instance.embedded_broker import answers, broker_socket

    port = _free_port()
    env = {**os.environ, "CURATION_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dagster_home")}
    env.pop("CURATION_RUN_LAUNCHER", None)
    env.pop("CURATION_BROKER_URL", None)
    seeded = subprocess.run([sys.executable, "-m", "curation_pipeline.cli.main", "seed"], env=env,
                            capture_output=True, text=True, timeout=300)
    assert seeded.returncode == 0, seeded.stderr
    log = open(tmp_path / "ui.log", "wb")
    ui = subprocess.Popen(
        [sys.executable, "-m", "curation_pipeline.cli.main", "ui", "--port", str(port), "--workers", "2"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        _wait_until_serving(ui, port)
        deadline = time.monotonic() + START_TIMEOUT_S
        while len(_workers_of(ui)) < 2 or not _pools_of(ui):
            assert time.monotonic() < deadline, "the UI's two workers never started"
            time.sleep(1)
        # `run` from another shell: CURATION_RUN_LAUNCHER=celery sends it to the UI's workers.
        done = subprocess.run(
            [sys.executable, "-m", "curation_pipeline.cli.main", "run", "--partition", "acme:support-bot"],
            env={**env, "CURATION_RUN_LAUNCHER": "celery"}, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "acme:support-bot" in done.stdout and "SUCCESS" in done.stdout
        pools = _pools_of(ui)
        started = psutil.Process(ui.pid).children(recursive=True)

        ui.send_signal(signal.SIGTERM)
        assert ui.wait(timeout=STOP_TIMEOUT_S) == 0
        assert _left_running(started) == [], "orphans"
    finally:
        if ui.poll() is None:
            os.killpg(ui.pid, signal.SIGKILL)
            ui.wait()
        log.close()
    run_id = done.stdout.strip().splitlines()[2].split()[-1]
    assert _run_process(env, run_id) in pools  # executed in a pool process of one of the workers
    assert not answers(broker_socket(tmp_path / "home" / "broker"))  # the broker stopped with the UI


def _workers_of(ui: subprocess.Popen) -> list[psutil.Process]:
    return [p for p in psutil.Process(ui.pid).children() if "worker" in _command_line(p).split()]


def _pools_of(ui: subprocess.Popen) -> set[int]:
    return {child.pid for worker in _workers_of(ui) for child in worker.children()}


def _run_process(env: dict, run_id: str) -> int:
    """The pid that executed the run, from Dagster's record (read in a process with the UI's home)."""
    script = ("import dagster as dg, sys\n"
              "from curation_pipeline.cli.dagster_home import prepare_dagster_home\n"
              "from curation_pipeline.config.settings import load_settings\n"
              "prepare_dagster_home(load_settings())\n"
              "with dg.DagsterInstance.get() as i:\n"
              "    [e] = [e for e in i.all_logs(sys.argv[1]) if e.message.startswith('Started process for run')]\n"
              "    print(e.dagster_event.engine_event_data.metadata['pid'].value)\n")
    done = subprocess.run([sys.executable, "-c", script, run_id], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])

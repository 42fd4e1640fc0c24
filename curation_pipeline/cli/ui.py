"""`curation-pipeline ui`: the Dagster webserver and daemon on this machine's memory store.

It prepares DAGSTER_HOME (the same Postgres-backed instance the CLI records runs in), keeps the
embedded Postgres up while it runs, and starts `dagster dev` (webserver + daemon + code server)
in its own session so that Ctrl-C or SIGTERM stops all of them together, leaving no orphans.

Stopping goes through `dagster dev`'s shutdown pipe, which tells the webserver and the daemon
to stop, and those stop by interrupting themselves with SIGINT. A process started from a
non-interactive shell (`curation-pipeline ui &` in a script) inherits an *ignored* SIGINT, and
so would every Dagster process under it: they would never stop. So the children always get the
default SIGINT back, and whatever is still alive after a bounded wait is killed.

`--workers N` also starts N Celery workers (`curation-pipeline worker`) beside the daemon, and
runs go to them (CURATION_RUN_LAUNCHER=celery for every process started here) through
CURATION_BROKER_URL, else the embedded broker, which stays up while the UI runs. They stop with
the UI, after it: a warm shutdown lets the runs in progress finish (bounded, then killed).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from importlib import resources

import psutil
from dagster_shared.ipc import send_ipc_shutdown_message

from curation_pipeline.cli.dagster_home import prepare_dagster_home
from curation_pipeline.config.runs import redacted_url
from curation_pipeline.config.settings import Settings, SettingsError
from curation_pipeline.instance.broker import BROKER_VARIABLE, check_broker, resolve_broker_url

DEV_SUPERSEDED = "Function `dev_command` is superseded"  # the start of the warning's message


def serve_ui(settings: Settings, *, host: str = "127.0.0.1", port: int = 3000, workers: int = 0) -> int:
    if workers:
        _use_celery(settings)
    home = prepare_dagster_home(settings)
    workspace = home / "workspace.yaml"
    with resources.as_file(resources.files("curation_pipeline") / "instance" / "workspace.yaml") as source:
        shutil.copyfile(source, workspace)
    command = [
        # `dagster dev` warns on every start that `dg dev` supersedes it; `dg` is the project
        # scaffolding tool, which a packaged code location does not use.
        sys.executable, "-W", f"ignore:{DEV_SUPERSEDED}", "-m", "dagster", "dev", "-w", str(workspace),
        "-h", host, "-p", str(port),
    ]
    shutdown_read, shutdown_write = os.pipe()
    command += ["--shutdown-pipe", str(shutdown_read)]

    def stop(signum, frame):
        raise KeyboardInterrupt

    # Handlers before the child exists, so no signal is lost in between. An ignored SIGINT stays
    # ignored here (the shell asked for that), but SIGTERM always stops us.
    signal.signal(signal.SIGTERM, stop)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, stop)
    # A new session: the children get signals only from us, not from the terminal, so the
    # shutdown order below is the only one.
    process = subprocess.Popen(
        command, cwd=home, start_new_session=True, pass_fds=[shutdown_read],
        preexec_fn=_default_signals,
    )
    os.close(shutdown_read)
    started = [_start_worker(home, index) for index in range(workers)]
    print(f"Dagster UI: http://{host}:{port}  (DAGSTER_HOME={home}); Ctrl-C stops it", flush=True)
    if workers:
        print(f"{workers} Celery worker(s) execute the runs (broker {redacted_url(os.environ[BROKER_VARIABLE])})",
              flush=True)
    try:
        code = process.wait()
    except KeyboardInterrupt:
        code = 0
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stop_dagster(process, shutdown_write)
    stop_workers(started)
    return code


def _use_celery(settings: Settings) -> None:
    """Runs of every process started here go to the workers, through one broker."""
    if "run_launcher" in settings.model_fields_set and settings.run_launcher != "celery":
        raise SettingsError(
            f"--workers runs on Celery workers, but CURATION_RUN_LAUNCHER={settings.run_launcher}; "
            "unset it or set it to celery"
        )
    os.environ["CURATION_RUN_LAUNCHER"] = "celery"
    # Started (or attached to) here, so that the broker lives as long as the UI.
    os.environ[BROKER_VARIABLE] = resolve_broker_url(settings)
    check_broker(os.environ[BROKER_VARIABLE])


def _start_worker(home, index: int) -> subprocess.Popen:
    # Its own session: the terminal's Ctrl-C reaches only us, and we stop the workers last.
    with open(home / f"worker-{index}.log", "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "curation_pipeline.cli.main", "worker"],
            cwd=home, start_new_session=True, preexec_fn=_default_signals, stdout=log, stderr=subprocess.STDOUT,
        )


def stop_workers(workers: list[subprocess.Popen], timeout_s: float = 60.0) -> None:
    """A warm shutdown of each worker (its runs in progress finish), then a kill of whatever is
    left of it (its pool processes are in its process group)."""
    for worker in workers:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    for worker in workers:
        try:
            worker.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        worker.wait()


def _default_signals() -> None:
    """In the child, before exec: the default SIGINT and SIGTERM, whatever we inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stop_dagster(process: subprocess.Popen, shutdown_write: int, timeout_s: float = 40.0) -> None:
    """Ask `dagster dev` to shut down its webserver and daemon, wait for it, then kill every
    process it left: in its process group, or descended from it (a run worker, say)."""
    descendants = _descendants(process.pid)
    try:
        send_ipc_shutdown_message(shutdown_write)
    except OSError:
        pass  # dagster dev is already gone (the pipe has no reader)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass
    descendants += _descendants(process.pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        for child in descendants:
            try:
                child.send_signal(sig)
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(descendants, timeout=5)
        if not alive and process.poll() is not None:
            break
    process.wait()


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []

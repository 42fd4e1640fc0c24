"""`curation-pipeline ui`: the Dagster webserver and daemon on this machine's memory store.

It prepares DAGSTER_HOME (the same Postgres-backed instance the CLI records runs in), keeps the
embedded Postgres up while it runs, and starts `dagster dev` in its own process group so that
Ctrl-C or SIGTERM stops the webserver, the daemon and their code servers together.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from importlib import resources

from curation_pipeline.dagster_home import prepare_dagster_home
from curation_pipeline.settings import Settings


def serve_ui(settings: Settings, *, host: str = "127.0.0.1", port: int = 3000) -> int:
    home = prepare_dagster_home(settings)
    workspace = home / "workspace.yaml"
    with resources.as_file(resources.files("curation_pipeline") / "instance" / "workspace.yaml") as source:
        shutil.copyfile(source, workspace)
    command = [
        sys.executable, "-m", "dagster", "dev", "-w", str(workspace), "-h", host, "-p", str(port),
    ]
    # A new session: the children get signals only from us, not from the terminal, so the
    # shutdown order below is the only one.
    process = subprocess.Popen(command, cwd=home, start_new_session=True)
    print(f"Dagster UI: http://{host}:{port}  (DAGSTER_HOME={home}); Ctrl-C stops it", flush=True)

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        return process.wait()
    except KeyboardInterrupt:
        _stop_group(process)
        return 0


def _stop_group(process: subprocess.Popen, timeout_s: float = 20.0) -> None:
    """SIGTERM the whole group (webserver, daemon, code servers), then SIGKILL what is left."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=timeout_s)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

"""The embedded Postgres stops when its last living user exits, even when other users died
without saying so: a Celery pool process ends with os._exit, which runs no clean-up, and a
stopped `curation-pipeline worker` must not leave the server running behind it."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

pytestmark = pytest.mark.slow

# The worker's shape: the parent starts the server, forks a pool process that uses it too and
# ends as a Celery pool process does (os._exit), then the parent exits normally.
_WORKER_LIKE = """
import os, sys
from pathlib import Path
from curation_pipeline.store.database import start_embedded_server
server = start_embedded_server(Path(sys.argv[1]))
child = os.fork()
if child == 0:
    start_embedded_server(Path(sys.argv[1]))  # the pool process joins the server's users
    os._exit(0)
os.waitpid(child, 0)
print(server.global_process_id_list._get(), flush=True)
"""


def _postmaster(pgdata) -> psutil.Process | None:
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return None
    pid = int(pid_file.read_text().split()[0])
    return psutil.Process(pid) if psutil.pid_exists(pid) else None


def test_the_server_stops_after_its_last_living_user_though_a_forked_one_died_silently(tmp_path):
    pgdata = tmp_path / "pgdata"
    done = subprocess.run([sys.executable, "-c", _WORKER_LIKE, str(pgdata)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(eval(done.stdout.strip())) == 2  # the parent and the dead pool process were listed
    deadline = time.monotonic() + 30
    while _postmaster(pgdata) is not None and time.monotonic() < deadline:
        time.sleep(0.5)
    left = _postmaster(pgdata)
    if left is not None:
        left.kill()  # leave nothing running behind the test
    assert left is None, "the embedded Postgres kept running after its last living user exited"

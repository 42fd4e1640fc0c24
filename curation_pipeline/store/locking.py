"""One curation of a namespace at a time: a session-level Postgres advisory lock held by the
run (its "lease") from the first step to the last.

The lock lives on a dedicated connection that the run keeps open, so it is released when the run
ends, however it ends: even a killed run process drops its connection and with it the lease.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from curation_pipeline.store.database import open_connection


class NamespaceBusyError(RuntimeError):
    """Another run holds the namespace for longer than we are willing to wait."""


def namespace_lock_key(tenant_id: str, namespace: str) -> str:
    # \x1f (unit separator) can't occur in valid names, so ("a", "b:c") and ("a:b", "c") differ.
    return f"curation\x1f{tenant_id}\x1f{namespace}"


@contextmanager
def namespace_lease(url: str, tenant_id: str, namespace: str, timeout_s: int) -> Iterator[None]:
    """Hold the namespace for the duration of the block, waiting up to `timeout_s` for it."""
    with open_connection(url, vector=False, autocommit=True) as conn:
        _acquire(conn, tenant_id, namespace, timeout_s)
        yield  # closing the connection releases the lock


def _acquire(conn: psycopg.Connection, tenant_id: str, namespace: str, timeout_s: int) -> None:
    conn.execute(f"SET lock_timeout = '{int(timeout_s)}s'")
    try:
        conn.execute(
            "SELECT pg_advisory_lock(hashtextextended(%s, 0))",
            (namespace_lock_key(tenant_id, namespace),),
        )
    except psycopg.errors.LockNotAvailable:
        raise NamespaceBusyError(
            f"namespace {tenant_id}/{namespace} is being curated by another run; "
            f"gave up waiting after {timeout_s}s"
        ) from None
    conn.execute("SET lock_timeout = 0")

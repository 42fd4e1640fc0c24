"""Fault injection for namespace leases: kill the connection that holds one, as a network cut,
an operator or a crashed pooler would."""

from __future__ import annotations

import psycopg

from curation_pipeline.store.locking import namespace_lock_key


def lease_holder_pid(conn: psycopg.Connection, tenant_id: str, namespace: str) -> int | None:
    """The backend of the connection holding the namespace's advisory lock (None: nobody)."""
    row = conn.execute(
        """
        SELECT k.pid FROM pg_locks k, (SELECT hashtextextended(%s, 0) AS key) lock
        WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 1
          AND k.classid::bigint = (lock.key >> 32) & 4294967295
          AND k.objid::bigint = lock.key & 4294967295
        """,
        (namespace_lock_key(tenant_id, namespace),),
    ).fetchone()
    return row[0] if row else None


def kill_lease_connection(conn: psycopg.Connection, tenant_id: str, namespace: str) -> int:
    """pg_terminate_backend the lease's connection and wait (up to 10 s) until it is gone, so its
    advisory lock is released; returns the pid killed. `conn` must be autocommit."""
    pid = lease_holder_pid(conn, tenant_id, namespace)
    assert pid is not None, f"nobody holds the lease on {tenant_id}/{namespace}"
    terminated = conn.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone()[0]
    assert terminated, f"the lease connection (pid {pid}) of {tenant_id}/{namespace} did not go away"
    return pid

"""One curation of a namespace at a time: a lease the run holds from its first step to its last,
fenced so that a run which lost it can no longer write.

- The **lease** is a session-level Postgres advisory lock on a dedicated connection the run keeps
  open. It is released when the run ends, however it ends: even a killed run process drops its
  connection and with it the lease.
- The **fencing token** (table namespace_leases, sql/008) is bumped by every acquisition. An
  advisory lock alone can be lost silently (its connection killed, a network cut) while the run
  goes on; so every write transaction starts with `Lease.verify`, which checks, in that same
  transaction, that the token is still the run's and that its lock is still held, and keeps the
  lease row locked FOR SHARE until the transaction ends. A new holder's bump needs that row, so
  it waits for a transaction that already passed the check; every later transaction of the old
  run sees the new token and fails. The two runs' writes never interleave.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from curation_pipeline.core.partition_keys import display_key
from curation_pipeline.store.database import open_connection


class NamespaceBusyError(RuntimeError):
    """Another run holds the namespace for longer than we are willing to wait."""


class LeaseLostError(RuntimeError):
    """This run no longer holds its namespace's lease, so it must not write."""


def namespace_lock_key(tenant_id: str, namespace: str) -> str:
    # \x1f (unit separator) can't occur in valid names, so ("a", "b:c") and ("a:b", "c") differ.
    return f"curation\x1f{tenant_id}\x1f{namespace}"


@dataclass(frozen=True)
class Lease:
    """A held namespace lease: who holds it and the fencing token its acquisition got."""

    tenant_id: str
    namespace: str
    holder: str
    token: int

    def verify(self, conn: psycopg.Connection) -> None:
        """Prove inside `conn`'s open transaction that this lease still holds, or raise
        LeaseLostError. The lease row stays locked FOR SHARE until that transaction ends, so
        no other run can take the namespace over while it writes."""
        row = conn.execute(_VERIFY, {
            "t": self.tenant_id, "n": self.namespace,
            "key": namespace_lock_key(self.tenant_id, self.namespace),
        }).fetchone()
        where = f"namespace {display_key(self.tenant_id, self.namespace)}"
        if row is None:
            raise LeaseLostError(f"{self.holder} has no lease on {where}; it writes nothing")
        token, holder, lock_held = row
        if token != self.token:
            raise LeaseLostError(
                f"{self.holder} lost its lease on {where}: another run ({holder}) took the "
                "namespace over; this run writes nothing more and its remaining steps fail"
            )
        if not lock_held:
            raise LeaseLostError(
                f"{self.holder} lost its lease on {where}: the connection holding it was closed "
                "or killed; this run writes nothing more and its remaining steps fail"
            )


@contextmanager
def namespace_lease(
    url: str, tenant_id: str, namespace: str, timeout_s: int, *, holder: str
) -> Iterator[Lease]:
    """Hold the namespace for the duration of the block, waiting up to `timeout_s` for it.
    `holder` (a run or undo id) is recorded with the token and named in a lost lease's error."""
    with open_connection(url, vector=False, autocommit=True) as conn:
        token = _acquire(conn, tenant_id, namespace, timeout_s, holder)
        yield Lease(tenant_id, namespace, holder, token)  # closing the connection releases the lock


@contextmanager
def namespace_lease_now(url: str, tenant_id: str, namespace: str, *, holder: str) -> Iterator[Lease]:
    """Hold the namespace for the block if no run holds it now, else raise NamespaceBusyError
    naming the run that does (`namespaces remove`: never waits behind a run, never under one)."""
    with open_connection(url, vector=False, autocommit=True) as conn:
        key = namespace_lock_key(tenant_id, namespace)
        if not conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()[0]:
            row = conn.execute("SELECT holder FROM namespace_leases WHERE tenant_id = %s AND namespace = %s",
                               (tenant_id, namespace)).fetchone()
            raise NamespaceBusyError(
                f"namespace {display_key(tenant_id, namespace)} is being curated by "
                f"{row[0] if row else 'another run'}")
        token = conn.execute(_BUMP, (tenant_id, namespace, holder)).fetchone()[0]
        yield Lease(tenant_id, namespace, holder, token)  # closing the connection releases the lock


def _acquire(conn: psycopg.Connection, tenant_id: str, namespace: str, timeout_s: int, holder: str) -> int:
    # The wait covers both the lock and the token bump, which waits for a write transaction of
    # a previous holder that already passed its check.
    conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(timeout_s)}s",))
    try:
        conn.execute(
            "SELECT pg_advisory_lock(hashtextextended(%s, 0))",
            (namespace_lock_key(tenant_id, namespace),),
        )
        token = conn.execute(_BUMP, (tenant_id, namespace, holder)).fetchone()[0]
    except psycopg.errors.LockNotAvailable:
        raise NamespaceBusyError(
            f"namespace {display_key(tenant_id, namespace)} is being curated by another run; "
            f"gave up waiting after {timeout_s}s"
        ) from None
    conn.execute("SET lock_timeout = 0")
    return token


_BUMP = """
    INSERT INTO namespace_leases (tenant_id, namespace, token, holder, holder_pid)
    VALUES (%s, %s, 1, %s, pg_backend_pid())
    ON CONFLICT (tenant_id, namespace) DO UPDATE
        SET token = namespace_leases.token + 1, holder = EXCLUDED.holder,
            holder_pid = EXCLUDED.holder_pid, acquired_at = now()
    RETURNING token
"""

# pg_locks shows a bigint advisory key as its high half in classid and its low half in objid
# (both unsigned), with objsubid 1.
_VERIFY = """
    SELECT l.token, l.holder, EXISTS (
        SELECT 1 FROM pg_locks k
        WHERE k.locktype = 'advisory' AND k.granted AND k.pid = l.holder_pid AND k.objsubid = 1
          AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND k.classid::bigint = (lock.key >> 32) & 4294967295
          AND k.objid::bigint = lock.key & 4294967295)
    FROM namespace_leases l, (SELECT hashtextextended(%(key)s, 0) AS key) lock
    WHERE l.tenant_id = %(t)s AND l.namespace = %(n)s
    FOR SHARE OF l
"""

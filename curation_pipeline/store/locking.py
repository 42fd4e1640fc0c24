"""One curation of a namespace at a time: a transaction-scoped Postgres advisory lock.

Transaction-scoped, so a crashed step can never leave the namespace locked.
"""

from __future__ import annotations

import psycopg


class NamespaceBusyError(RuntimeError):
    """Another run holds the namespace's lock for longer than we are willing to wait."""


def namespace_lock_key(tenant_id: str, namespace: str) -> str:
    # \x1f (unit separator) can't occur in valid names, so ("a", "b:c") and ("a:b", "c") differ.
    return f"curation\x1f{tenant_id}\x1f{namespace}"


def lock_namespace(conn: psycopg.Connection, tenant_id: str, namespace: str, timeout_s: int) -> None:
    """Wait up to `timeout_s` for the namespace's lock, inside the current transaction."""
    conn.execute(f"SET LOCAL lock_timeout = '{int(timeout_s)}s'")
    try:
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (namespace_lock_key(tenant_id, namespace),),
        )
    except psycopg.errors.LockNotAvailable:
        raise NamespaceBusyError(
            f"namespace {tenant_id}/{namespace} is being curated by another run; "
            f"gave up waiting after {timeout_s}s"
        ) from None

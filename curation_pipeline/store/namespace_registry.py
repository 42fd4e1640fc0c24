"""Retiring a namespace and bringing it back (`namespaces remove`, `run --create`, import).

A retired namespace keeps every memory row; only its namespace_activity row says it is retired,
so discovery and the triggers (store/triggers.py) leave it out. It comes back when the operator
says so (`revive`), or on its own when its memory is written again (store/triggers.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg


def count_nodes(conn: psycopg.Connection, tenant_id: str, namespace: str) -> int:
    return conn.execute(
        "SELECT count(*) FROM memory_nodes WHERE tenant_id = %s AND namespace = %s", (tenant_id, namespace)
    ).fetchone()[0]


def retire(conn: psycopg.Connection, tenant_id: str, namespace: str) -> None:
    """Mark the namespace retired as of now (its row is created if it has none)."""
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace, retired_at, retired_xmax)
        VALUES (%s, %s, now(), pg_snapshot_xmax(pg_current_snapshot()))
        ON CONFLICT (tenant_id, namespace) DO UPDATE
            SET retired_at = EXCLUDED.retired_at, retired_xmax = EXCLUDED.retired_xmax
        """,
        (tenant_id, namespace),
    )


def revive(conn: psycopg.Connection, names: Sequence[tuple[str, str]]) -> None:
    """Make each namespace known (not retired), creating its row if needed: `run --create`."""
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace)
        SELECT * FROM unnest(%s::text[], %s::text[])
        ON CONFLICT (tenant_id, namespace) DO UPDATE SET retired_at = NULL, retired_xmax = NULL
        """,
        ([t for t, _ in names], [n for _, n in names]),
    )


def retired_namespaces(conn: psycopg.Connection) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT tenant_id, namespace FROM namespace_activity WHERE retired_at IS NOT NULL"
    ).fetchall()


def has_activity(conn: psycopg.Connection, tenant_id: str, namespace: str) -> bool:
    """Whether any run (a cycle, a preview, an undo) left a record in the namespace."""
    return conn.execute(
        "SELECT EXISTS (SELECT 1 FROM activity_log WHERE tenant_id = %s AND namespace = %s)",
        (tenant_id, namespace),
    ).fetchone()[0]

"""The set-based reads behind the schedule and the sensors (decisions: curation_pipeline/triggers.py).

Each tick reads only the namespaces that may have something to do, through the partial indexes
of sql/003_curation_triggers.sql: a namespace where nothing happened is not in them, and a
disabled one is in neither, so a tick's cost follows the change, not the number of namespaces.
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from curation_pipeline.core.trigger_policy import NamespaceState

_COLUMNS = "tenant_id, namespace, last_interaction_at, last_curation_started_at, last_curated_at"
# Spelled exactly like the predicate of the index namespace_activity_pending, so the planner uses it.
_PENDING = (
    "curation_enabled"
    " AND (last_curation_started_at IS NULL OR last_interaction_at > last_curation_started_at)"
)

_NOT_RETIRED = " AND retired_at IS NULL"


def load_candidates(
    conn: psycopg.Connection, *, overdue_before: datetime | None = None,
    interacted_before: datetime | None = None,
) -> list[NamespaceState]:
    """Enabled namespaces never curated or with an interaction since their last curation
    started, plus (with `overdue_before`) those last curated before it.

    `interacted_before` keeps only namespaces whose last interaction is that old (the idle
    sensor's prefilter; namespaces without any interaction are then left out too).
    """
    idle_filter = " AND last_interaction_at <= %(interacted_before)s" if interacted_before else ""
    # A retired namespace (`namespaces remove`) is requested by nobody until discovery finds its
    # memory written again and clears retired_at: a run request would register it back.
    query = f"SELECT {_COLUMNS} FROM namespace_activity WHERE {_PENDING}{idle_filter}{_NOT_RETIRED}"
    if overdue_before is not None:
        query += (
            f" UNION SELECT {_COLUMNS} FROM namespace_activity"
            f" WHERE curation_enabled AND last_curated_at <= %(overdue_before)s{_NOT_RETIRED}"
        )
    rows = conn.execute(
        query, {"overdue_before": overdue_before, "interacted_before": interacted_before}
    ).fetchall()
    return [NamespaceState(*row) for row in rows]


def discover_namespaces(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """Every (tenant, namespace) in the store but the retired ones; gives each one found only in
    memory_nodes its namespace_activity row, so the triggers (which read that table alone) see it.

    A retired namespace (`namespaces remove`) whose memory was written since (a node added,
    edited or recalled: its last_txid is past the removal's snapshot) is no longer retired: new
    memory is what makes a namespace, and a namespace an agent still writes to must be curated.

    Distinct namespaces of memory_nodes are read with a loose index scan (one index descent per
    namespace, not a scan of every node). Call inside a transaction.
    """
    conn.execute(
        """
        WITH RECURSIVE found AS (
            (SELECT tenant_id, namespace FROM memory_nodes ORDER BY tenant_id, namespace LIMIT 1)
            UNION ALL
            SELECT following.tenant_id, following.namespace
            FROM found CROSS JOIN LATERAL (
                SELECT m.tenant_id, m.namespace FROM memory_nodes AS m
                WHERE (m.tenant_id, m.namespace) > (found.tenant_id, found.namespace)
                ORDER BY m.tenant_id, m.namespace LIMIT 1
            ) AS following
        )
        INSERT INTO namespace_activity (tenant_id, namespace)
        SELECT tenant_id, namespace FROM found
        ON CONFLICT (tenant_id, namespace) DO NOTHING
        """
    )
    # One index probe per retired namespace (memory_nodes_changes: tenant, namespace, last_txid).
    conn.execute(
        """
        UPDATE namespace_activity AS a SET retired_at = NULL, retired_xmax = NULL
        WHERE a.retired_at IS NOT NULL AND EXISTS (
            SELECT 1 FROM memory_nodes AS m
            WHERE m.tenant_id = a.tenant_id AND m.namespace = a.namespace AND m.last_txid >= a.retired_xmax)
        """
    )
    return conn.execute(
        "SELECT tenant_id, namespace FROM namespace_activity WHERE retired_at IS NULL"
        " ORDER BY tenant_id, namespace"
    ).fetchall()


def set_curation_enabled(conn: psycopg.Connection, tenant_id: str, namespace: str, enabled: bool) -> None:
    """The per-namespace off switch (creates the namespace's row if it has none yet)."""
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace, curation_enabled) VALUES (%s, %s, %s)
        ON CONFLICT (tenant_id, namespace) DO UPDATE SET curation_enabled = EXCLUDED.curation_enabled
        """,
        (tenant_id, namespace, enabled),
    )


def disabled_namespaces(conn: psycopg.Connection) -> set[tuple[str, str]]:
    """(tenant, namespace) of every namespace whose curation is switched off."""
    return {(t, n) for t, n in conn.execute(
        "SELECT tenant_id, namespace FROM namespace_activity WHERE NOT curation_enabled").fetchall()}

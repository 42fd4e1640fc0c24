"""Reads for a namespace's health: its state after a cycle, what the checks look at, and the
health recorded by earlier cycles (their activity rows)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import psycopg

from curation_pipeline.core.health import Snapshot
from curation_pipeline.core.scope import Scope
from curation_pipeline.store import activity
from curation_pipeline.store.candidates import (
    count_missing_embeddings,
    count_outdated_embeddings,
)

ORPHAN_EXAMPLES = 5


def snapshot(conn: psycopg.Connection, scope: Scope, embedding_model: str) -> Snapshot:
    """The namespace now: node counts, the embedding backlog (as step 4 counts it) and edges."""
    active, archived, pinned, stale, superseded = conn.execute(
        """
        SELECT count(*) FILTER (WHERE archived_at IS NULL),
               count(*) FILTER (WHERE archived_at IS NOT NULL),
               count(*) FILTER (WHERE archived_at IS NULL AND pinned),
               count(*) FILTER (WHERE archived_at IS NULL AND confidence = 'stale'),
               count(*) FILTER (WHERE archived_at IS NULL AND superseded_by IS NOT NULL)
        FROM memory_nodes WHERE tenant_id = %s AND namespace = %s
        """,
        (scope.tenant_id, scope.namespace),
    ).fetchone()
    edges = conn.execute(
        "SELECT count(*) FROM graph_edges WHERE tenant_id = %s AND namespace = %s"
        " AND label = 'shares_concept_with' AND retracted_at IS NULL",
        (scope.tenant_id, scope.namespace),
    ).fetchone()[0]
    backlog = count_missing_embeddings(conn, scope) + count_outdated_embeddings(conn, scope, embedding_model)
    orphan_count, orphan_examples = orphans(conn, scope)
    return Snapshot(active, archived, pinned, stale, backlog, edges, superseded, orphan_count,
                    tuple(orphan_examples), embedding_model)


def orphans(conn: psycopg.Connection, scope: Scope) -> tuple[int, list[str]]:
    """(how many, a few ids) of the archived nodes whose keeper is archived, gone or elsewhere."""
    rows = conn.execute(
        """
        SELECT a.id::text, count(*) OVER ()
        FROM memory_nodes a LEFT JOIN memory_nodes k ON k.id = a.merged_into
        WHERE a.tenant_id = %s AND a.namespace = %s AND a.merged_into IS NOT NULL
          AND (k.id IS NULL OR k.archived_at IS NOT NULL
               OR k.tenant_id <> a.tenant_id OR k.namespace <> a.namespace)
        ORDER BY a.id LIMIT %s
        """,
        (scope.tenant_id, scope.namespace, ORPHAN_EXAMPLES),
    ).fetchall()
    return (rows[0][1] if rows else 0), [row[0] for row in rows]


def archived_by_runs(conn: psycopg.Connection, scope: Scope, run_ids: Sequence[str], merge_step: str) -> int:
    """Nodes the runs' merges (by `merge_step`) archived, counted from their revisions (what
    really happened)."""
    return conn.execute(
        """
        SELECT count(DISTINCT node_id) FROM node_revisions
        WHERE run_id = ANY(%s) AND tenant_id = %s AND namespace = %s
          AND step = %s
          AND before->>'archived_at' IS NULL AND after->>'archived_at' IS NOT NULL
        """,
        (list(run_ids), scope.tenant_id, scope.namespace, merge_step),
    ).fetchone()[0]


def previous_cycle(conn: psycopg.Connection, scope: Scope, run_ids: Sequence[str]) -> dict | None:
    """The namespace's last cycle with a health record made by other runs than `run_ids`: its
    health, its snapshot and when its row was written."""
    row = conn.execute(
        f"""
        SELECT metadata->'health', metadata->'snapshot', created_at FROM activity_log
        WHERE action = '{activity.ACTION}' AND tenant_id = %s AND namespace = %s
          AND metadata ? 'health' AND NOT (run_id = ANY(%s))
        ORDER BY created_at DESC LIMIT 1
        """,
        (scope.tenant_id, scope.namespace, list(run_ids)),
    ).fetchone()
    return {"health": row[0], "snapshot": row[1], "created_at": row[2]} if row else None


def undone_since(conn: psycopg.Connection, scope: Scope, since) -> bool:
    """Whether an undo touched the namespace after `since` (it may retract edges alone)."""
    return conn.execute(
        "SELECT EXISTS (SELECT 1 FROM activity_log WHERE action = 'curation_undo'"
        " AND tenant_id = %s AND namespace = %s AND created_at > %s)",
        (scope.tenant_id, scope.namespace, since),
    ).fetchone()[0]


UNDO_ACTION = "curation_undo"


def embedding_model_counted(conn: psycopg.Connection, scope: Scope) -> str | None:
    """The embedding model the namespace's last recorded health counted its backlog against."""
    row = conn.execute(
        "SELECT metadata->'snapshot'->>'embedding_model' FROM activity_log"
        " WHERE action IN (%s, %s) AND tenant_id = %s AND namespace = %s AND metadata ? 'snapshot'"
        " ORDER BY id DESC LIMIT 1",
        (activity.ACTION, UNDO_ACTION, scope.tenant_id, scope.namespace),
    ).fetchone()
    return row[0] if row else None


def record_undo_health(conn: psycopg.Connection, scope: Scope, undo_id: str, *, health: dict,
                       snapshot: dict) -> None:
    """Keep the namespace's health as the undo left it in the undo's activity row."""
    conn.execute(
        "UPDATE activity_log SET metadata = metadata || jsonb_build_object("
        "'health', %s::jsonb, 'snapshot', %s::jsonb, 'finished_at', now())"
        " WHERE action = %s AND run_id = %s AND tenant_id = %s AND namespace = %s",
        (json.dumps(health), json.dumps(snapshot), UNDO_ACTION, undo_id, scope.tenant_id, scope.namespace),
    )


def recorded_cycles(
    conn: psycopg.Connection, *, tenant_id: str | None = None, namespace: str | None = None,
    last: int = 5,
) -> list[dict]:
    """The last `last` records of each namespace's health (or of one), oldest first within a
    namespace: its cycles and the undos since (kind `cycle` or `undo`: an undo records the
    namespace as it left it). Each: partition, run, when it finished, its health, its checks,
    the runs that made it and the snapshot of the store its numbers came from."""
    rows = conn.execute(
        """
        SELECT tenant_id, namespace, run_id, metadata->>'finished_at', metadata->'health',
               metadata->'checks', metadata->'cycle', metadata->'snapshot', action
        FROM (
            SELECT *, row_number() OVER (PARTITION BY tenant_id, namespace ORDER BY id DESC) AS nth
            FROM activity_log
            WHERE action IN (%(cycle)s, %(undo)s) AND metadata ? 'health'
              AND (%(t)s::text IS NULL OR tenant_id = %(t)s)
              AND (%(n)s::text IS NULL OR namespace = %(n)s)
        ) recent
        WHERE nth <= %(last)s
        ORDER BY tenant_id, namespace, id
        """,
        {"t": tenant_id, "n": namespace, "last": last, "cycle": activity.ACTION, "undo": UNDO_ACTION},
    ).fetchall()
    return [
        {"tenant_id": t, "namespace": n, "run_id": run_id, "finished_at": finished, "health": health,
         "checks": checks or [], "cycle": cycle or {}, "snapshot": snapshot or {},
         "kind": "undo" if action == UNDO_ACTION else "cycle"}
        for t, n, run_id, finished, health, checks, cycle, snapshot, action in rows
    ]

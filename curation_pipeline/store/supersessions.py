"""Supersessions that may no longer hold, and putting an older memory back when one does not.

A supersession holds only while its successor still says the newer value. An agent may edit the
successor to say something else, move it to another tenant or namespace, or archive it; then the
older memory is hidden from `current_memory` for nothing, and its `superseded_by` may point out
of its namespace. Step 2 re-checks, each cycle:

- every superseded memory of the namespace whose successor is missing from it, or archived by
  anything but a merge (a merge re-points `superseded_by` to its keeper);
- every superseded memory whose successor was written since the pass began (`since`).

Which of them still hold is decided in core (supersession.still_supersedes); this module reads
them and puts the others back, each with a revision saying why.
"""

from __future__ import annotations

import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.store.revisions import PlanColumn, update_nodes

GONE, MOVED, ARCHIVED, EDITED = "missing", "moved out of the namespace", "archived", "edited"


def supersessions_to_recheck(conn: psycopg.Connection, scope: Scope, since: SyncPosition) -> list[dict]:
    """The superseded memories to re-check, with their successor as it is now and how the
    supersession was made (from the revision that made it)."""
    rows = conn.execute(
        """
        SELECT o.id::text, o.row_version, o.pointer_summary, o.superseded_by::text,
               s.id IS NULL, s.tenant_id IS DISTINCT FROM o.tenant_id OR s.namespace IS DISTINCT FROM o.namespace,
               s.archived_at IS NOT NULL AND s.merged_into IS NULL,
               s.pointer_summary,
               made.reason, made.before->>'confidence'
        FROM memory_nodes o
        LEFT JOIN memory_nodes s ON s.id = o.superseded_by
        LEFT JOIN LATERAL (
            SELECT r.reason, r.before FROM node_revisions r
            WHERE r.node_id = o.id AND r.reason ? 'superseded_by'
            ORDER BY r.id DESC LIMIT 1
        ) made ON true
        WHERE o.tenant_id = %(t)s AND o.namespace = %(n)s AND o.superseded_by IS NOT NULL
          AND o.archived_at IS NULL
          AND (s.id IS NULL OR s.tenant_id <> o.tenant_id OR s.namespace <> o.namespace
               OR (s.archived_at IS NOT NULL AND s.merged_into IS NULL)
               OR s.content_txid >= %(txid)s::text::xid8 OR s.content_txid = ANY(%(pending)s::text[]::xid8[]))
        ORDER BY o.id
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "txid": str(since.txid),
         "pending": [str(txid) for txid in since.pending]},
    ).fetchall()
    found = []
    for (older_id, version, older_text, successor_id, gone, moved, archived, successor_text,
         reason, confidence_before) in rows:
        problem = GONE if gone else MOVED if moved else ARCHIVED if archived else None
        found.append({
            "older_id": older_id, "row_version": version, "older_text": older_text or "",
            "successor_id": successor_id, "problem": problem,
            "successor_text": None if problem else (successor_text or ""),
            "made": reason or {}, "confidence_before": confidence_before,
        })
    return found


def restore_superseded(conn: psycopg.Connection, scope: Scope, undone: list[dict]) -> int:
    """Put each older memory back into current memory (confidence as it was before it was
    superseded, no successor, no end of validity), with a revision saying why."""
    if not undone:
        return 0
    changed = update_nodes(
        conn, scope,
        ids=[row["older_id"] for row in undone], row_versions=[row["row_version"] for row in undone],
        reasons=[{"supersession_undone": {"superseded_by": row["successor_id"], "why": row["why"]}} for row in undone],
        assignments=("confidence = CASE WHEN n.confidence = 'superseded' THEN p.confidence ELSE n.confidence END, "
                     "superseded_by = NULL, valid_until = NULL"),
        columns=[_confidence_column(undone)],
    )
    return len(changed)


def _confidence_column(undone: list[dict]) -> PlanColumn:
    return PlanColumn("confidence", "text", [
        row["confidence_before"] if row["confidence_before"] not in (None, "superseded") else "default"
        for row in undone])


def invalid_supersessions(conn: psycopg.Connection, scope: Scope, examples: int) -> tuple[int, list[str]]:
    """(how many, a few ids) of the superseded memories of the namespace whose successor is
    missing from it or archived by anything but a merge: what the `supersessions_hold` check
    counts after a cycle, with those whose successor was edited (successors_edited_since)."""
    rows = conn.execute(
        """
        SELECT o.id::text, count(*) OVER ()
        FROM memory_nodes o LEFT JOIN memory_nodes s ON s.id = o.superseded_by
        WHERE o.tenant_id = %s AND o.namespace = %s AND o.superseded_by IS NOT NULL AND o.archived_at IS NULL
          AND (s.id IS NULL OR s.tenant_id <> o.tenant_id OR s.namespace <> o.namespace
               OR (s.archived_at IS NOT NULL AND s.merged_into IS NULL))
        ORDER BY o.id LIMIT %s
        """,
        (scope.tenant_id, scope.namespace, examples),
    ).fetchall()
    return (rows[0][1] if rows else 0), [row[0] for row in rows]


def successors_edited_since(conn: psycopg.Connection, scope: Scope, limit: int) -> list[dict]:
    """Superseded memories of the namespace whose successor (active, in the namespace) was
    written after the supersession was made (its content_txid is past the older memory's, which
    the supersession set), at most `limit`, with what core/supersession.still_supersedes needs."""
    rows = conn.execute(
        """
        SELECT o.id::text, o.pointer_summary, s.pointer_summary, made.reason
        FROM memory_nodes o
        JOIN memory_nodes s ON s.id = o.superseded_by
        LEFT JOIN LATERAL (
            SELECT r.reason FROM node_revisions r
            WHERE r.node_id = o.id AND r.reason ? 'superseded_by'
            ORDER BY r.id DESC LIMIT 1
        ) made ON true
        WHERE o.tenant_id = %s AND o.namespace = %s AND o.superseded_by IS NOT NULL AND o.archived_at IS NULL
          AND s.tenant_id = o.tenant_id AND s.namespace = o.namespace AND s.archived_at IS NULL
          AND s.content_txid > o.content_txid
        ORDER BY o.id LIMIT %s
        """,
        (scope.tenant_id, scope.namespace, limit),
    ).fetchall()
    return [{"older_id": older_id, "older_text": older or "", "successor_text": successor or "", "made": made or {}}
            for older_id, older, successor, made in rows]

"""What the curator did to one node, and which nodes were merged into it."""

from __future__ import annotations

import psycopg


def node_history(conn: psycopg.Connection, node_id: str) -> list[dict]:
    """Every revision of the node, oldest first."""
    cursor = conn.execute(
        "SELECT id, created_at, run_id, step, before, after, reason FROM node_revisions"
        " WHERE node_id = %s::uuid ORDER BY id",
        (node_id,),
    )
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def merged_into(conn: psycopg.Connection, node_id: str) -> list[dict]:
    """Nodes archived into this one (now or at some point), with their text and the merge's why."""
    cursor = conn.execute(
        """
        SELECT DISTINCT ON (r.node_id) r.node_id::text AS id, r.run_id, r.created_at,
               r.before->>'pointer_summary' AS text, r.reason,
               m.merged_into::text AS merged_into_now
        FROM node_revisions r JOIN memory_nodes m ON m.id = r.node_id
        WHERE r.after->>'merged_into' = %(id)s::text AND r.step <> 'undo'
        ORDER BY r.node_id, r.id
        """,
        {"id": node_id},
    )
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def node_recall(conn: psycopg.Connection, node_id: str) -> dict:
    """The node's recall: its stored columns and the accesses `recall` recorded (sql/016)."""
    row = conn.execute(
        "SELECT m.recall_count, m.last_recalled_at, coalesce(a.recall_count, 0), a.last_recalled_at"
        " FROM memory_nodes m LEFT JOIN memory_access a ON a.node_id = m.id WHERE m.id = %s::uuid",
        (node_id,),
    ).fetchone()
    return dict(zip(("stored_count", "stored_last", "accessed_count", "accessed_last"), row))


def node_exists(conn: psycopg.Connection, node_id: str) -> bool:
    return conn.execute("SELECT 1 FROM memory_nodes WHERE id = %s::uuid", (node_id,)).fetchone() is not None


_STATUS = """CASE WHEN merged_into IS NOT NULL THEN 'merged'
                    WHEN superseded_by IS NOT NULL THEN 'superseded'
                    WHEN archived_at IS NOT NULL THEN 'archived' ELSE 'live' END"""


def node_now(conn: psycopg.Connection, node_id: str) -> dict | None:
    """The node as it is now: namespace, status (live, merged, superseded, archived), its text,
    the node it is merged into or superseded by, whether it is pinned, its confidence."""
    cursor = conn.execute(
        f"""
        SELECT id::text AS id, tenant_id, namespace, pointer_summary AS text, {_STATUS} AS status,
               merged_into::text AS merged_into, superseded_by::text AS superseded_by, pinned, confidence
        FROM memory_nodes WHERE id = %s::uuid
        """,
        (node_id,),
    )
    row = cursor.fetchone()
    if not row:
        return None
    now = dict(zip([column.name for column in cursor.description], row))
    now["versions"] = supersession_chain(conn, node_id)
    return now


def supersession_chain(conn: psycopg.Connection, node_id: str, limit: int = 50) -> list[dict]:
    """The versions of the fact the node is one of, oldest first: the nodes before it (each
    superseded by the next) and after it (its successor, that one's, ...), with status and text.
    Empty when nothing supersedes it and it supersedes nothing."""
    cursor = conn.execute(
        f"""
        WITH RECURSIVE later(id, depth) AS (
            SELECT id, 0 FROM memory_nodes WHERE id = %(id)s::uuid
            UNION ALL
            SELECT m.superseded_by, l.depth + 1 FROM later l JOIN memory_nodes m ON m.id = l.id
            WHERE m.superseded_by IS NOT NULL AND l.depth < %(limit)s
        ),
        earlier(id, depth) AS (
            SELECT id, 0 FROM memory_nodes WHERE id = %(id)s::uuid
            UNION ALL
            SELECT m.id, e.depth - 1 FROM earlier e JOIN memory_nodes m ON m.superseded_by = e.id
            WHERE e.depth > -%(limit)s
        ),
        chain AS (SELECT id, min(depth) AS depth FROM (SELECT * FROM later UNION ALL SELECT * FROM earlier) c GROUP BY id)
        SELECT n.id::text AS id, {_STATUS} AS status, n.pointer_summary AS text, n.created_at
        FROM chain c JOIN memory_nodes n ON n.id = c.id
        ORDER BY c.depth, n.created_at, n.id
        """,
        {"id": node_id, "limit": limit},
    )
    rows = [dict(zip([column.name for column in cursor.description], row)) for row in cursor.fetchall()]
    return rows if len(rows) > 1 else []


def search_nodes(conn: psycopg.Connection, text: str, tenant_id: str | None = None,
                 namespace: str | None = None, limit: int = 50) -> list[dict]:
    """Nodes whose text contains `text` (case-insensitive, LIKE wildcards taken literally),
    live ones first, then newest first: how a user finds the id `history` and `graph` need."""
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    cursor = conn.execute(
        f"""
        SELECT id::text AS id, tenant_id, namespace, pointer_summary AS text, {_STATUS} AS status
        FROM memory_nodes
        WHERE pointer_summary ILIKE %(pattern)s
          AND (%(tenant)s::text IS NULL OR (tenant_id = %(tenant)s AND namespace = %(namespace)s))
        ORDER BY archived_at IS NOT NULL, created_at DESC, id
        LIMIT %(limit)s
        """,
        {"pattern": pattern, "tenant": tenant_id, "namespace": namespace, "limit": limit},
    )
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def namespace_has_nodes(conn: psycopg.Connection, tenant_id: str, namespace: str) -> bool:
    return conn.execute("SELECT 1 FROM memory_nodes WHERE tenant_id = %s AND namespace = %s LIMIT 1",
                        (tenant_id, namespace)).fetchone() is not None

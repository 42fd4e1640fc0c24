"""Step 6 IO: load changed nodes from one snapshot, upsert vertices, add merge and supersession
edges.

Nothing in the graph is ever deleted: an archived node marks its vertex archived and keeps its
edges; a merge adds a `merged_into` edge from the archived node's vertex to its keeper's; a
supersession a `supersedes` edge from the successor's vertex to the superseded one's, carrying
`valid_from` (when the old value was written) and `valid_until` (when it stopped being current).
"""

from __future__ import annotations

import json

import polars as pl
import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.graph_sync import (
    CHANGED_SCHEMA,
    VERTEX_SUMMARY_CHARS,
    GraphSyncPlan,
    SyncPosition,
)

# The text is clipped where it is read (VERTEX_SUMMARY_CHARS): a huge memory never travels here.
_CHANGED_COLUMNS = f"""
    id::text, tenant_id, namespace, heat, pinned,
    CASE WHEN char_length(pointer_summary) > {VERTEX_SUMMARY_CHARS}
         THEN left(pointer_summary, {VERTEX_SUMMARY_CHARS - 1}) || '…' ELSE pointer_summary END,
    archived_at IS NOT NULL, last_txid::text::bigint
"""


def past_cursor(node_id: str | None, column: str) -> str:
    """The rows past a cursor `(%(txid)s, %(node)s)` on `(column, id)`, as a condition the index
    starts its range at. A row comparison, not `column > txid OR id > node`: with the OR only
    the transaction id bounds the range, and a cursor inside one transaction's rows (a bulk
    COPY writes them all with one id) read every row of it before the cursor again, batch
    after batch, so each batch of a catch-up cost more than the last."""
    if node_id is None:
        return f"{column} >= %(txid)s::text::xid8"
    return f"({column}, id) > (%(txid)s::text::xid8, %(node)s::uuid)"


def load_sync_position(conn: psycopg.Connection, scope: Scope) -> SyncPosition:
    row = conn.execute(
        "SELECT graph_sync_txid::text::bigint, graph_sync_node_id::text,"
        " graph_sync_pending::text[]::bigint[] FROM namespace_activity"
        " WHERE tenant_id = %s AND namespace = %s",
        (scope.tenant_id, scope.namespace),
    ).fetchone()
    return SyncPosition(row[0], row[1], tuple(row[2])) if row else SyncPosition()


def load_changes(
    conn: psycopg.Connection, scope: Scope, position: SyncPosition, cap: int
) -> tuple[pl.DataFrame, pl.DataFrame, int, list[int]]:
    """(rows past the cursor, rows of pending transactions, snapshot xmax, in-progress ids).

    One statement, so the rows and the snapshot facts come from the same snapshot.
    """
    rows = conn.execute(
        f"""
        WITH snap AS (SELECT pg_current_snapshot() AS s),
        -- An index range on (tenant_id, namespace, last_txid, id) that starts at the cursor and
        -- stops after `limit` rows (memory_nodes_change_cursor, sql/009): its cost follows the
        -- cap, not the namespace nor the cursor's place among one bulk transaction's rows.
        past_cursor AS (
            SELECT {_CHANGED_COLUMNS}, false AS from_pending FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s
              AND {past_cursor(position.node_id, "last_txid")}
            -- Qualified: unqualified, these names are the output columns (text and bigint),
            -- and a sort of every row past the cursor would come before the LIMIT.
            ORDER BY memory_nodes.last_txid, memory_nodes.id
            LIMIT %(limit)s
        ),
        pending AS (
            SELECT {_CHANGED_COLUMNS}, true FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s
              AND last_txid = ANY(%(pending)s::text[]::xid8[])
        )
        SELECT (SELECT pg_snapshot_xmax(s)::text::bigint FROM snap),
               (SELECT array(SELECT x::text::bigint FROM pg_snapshot_xip(s) AS x) FROM snap),
               r.*
        FROM (SELECT * FROM past_cursor UNION ALL SELECT * FROM pending) r
        RIGHT JOIN (SELECT 1) one ON true
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "txid": str(position.txid),
         "node": position.node_id, "pending": [str(txid) for txid in position.pending],
         "limit": cap + 1},
    ).fetchall()
    snapshot_xmax, in_progress = rows[0][0], list(rows[0][1])
    records = [row[2:] for row in rows if row[2] is not None]
    frame = pl.DataFrame(
        [record[:-1] for record in records], schema=CHANGED_SCHEMA, orient="row"
    ).with_columns(pl.Series("from_pending", [record[-1] for record in records], dtype=pl.Boolean))
    after_cursor = frame.filter(~pl.col("from_pending")).drop("from_pending")
    from_pending = frame.filter(pl.col("from_pending")).drop("from_pending")
    return after_cursor, from_pending, snapshot_xmax, in_progress


def apply_graph_sync(conn: psycopg.Connection, scope: Scope, plan: GraphSyncPlan) -> dict:
    """Upsert the planned vertices and add merge edges; every change lands in graph_revisions."""
    vertices = plan.vertices
    ids = vertices["node_id"].to_list()
    upserted = upsert_vertices(conn, scope, vertices)
    # Edges for merges whose two vertices now both exist, from either side of this batch.
    edges = [] if not ids else conn.execute(
        """
        WITH wanted AS (
            SELECT m.tenant_id, m.namespace, m.id AS source_id, m.merged_into AS target_id,
                   'merged_into' AS label, '{}'::jsonb AS properties
            -- Only between two vertices of this namespace: a pointer out of it (an agent moved
            -- one node; no_orphaned_archives and supersessions_hold name it) draws no edge.
            FROM memory_nodes m
            JOIN graph_vertices s ON s.node_id = m.id AND (s.tenant_id, s.namespace) = (m.tenant_id, m.namespace)
            JOIN graph_vertices k ON k.node_id = m.merged_into AND (k.tenant_id, k.namespace) = (m.tenant_id, m.namespace)
            WHERE m.tenant_id = %(t)s AND m.namespace = %(n)s AND m.merged_into IS NOT NULL
              AND (m.id = ANY(%(ids)s::uuid[]) OR m.merged_into = ANY(%(ids)s::uuid[]))
            UNION ALL
            -- A superseded node: its successor supersedes it, with the time the old value held.
            SELECT m.tenant_id, m.namespace, m.superseded_by, m.id, 'supersedes',
                   jsonb_build_object('valid_from', m.created_at, 'valid_until', m.valid_until)
            FROM memory_nodes m
            JOIN graph_vertices s ON s.node_id = m.superseded_by AND (s.tenant_id, s.namespace) = (m.tenant_id, m.namespace)
            JOIN graph_vertices o ON o.node_id = m.id AND (o.tenant_id, o.namespace) = (m.tenant_id, m.namespace)
            WHERE m.tenant_id = %(t)s AND m.namespace = %(n)s AND m.superseded_by IS NOT NULL
              AND (m.id = ANY(%(ids)s::uuid[]) OR m.superseded_by = ANY(%(ids)s::uuid[]))
        ),
        previous AS (
            SELECT e.* FROM graph_edges e JOIN wanted w USING (source_id, target_id, label)
        ),
        -- New edges are added; a retracted edge comes back when its merge or supersession is
        -- made again (after an undo, or after both nodes moved together), in the namespace it is
        -- made in now: the row is one per two nodes and label, whatever namespace it was in.
        added AS (
            INSERT INTO graph_edges AS e (tenant_id, namespace, source_id, target_id, label, properties)
            SELECT * FROM wanted
            ON CONFLICT (source_id, target_id, label) DO UPDATE
                SET retracted_at = NULL, retracted_by = NULL, properties = EXCLUDED.properties,
                    tenant_id = EXCLUDED.tenant_id, namespace = EXCLUDED.namespace
                WHERE e.retracted_at IS NOT NULL
            RETURNING *
        )
        INSERT INTO graph_revisions (run_id, step, tenant_id, namespace, kind, edge_id, before, after)
        SELECT %(run_id)s, %(step)s, a.tenant_id, a.namespace, 'edge', a.id,
               CASE WHEN p.id IS NULL THEN NULL ELSE to_jsonb(p) END, to_jsonb(a)
        FROM added a LEFT JOIN previous p ON p.id = a.id
        RETURNING edge_id
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "ids": ids, "run_id": scope.run_id,
         "step": scope.step},
    ).fetchall()
    _save_position(conn, scope, plan.next_position)
    return {
        "nodes_considered": vertices.height,
        "vertices_created": sum(1 for created, _ in upserted if created),
        "vertices_updated": sum(1 for created, _ in upserted if not created),
        "vertices_archived": sum(1 for _, newly_archived in upserted if newly_archived),
        "edges_created": len(edges),
        "remaining": plan.remaining,
    }


def upsert_vertices(
    conn: psycopg.Connection, scope: Scope, vertices: pl.DataFrame, reason: dict | None = None
) -> list[tuple[bool, bool]]:
    """Create or update vertices (VERTEX_COLUMNS) where they differ; each change is recorded in
    graph_revisions. Returns (created, newly archived) per vertex that changed."""
    if vertices.is_empty():  # nothing changed: no statement at all
        return []
    ids = vertices["node_id"].to_list()
    _retract_edges_of_moved_vertices(conn, scope, vertices)
    upserted = conn.execute(
        """
        WITH previous AS (
            SELECT * FROM graph_vertices WHERE node_id = ANY(%(ids)s::uuid[])
        ),
        upserted AS (
            INSERT INTO graph_vertices AS v
                (node_id, tenant_id, namespace, heat, pinned, summary, archived)
            SELECT * FROM unnest(%(ids)s::uuid[], %(tenants)s::text[], %(namespaces)s::text[],
                                 %(heat)s::float8[], %(pinned)s::bool[], %(summary)s::text[],
                                 %(archived)s::bool[])
            ON CONFLICT (node_id) DO UPDATE
                SET tenant_id = EXCLUDED.tenant_id, namespace = EXCLUDED.namespace,
                    heat = EXCLUDED.heat, pinned = EXCLUDED.pinned, summary = EXCLUDED.summary,
                    archived = EXCLUDED.archived, synced_at = now()
                WHERE (v.tenant_id, v.namespace, v.heat, v.pinned, v.summary, v.archived)
                      IS DISTINCT FROM (EXCLUDED.tenant_id, EXCLUDED.namespace, EXCLUDED.heat,
                                        EXCLUDED.pinned, EXCLUDED.summary, EXCLUDED.archived)
            RETURNING *
        ),
        logged AS (
            INSERT INTO graph_revisions (run_id, step, tenant_id, namespace, kind, vertex_id, before, after, reason)
            SELECT %(run_id)s, %(step)s, u.tenant_id, u.namespace, 'vertex', u.node_id,
                   CASE WHEN p.node_id IS NULL THEN NULL ELSE to_jsonb(p) - 'synced_at' END,
                   to_jsonb(u) - 'synced_at', %(reason)s::jsonb
            FROM upserted u LEFT JOIN previous p USING (node_id)
        )
        SELECT p.node_id IS NULL, u.archived AND NOT coalesce(p.archived, false)
        FROM upserted u LEFT JOIN previous p USING (node_id)
        """,
        {"ids": ids, "tenants": vertices["tenant_id"].to_list(),
         "namespaces": vertices["namespace"].to_list(), "heat": vertices["heat"].to_list(),
         "pinned": vertices["pinned"].to_list(), "summary": vertices["summary"].to_list(),
         "archived": vertices["archived"].to_list(), "run_id": scope.run_id, "step": scope.step,
         "reason": json.dumps(reason or {})},
    ).fetchall()
    return upserted


def _retract_edges_of_moved_vertices(conn: psycopg.Connection, scope: Scope, vertices: pl.DataFrame) -> None:
    """A node an agent moved to another tenant or namespace takes none of its edges along: they
    are retracted (recorded, so undo sees them) before its vertex follows it."""
    conn.execute(
        """
        WITH moved AS (
            SELECT v.node_id FROM graph_vertices v
            JOIN unnest(%(ids)s::uuid[], %(tenants)s::text[], %(namespaces)s::text[])
                 AS p(node_id, tenant_id, namespace) USING (node_id)
            WHERE (v.tenant_id, v.namespace) IS DISTINCT FROM (p.tenant_id, p.namespace)
        ),
        previous AS (
            SELECT e.* FROM graph_edges e
            WHERE e.retracted_at IS NULL
              AND (e.source_id IN (SELECT node_id FROM moved) OR e.target_id IN (SELECT node_id FROM moved))
        ),
        retracted AS (
            UPDATE graph_edges e SET retracted_at = now(), retracted_by = %(run_id)s
            FROM previous p WHERE e.id = p.id RETURNING e.*
        )
        INSERT INTO graph_revisions (run_id, step, tenant_id, namespace, kind, edge_id, before, after, reason)
        SELECT %(run_id)s, %(step)s, r.tenant_id, r.namespace, 'edge', r.id, to_jsonb(p), to_jsonb(r),
               '{"retracted": "a node of this edge moved to another tenant or namespace"}'::jsonb
        FROM retracted r JOIN previous p USING (id)
        """,
        {"ids": vertices["node_id"].to_list(), "tenants": vertices["tenant_id"].to_list(),
         "namespaces": vertices["namespace"].to_list(), "run_id": scope.run_id, "step": scope.step},
    )


def reproject_vertices(conn: psycopg.Connection, scope: Scope, node_ids: list[str], reason: dict) -> int:
    """Set the vertices of these nodes to what the nodes are now (after an undo restored them)."""
    cursor = conn.execute(
        f"SELECT {_CHANGED_COLUMNS} FROM memory_nodes"
        " WHERE id = ANY(%s::uuid[]) AND tenant_id = %s AND namespace = %s ORDER BY id",
        (node_ids, scope.tenant_id, scope.namespace),
    )
    nodes = pl.DataFrame(cursor.fetchall(), schema=CHANGED_SCHEMA, orient="row")
    vertices = nodes.select(
        pl.col("id").alias("node_id"), "tenant_id", "namespace", "heat", "pinned",
        pl.col("pointer_summary").alias("summary"), "archived",
    )
    return len(upsert_vertices(conn, scope, vertices, reason)) if vertices.height else 0


def _save_position(conn: psycopg.Connection, scope: Scope, position: SyncPosition) -> None:
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace, graph_sync_txid, graph_sync_node_id,
                                        graph_sync_pending, graph_synced_at)
        VALUES (%s, %s, %s::text::xid8, %s::uuid, %s::text[]::xid8[], now())
        ON CONFLICT (tenant_id, namespace) DO UPDATE
            SET graph_sync_txid = EXCLUDED.graph_sync_txid,
                graph_sync_node_id = EXCLUDED.graph_sync_node_id,
                graph_sync_pending = EXCLUDED.graph_sync_pending,
                graph_synced_at = EXCLUDED.graph_synced_at
        """,
        (scope.tenant_id, scope.namespace, str(position.txid), position.node_id,
         [str(txid) for txid in position.pending]),
    )


def neighbourhood(conn: psycopg.Connection, node_id: str) -> dict | None:
    """A node's vertex and its live edges (retracted ones left out), or None without a vertex."""
    vertex = conn.execute(
        "SELECT node_id::text, tenant_id, namespace, heat, pinned, summary, archived"
        " FROM graph_vertices WHERE node_id = %s::uuid",
        (node_id,),
    ).fetchone()
    if vertex is None:
        return None
    edges = conn.execute(
        """
        SELECT e.label, e.source_id::text, e.target_id::text, e.properties,
               other.summary, other.archived
        FROM graph_edges e
        JOIN graph_vertices other
          ON other.node_id = CASE WHEN e.source_id = %(id)s::uuid THEN e.target_id ELSE e.source_id END
        WHERE (e.source_id = %(id)s::uuid OR e.target_id = %(id)s::uuid) AND e.retracted_at IS NULL
        ORDER BY e.label, e.id
        """,
        {"id": node_id},
    ).fetchall()
    names = ("node_id", "tenant_id", "namespace", "heat", "pinned", "summary", "archived")
    return {
        "vertex": dict(zip(names, vertex)),
        "edges": [
            {"label": label, "source": source, "target": target, "properties": properties,
             "other_summary": summary, "other_archived": archived}
            for label, source, target, properties, summary, archived in edges
        ],
    }

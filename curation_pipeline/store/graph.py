"""Step 6 IO: load changed nodes past the namespace's watermark, upsert vertices, add edges.

Nothing in the graph is ever deleted: an archived node marks its vertex archived and keeps its
edges; a merge adds a `merged_into` edge from the archived node's vertex to its keeper's.
"""

from __future__ import annotations

import polars as pl
import psycopg

from curation_pipeline.steps.graph_sync import CHANGED_SCHEMA, GraphSyncPlan, Watermark
from curation_pipeline.store.revisions import Scope


def load_changed_nodes(conn: psycopg.Connection, scope: Scope, cap: int) -> tuple[pl.DataFrame, int]:
    """Rows changed since the watermark (at most cap + 1) and the snapshot xmin taken first."""
    snapshot_xmin = int(
        conn.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").fetchone()[0]
    )
    watermark = conn.execute(
        "SELECT graph_sync_watermark::text, graph_sync_node_id::text FROM namespace_activity"
        " WHERE tenant_id = %s AND namespace = %s",
        (scope.tenant_id, scope.namespace),
    ).fetchone() or ("0", None)
    cursor = conn.execute(
        """
        SELECT id::text, heat, pinned, pointer_summary, archived_at IS NOT NULL,
               last_txid::text::bigint
        FROM memory_nodes
        WHERE tenant_id = %(t)s AND namespace = %(n)s
          AND (last_txid > %(wm)s::xid8
               OR (last_txid = %(wm)s::xid8 AND (%(wm_id)s::uuid IS NULL OR id > %(wm_id)s::uuid)))
        ORDER BY last_txid, id
        LIMIT %(limit)s
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "wm": watermark[0], "wm_id": watermark[1],
         "limit": cap + 1},
    )
    changed = pl.DataFrame(cursor.fetchall(), schema=CHANGED_SCHEMA, orient="row")
    return changed, snapshot_xmin


def apply_graph_sync(conn: psycopg.Connection, scope: Scope, plan: GraphSyncPlan) -> dict:
    vertices = plan.vertices
    upserted = conn.execute(
        """
        INSERT INTO graph_vertices AS v (node_id, tenant_id, namespace, heat, pinned, summary, archived)
        SELECT p.node_id, %s, %s, p.heat, p.pinned, p.summary, p.archived
        FROM unnest(%s::uuid[], %s::float8[], %s::bool[], %s::text[], %s::bool[])
             AS p(node_id, heat, pinned, summary, archived)
        ON CONFLICT (node_id) DO UPDATE
            SET heat = EXCLUDED.heat, pinned = EXCLUDED.pinned, summary = EXCLUDED.summary,
                archived = EXCLUDED.archived, synced_at = now()
            WHERE (v.heat, v.pinned, v.summary, v.archived)
                  IS DISTINCT FROM (EXCLUDED.heat, EXCLUDED.pinned, EXCLUDED.summary, EXCLUDED.archived)
        RETURNING (xmax = 0) AS inserted, archived
        """,
        (
            scope.tenant_id, scope.namespace,
            vertices["node_id"].to_list(), vertices["heat"].to_list(),
            vertices["pinned"].to_list(), vertices["summary"].to_list(),
            vertices["archived"].to_list(),
        ),
    ).fetchall()
    # Edges for merges whose two vertices now both exist, from either side of this batch.
    edges = conn.execute(
        """
        INSERT INTO graph_edges (tenant_id, namespace, source_id, target_id, label)
        SELECT m.tenant_id, m.namespace, m.id, m.merged_into, 'merged_into'
        FROM memory_nodes m
        JOIN graph_vertices s ON s.node_id = m.id
        JOIN graph_vertices k ON k.node_id = m.merged_into
        WHERE m.tenant_id = %(t)s AND m.namespace = %(n)s AND m.merged_into IS NOT NULL
          AND (m.id = ANY(%(ids)s::uuid[]) OR m.merged_into = ANY(%(ids)s::uuid[]))
        ON CONFLICT (source_id, target_id, label) DO NOTHING
        RETURNING id
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "ids": vertices["node_id"].to_list()},
    ).fetchall()
    _save_watermark(conn, scope, plan.next_watermark)
    return {
        "nodes_considered": vertices.height,
        "vertices_created": sum(1 for inserted, _ in upserted if inserted),
        "vertices_updated": sum(1 for inserted, _ in upserted if not inserted),
        "vertices_archived": sum(1 for _, archived in upserted if archived),
        "edges_created": len(edges),
        "remaining": plan.remaining,
    }


def _save_watermark(conn: psycopg.Connection, scope: Scope, watermark: Watermark) -> None:
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace, graph_sync_watermark,
                                        graph_sync_node_id, graph_synced_at)
        VALUES (%s, %s, %s::text::xid8, %s::uuid, now())
        ON CONFLICT (tenant_id, namespace) DO UPDATE
            SET graph_sync_watermark = EXCLUDED.graph_sync_watermark,
                graph_sync_node_id = EXCLUDED.graph_sync_node_id,
                graph_synced_at = EXCLUDED.graph_synced_at
        """,
        (scope.tenant_id, scope.namespace, str(watermark.txid), watermark.node_id),
    )

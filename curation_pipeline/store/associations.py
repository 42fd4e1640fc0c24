"""Step 6b IO: which association edges a namespace has, and adding new ones.

Every added edge is recorded in graph_revisions (so `undo` retracts it) and checked against the
namespace twice: the insert only pairs nodes of the run's own namespace, and the
`graph_edges_same_namespace` trigger (sql/007) refuses any edge whose two vertices are not both
in the edge's tenant and namespace, whoever writes it.
"""

from __future__ import annotations

import json

import polars as pl
import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.associate import ASSOCIATION_LABEL
from curation_pipeline.core.steps.similarity import id_pairs
from curation_pipeline.store.graph import reproject_vertices


def existing_pairs(
    conn: psycopg.Connection, scope: Scope, candidates: pl.DataFrame
) -> pl.DataFrame:
    """Which candidate pairs already have an association edge (ID_PAIR_SCHEMA), retracted ones included. Only the
    candidates are looked up (by the edges' unique index), not every edge of the namespace."""
    rows = conn.execute(
        """
        SELECT e.source_id::text, e.target_id::text
        FROM unnest(%s::uuid[], %s::uuid[]) AS c(source_id, target_id)
        JOIN graph_edges e USING (source_id, target_id)
        WHERE e.label = %s AND e.tenant_id = %s AND e.namespace = %s
        """,
        (candidates["source_id"].to_list(), candidates["target_id"].to_list(), ASSOCIATION_LABEL,
         scope.tenant_id, scope.namespace),
    ).fetchall()
    return id_pairs(rows)


def add_edges(conn: psycopg.Connection, scope: Scope, edges: pl.DataFrame, model: str) -> dict:
    """Insert the planned edges (steps/associate.py EDGE_SCHEMA); returns counts.

    A node the graph sync has not reached yet (its cap) gets its vertex now, from the node as it
    is: the same vertex the sync would write, so the sync later finds nothing to change.
    """
    if edges.height == 0:
        return {"edges_added": 0, "vertices_created": 0, "skipped_concurrent": 0}
    ends = sorted(set(edges["source_id"].to_list()) | set(edges["target_id"].to_list()))
    missing = [row[0] for row in conn.execute(
        "SELECT id::text FROM unnest(%s::uuid[]) AS id"
        " WHERE NOT EXISTS (SELECT 1 FROM graph_vertices v WHERE v.node_id = id)",
        (ends,),
    ).fetchall()]
    created = reproject_vertices(conn, scope, missing, {"for": "association"}) if missing else 0
    added = conn.execute(
        """
        WITH wanted AS (
            SELECT w.source_id, w.target_id, w.similarity
            FROM unnest(%(sources)s::uuid[], %(targets)s::uuid[], %(sims)s::float8[],
                        %(source_versions)s::bigint[], %(target_versions)s::bigint[])
                 AS w(source_id, target_id, similarity, source_version, target_version)
            -- Both ends must be active nodes of this run's namespace, unchanged since they were
            -- compared; the share locks keep an agent from changing them until this commits.
            JOIN memory_nodes s ON s.id = w.source_id AND s.tenant_id = %(t)s
                 AND s.namespace = %(n)s AND s.archived_at IS NULL AND s.row_version = w.source_version
            JOIN memory_nodes g ON g.id = w.target_id AND g.tenant_id = %(t)s
                 AND g.namespace = %(n)s AND g.archived_at IS NULL AND g.row_version = w.target_version
            FOR SHARE OF s, g
        ),
        added AS (
            INSERT INTO graph_edges (tenant_id, namespace, source_id, target_id, label, properties)
            SELECT %(t)s, %(n)s, source_id, target_id, %(label)s,
                   jsonb_build_object('similarity', round(similarity::numeric, 4), 'model', %(model)s::text)
            FROM wanted
            ON CONFLICT (source_id, target_id, label) DO NOTHING
            RETURNING *
        )
        INSERT INTO graph_revisions (run_id, step, tenant_id, namespace, kind, edge_id, before, after, reason)
        SELECT %(run)s, %(step)s, a.tenant_id, a.namespace, 'edge', a.id, NULL, to_jsonb(a), %(reason)s::jsonb
        FROM added a
        RETURNING edge_id
        """,
        {"sources": edges["source_id"].to_list(), "targets": edges["target_id"].to_list(),
         "sims": edges["similarity"].to_list(), "source_versions": edges["source_version"].to_list(),
         "target_versions": edges["target_version"].to_list(), "t": scope.tenant_id, "n": scope.namespace,
         "label": ASSOCIATION_LABEL, "model": model, "run": scope.run_id, "step": scope.step,
         "reason": json.dumps({"association": "similar, not the same"})},
    ).fetchall()
    # A pair skipped because an agent changed a node is compared again: the change puts the node
    # in the next pass's changed set.
    return {"edges_added": len(added), "vertices_created": created,
            "skipped_concurrent": edges.height - len(added)}

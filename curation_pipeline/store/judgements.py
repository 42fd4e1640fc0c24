"""The judge's verdicts on similar pairs (step 2 with the LLM on), kept in `pair_judgements`.

One row per pair and pair of row versions: a pair is not asked again while both nodes are as
they were when it was judged, and step 6b links the pairs judged "related" (and leaves those
judged "distinct" unlinked) while their versions still hold.
"""

from __future__ import annotations

import polars as pl
import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.associate import EDGE_SCHEMA
from curation_pipeline.core.steps.similarity import ID_PAIR_SCHEMA


def judged_pairs(conn: psycopg.Connection, scope: Scope, nodes: pl.DataFrame) -> pl.DataFrame:
    """ID_PAIR_SCHEMA pairs among `nodes` (id, row_version) already judged at their versions."""
    if nodes.is_empty():
        return pl.DataFrame(schema=ID_PAIR_SCHEMA)
    rows = conn.execute(
        """
        WITH n AS (SELECT * FROM unnest(%(ids)s::uuid[], %(versions)s::bigint[]) AS n(id, row_version))
        SELECT least(j.older_id, j.newer_id)::text, greatest(j.older_id, j.newer_id)::text
        FROM pair_judgements j
        JOIN n o ON o.id = j.older_id AND o.row_version = j.older_version
        JOIN n w ON w.id = j.newer_id AND w.row_version = j.newer_version
        WHERE j.tenant_id = %(t)s AND j.namespace = %(ns)s
        """,
        {"ids": nodes["id"].to_list(), "versions": nodes["row_version"].to_list(),
         "t": scope.tenant_id, "ns": scope.namespace},
    ).fetchall()
    return pl.DataFrame(rows, schema=ID_PAIR_SCHEMA, orient="row")


def record_judgements(conn: psycopg.Connection, scope: Scope, rows: list[dict], model: str) -> int:
    """Keep each verdict: {older_id, newer_id, older_version, newer_version, similarity, verdict,
    outcome}."""
    if not rows:
        return 0
    conn.execute(
        """
        INSERT INTO pair_judgements (tenant_id, namespace, older_id, newer_id, older_version,
                                     newer_version, similarity, verdict, outcome, model, run_id)
        SELECT %(t)s, %(ns)s, o, w, ov, wv, sim, v, oc, %(model)s, %(run)s
        FROM unnest(%(o)s::uuid[], %(w)s::uuid[], %(ov)s::bigint[], %(wv)s::bigint[], %(sim)s::float8[],
                    %(v)s::text[], %(oc)s::text[]) AS r(o, w, ov, wv, sim, v, oc)
        ON CONFLICT DO NOTHING
        """,
        {"t": scope.tenant_id, "ns": scope.namespace, "model": model, "run": scope.run_id,
         "o": [r["older_id"] for r in rows], "w": [r["newer_id"] for r in rows],
         "ov": [r["older_version"] for r in rows], "wv": [r["newer_version"] for r in rows],
         "sim": [r["similarity"] for r in rows],
         "v": [r["verdict"] for r in rows], "oc": [r["outcome"] for r in rows]},
    )
    return len(rows)


def verdict_pairs(conn: psycopg.Connection, scope: Scope, verdict: str) -> pl.DataFrame:
    """Pairs judged `verdict` whose two nodes are still active, not superseded and at the
    versions judged, as step 6b's edge candidates (associate.EDGE_SCHEMA: smaller id first)."""
    rows = conn.execute(
        """
        SELECT least(j.older_id, j.newer_id)::text, greatest(j.older_id, j.newer_id)::text, j.similarity,
               CASE WHEN j.older_id < j.newer_id THEN j.older_version ELSE j.newer_version END,
               CASE WHEN j.older_id < j.newer_id THEN j.newer_version ELSE j.older_version END
        FROM pair_judgements j
        JOIN memory_nodes o ON o.id = j.older_id AND o.row_version = j.older_version
        JOIN memory_nodes w ON w.id = j.newer_id AND w.row_version = j.newer_version
        WHERE j.tenant_id = %s AND j.namespace = %s AND j.verdict = %s
          AND o.archived_at IS NULL AND w.archived_at IS NULL
          AND o.superseded_by IS NULL AND w.superseded_by IS NULL
          AND o.tenant_id = j.tenant_id AND o.namespace = j.namespace
          AND w.tenant_id = j.tenant_id AND w.namespace = j.namespace
        """,
        (scope.tenant_id, scope.namespace, verdict),
    ).fetchall()
    return pl.DataFrame(rows, schema=EDGE_SCHEMA, orient="row")

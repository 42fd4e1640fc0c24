"""The subject index of step 2 (sql/013): what each node is about, and the pairs that share it.

Step 2 rewrites the keys of the nodes it searches (every node on a full pass, the changed ones
on an incremental pass), then asks for the pairs of those nodes with any node of the namespace
that shares a key, however far apart their vectors are. Each searched node gets at most
`per_node` partners, those sharing the most keys first, then the most similar; a key that more
than `max_share` of the namespace's nodes hold (and more than a handful) says nothing of which
fact a node states, and is not followed. So the pairs grow with what changed, not with the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import polars as pl
import psycopg

from curation_pipeline.core.scope import Scope

# A key held by more nodes than this (and than this share of the namespace) is too common to follow.
_COMMON_FLOOR = 25


def refresh_keys(conn: psycopg.Connection, scope: Scope, ids: list[str] | None,
                 keys_of: Callable[[str], Iterable[str]]) -> int:
    """Rewrite the keys of these active nodes (None: of every active node of the namespace, and
    drop the keys of nodes no longer active). Returns how many nodes were read."""
    where = "AND id = ANY(%(ids)s::uuid[])" if ids is not None else ""
    rows = conn.execute(
        f"SELECT id::text, pointer_summary FROM memory_nodes WHERE tenant_id = %(t)s AND namespace = %(n)s"
        f" AND archived_at IS NULL AND superseded_by IS NULL {where}",
        {"t": scope.tenant_id, "n": scope.namespace, "ids": ids},
    ).fetchall()
    if ids is None:
        # And the keys a node read here left in the namespace an agent moved it from: its keys
        # are rewritten here (a second row per key would break the primary key).
        conn.execute("DELETE FROM memory_subjects WHERE (tenant_id = %s AND namespace = %s) OR node_id = ANY(%s::uuid[])",
                     (scope.tenant_id, scope.namespace, [row[0] for row in rows]))
    else:
        conn.execute("DELETE FROM memory_subjects WHERE node_id = ANY(%s::uuid[])", (ids,))
    with conn.cursor().copy("COPY memory_subjects (node_id, tenant_id, namespace, subject) FROM STDIN") as copy:
        for node_id, text in rows:
            for key in sorted(set(keys_of(text or ""))):
                copy.write_row((node_id, scope.tenant_id, scope.namespace, key))
    return len(rows)


def pairs_by_subject(conn: psycopg.Connection, scope: Scope, ids: list[str] | None, *, model: str,
                     per_node: int, max_share: float) -> pl.DataFrame:
    """Pairs (low_id, high_id, similarity) of these nodes (None: every node of the namespace)
    with active, not superseded nodes of the same memory type and embedding model that share a
    subject key (see the module docstring)."""
    focus = "AND f.node_id = ANY(%(ids)s::uuid[])" if ids is not None else ""
    rows = conn.execute(
        f"""
        WITH size AS (
            SELECT count(*) AS nodes FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s AND archived_at IS NULL
        ),
        common AS (
            SELECT subject FROM memory_subjects, size
            WHERE tenant_id = %(t)s AND namespace = %(n)s
            GROUP BY subject, size.nodes
            HAVING count(*) > greatest(%(floor)s, %(share)s * size.nodes)
        ),
        shared AS (
            SELECT f.node_id AS a, s.node_id AS b, count(*) AS keys
            FROM memory_subjects f
            JOIN memory_subjects s ON s.tenant_id = f.tenant_id AND s.namespace = f.namespace
                                  AND s.subject = f.subject AND s.node_id <> f.node_id
            WHERE f.tenant_id = %(t)s AND f.namespace = %(n)s {focus}
              AND f.subject NOT IN (SELECT subject FROM common)
            GROUP BY f.node_id, s.node_id
        ),
        ranked AS (
            SELECT sh.a, sh.b, 1 - (x.embedding <=> y.embedding) AS similarity,
                   row_number() OVER (PARTITION BY sh.a ORDER BY sh.keys DESC, x.embedding <=> y.embedding, sh.b) AS rank
            FROM shared sh
            JOIN memory_nodes x ON x.id = sh.a
            JOIN memory_nodes y ON y.id = sh.b
            WHERE x.archived_at IS NULL AND x.superseded_by IS NULL AND y.archived_at IS NULL AND y.superseded_by IS NULL
              AND x.tenant_id = %(t)s AND x.namespace = %(n)s AND y.tenant_id = %(t)s AND y.namespace = %(n)s
              AND x.memory_type IS NOT DISTINCT FROM y.memory_type
              AND x.embedding_model = %(model)s AND y.embedding_model = %(model)s
              AND x.embedding IS NOT NULL AND y.embedding IS NOT NULL
              AND vector_norm(x.embedding) > 0 AND vector_norm(y.embedding) > 0
        )
        SELECT least(a, b)::text, greatest(a, b)::text, max(similarity)
        FROM ranked WHERE rank <= %(k)s GROUP BY 1, 2 ORDER BY 1, 2
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "ids": ids, "model": model, "k": per_node,
         "floor": _COMMON_FLOOR, "share": max_share},
    ).fetchall()
    return pl.DataFrame(rows, schema={"low_id": pl.String, "high_id": pl.String, "similarity": pl.Float64},
                        orient="row")

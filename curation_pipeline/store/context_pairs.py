"""The memory written just before each memory that needs it (core/context_updates.py).

Step 2 asks for the nodes it searches (every node on a full pass, the changed ones on an
incremental pass): their short texts are read, the pure rule says which name no subject of
their own, and for those only the database finds the active, not superseded node of the same
namespace, memory type and embedding model written last before it within the window (by epoch,
then `created_at`). So the pairs grow with what changed, not with the store.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import polars as pl
import psycopg

from curation_pipeline.core.scope import Scope

# Longer texts are never without a subject of their own (core/context_updates.MAX_WORDS words).
_SHORT_CHARS = 120


def previous_pairs(conn: psycopg.Connection, scope: Scope, ids: list[str] | None, *, model: str,
                   window: timedelta, needs_context: Callable[[str], bool]) -> pl.DataFrame:
    """Pairs (low_id, high_id, similarity) of each of these nodes (None: every node of the
    namespace) that `needs_context` with the node written just before it."""
    focus = "AND id = ANY(%(ids)s::uuid[])" if ids is not None else ""
    short = conn.execute(
        f"SELECT id::text, pointer_summary FROM memory_nodes WHERE tenant_id = %(t)s AND namespace = %(n)s"
        f" AND archived_at IS NULL AND superseded_by IS NULL AND embedding_model = %(model)s"
        f" AND char_length(pointer_summary) <= %(short)s {focus}",
        {"t": scope.tenant_id, "n": scope.namespace, "ids": ids, "model": model, "short": _SHORT_CHARS},
    ).fetchall()
    wanting = [node_id for node_id, text in short if text and needs_context(text)]
    rows = conn.execute(
        """
        SELECT least(m.id, p.id)::text, greatest(m.id, p.id)::text, 1 - (m.embedding <=> p.embedding)
        FROM memory_nodes m
        CROSS JOIN LATERAL (
            SELECT b.id, b.embedding FROM memory_nodes b
            WHERE b.tenant_id = m.tenant_id AND b.namespace = m.namespace
              AND b.memory_type IS NOT DISTINCT FROM m.memory_type
              AND b.archived_at IS NULL AND b.superseded_by IS NULL AND b.id <> m.id
              AND b.embedding_model = %(model)s AND b.embedding IS NOT NULL AND vector_norm(b.embedding) > 0
              AND b.created_at < m.created_at AND b.created_at >= m.created_at - %(window)s
            ORDER BY b.epoch DESC, b.created_at DESC, b.id DESC LIMIT 1
        ) p
        WHERE m.id = ANY(%(ids)s::uuid[]) AND m.embedding IS NOT NULL AND vector_norm(m.embedding) > 0
        """,
        {"ids": wanting, "model": model, "window": window},
    ).fetchall() if wanting else []
    return pl.DataFrame(rows, schema={"low_id": pl.String, "high_id": pl.String, "similarity": pl.Float64},
                        orient="row")

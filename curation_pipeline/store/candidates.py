"""Set-based loads of each step's candidate frame for one namespace (pass bookkeeping of the
incremental steps: store/passes.py).

SQL narrows the rows to plausible candidates so a step reads what it may act on, not the whole
namespace; the pure planners in `curation_pipeline.core.steps` own the actual rules. Every frame
carries `row_version`, which the apply side uses to leave rows an agent changed meanwhile.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterator
from datetime import UTC

import numpy as np
import polars as pl
import psycopg
import psycopg.adapt
import psycopg.pq

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps import (
    consolidate,
    reclassify,
    stale_confidence,
    summarize,
)
from curation_pipeline.core.steps.similarity import PAIR_SCHEMA, id_pairs
from curation_pipeline.core.steps.streamed_search import RowBlock
from curation_pipeline.store.read_ahead import read_ahead

# Every frame carries the row version its writes are guarded by.
_VERSION = {"row_version": pl.Int64}


def _frame(cursor: psycopg.Cursor, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(cursor.fetchall(), schema=schema, orient="row")


def reclassify_candidates(conn: psycopg.Connection, scope: Scope, min_epoch_lag: int,
                          limit: int | None = None) -> pl.DataFrame:
    """Active, never-recalled nodes far behind the namespace's interaction epoch (step 1), at
    most `limit` of them, the most lagging first (the planner's order), without a pending signal."""
    cursor = conn.execute(
        """
        WITH ns AS (
            SELECT coalesce(
                (SELECT current_epoch FROM namespace_activity WHERE tenant_id = %(t)s AND namespace = %(n)s),
                (SELECT max(epoch) FROM memory_nodes WHERE tenant_id = %(t)s AND namespace = %(n)s),
                0) AS current_epoch
        )
        SELECT m.id::text, m.pointer_summary, m.memory_type, m.recall_count::bigint, m.epoch,
               ns.current_epoch,
               EXISTS (SELECT 1 FROM training_signals s
                       WHERE s.memory_id = m.id AND s.signal_type = 'reclassify_pending'
                         AND s.status = 'pending') AS has_pending_signal,
               m.row_version
        FROM memory_nodes m, ns
        WHERE m.tenant_id = %(t)s AND m.namespace = %(n)s AND m.archived_at IS NULL
          -- "lag > min" spelt as a bound on epoch: an index range (memory_nodes_never_recalled)
          -- that holds only the lagging nodes, instead of a filter over every never-recalled one.
          AND m.recall_count = 0 AND m.epoch < ns.current_epoch - %(lag)s
          -- Never recalled means no recorded access either (sql/016).
          AND NOT EXISTS (SELECT 1 FROM memory_access a WHERE a.node_id = m.id)
          AND NOT EXISTS (SELECT 1 FROM training_signals s
                          WHERE s.memory_id = m.id AND s.signal_type = 'reclassify_pending'
                            AND s.status = 'pending')
        ORDER BY m.epoch, m.id
        LIMIT %(limit)s
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "lag": min_epoch_lag, "limit": limit},
    )
    return _frame(cursor, {**reclassify.CANDIDATE_SCHEMA, **_VERSION})


# Steps 2 and 6b: the planner's node columns, the vectors' model, and the row version.
_NODE_SCHEMA = {"id": pl.Utf8, "memory_type": pl.Utf8, "embedding_model": pl.Utf8,
                **{name: dtype for name, dtype in consolidate.NODE_SCHEMA.items()
                   if name not in ("id", "memory_type")}, **_VERSION}


# recall_count: stored plus the accesses recall() recorded (sql/016), which the keeper's choice
# weighs like the stored count.
_RECALLS = "coalesce((SELECT a.recall_count FROM memory_access a WHERE a.node_id = {table}.id), 0)"
_NODE_COLUMNS = f"""id::text, memory_type, coalesce(embedding_model, ''), pointer_summary, base_utility,
                   pinned, confidence, recall_count::bigint + {_RECALLS.format(table="memory_nodes")},
                   created_at, row_version"""


def consolidation_candidates(
    conn: psycopg.Connection, scope: Scope, model: str
) -> tuple[pl.DataFrame, np.ndarray]:
    """Active nodes that have a vector from `model`, and their vectors as one float32 matrix:
    the whole namespace in memory, for the in-memory search (similarity.find_similar_pairs) that
    benchmarks and tests hold the steps' streamed search to (steps 2 and 6b stream instead:
    stream_search_rows). Vectors of another model are never compared with these: their
    distances mean something else, and step 4 re-embeds them.

    Vectors come through a binary cursor as raw pgvector bytes and are decoded for all rows at
    once by numpy: text parsing, or one Python object per vector, costs seconds at 100k rows.
    """
    cursor = conn.cursor(binary=True)
    cursor.adapters.register_loader("vector", _RawBytesLoader)
    cursor.execute(
        f"""
        SELECT {_NODE_COLUMNS}, embedding
        FROM memory_nodes
        WHERE tenant_id = %s AND namespace = %s AND archived_at IS NULL AND superseded_by IS NULL
          AND embedding IS NOT NULL AND embedding_model = %s
        ORDER BY id
        """,
        (scope.tenant_id, scope.namespace, model),
    )
    rows = cursor.fetchall()
    columns = list(zip(*rows)) or [[] for _ in range(len(_NODE_SCHEMA) + 1)]
    frame = pl.DataFrame(dict(zip(_NODE_SCHEMA, columns[:-1])), schema=_NODE_SCHEMA)
    if not rows:
        return frame, np.zeros((0, 0), dtype=np.float32)
    return frame, _decode_vectors(columns[-1])


# Steps 2 and 6b's streamed search (core/steps/streamed_search.py): per row only what the search
# needs, in binary: the id and the vector as their raw bytes (bytea, decoded in bulk by numpy, no
# Python object per vector), the memory type and the row version.
_SEARCH_COLUMNS = "uuid_send(id), memory_type, row_version, vector_send(embedding)"
# Superseded nodes are compared with nothing: they are neither merged nor superseded again, and
# step 6b does not link an old value with the one that replaced it.
_SEARCHED = """tenant_id = %(t)s AND namespace = %(n)s AND archived_at IS NULL AND superseded_by IS NULL
               AND embedding IS NOT NULL AND embedding_model = %(model)s"""
# Rows per FETCH: measured fastest here (a fetch stays in the CPU caches while it is decoded).
STREAM_FETCH_ROWS = 2048
# Rows per block handed to the search: one matrix product per memory type and block, so blocks
# are made large enough (24 MiB of 384-d vectors) for the products to be efficient.
STREAM_BLOCK_ROWS = 16384


def stream_search_rows(
    conn: psycopg.Connection, scope: Scope, model: str, *, ordered: bool,
    after: tuple[str, str] | None = None, same_type: bool = True,
) -> Iterator[RowBlock]:
    """The namespace's active rows embedded by `model`, in blocks of about STREAM_BLOCK_ROWS,
    through a server-side binary cursor, the next block read while the current one is searched:
    at most two blocks are in memory at a time.

    `ordered`: by (memory_type, id), an index range (sql/009). `after` (memory type, id):
    only the rows after it in that order, and only those of its memory type if `same_type`
    (the rest of a group the full search re-reads).
    """
    where, params = _SEARCHED, {"t": scope.tenant_id, "n": scope.namespace, "model": model}
    if after is not None:
        params.update(after_type=after[0], after_id=after[1])
        where += (" AND memory_type = %(after_type)s AND id > %(after_id)s::uuid" if same_type
                  else " AND (memory_type, id) > (%(after_type)s, %(after_id)s::uuid)")
    order = " ORDER BY memory_type, id" if ordered else ""
    return read_ahead(_blocks(conn, f"SELECT {_SEARCH_COLUMNS} FROM memory_nodes WHERE {where}{order}", params))


def _blocks(conn: psycopg.Connection, query: str, params: dict) -> Generator[RowBlock, None, None]:
    with conn.cursor(name=f"search_{next(_cursor_numbers)}", binary=True) as cursor:
        cursor.execute(query, params)
        rows: list[tuple] = []
        while fetched := cursor.fetchmany(STREAM_FETCH_ROWS):
            rows.extend(fetched)
            if len(rows) >= STREAM_BLOCK_ROWS:
                yield _row_block(rows)  # decoded in bulk, once per block
                rows = []
        if rows:
            yield _row_block(rows)


def search_rows_by_id(conn: psycopg.Connection, scope: Scope, model: str, ids: list[str]) -> RowBlock:
    """The rows of these nodes that the search compares (active, embedded by `model`)."""
    with conn.cursor(binary=True) as cursor:
        rows = cursor.execute(
            f"SELECT {_SEARCH_COLUMNS} FROM memory_nodes WHERE {_SEARCHED} AND id = ANY(%(ids)s::uuid[])"
            " ORDER BY id",
            {"t": scope.tenant_id, "n": scope.namespace, "model": model, "ids": ids},
        ).fetchall()
    return _row_block(rows)


def embedding_dimension(conn: psycopg.Connection) -> int:
    """The width of the store's vector column (pgvector keeps it as the type modifier)."""
    return conn.execute(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memory_nodes'::regclass AND attname = 'embedding'"
    ).fetchone()[0]


def node_rows(conn: psycopg.Connection, scope: Scope, ids: list[str]) -> pl.DataFrame:
    """The planner's columns (as consolidation_candidates, without vectors) of these active
    nodes, by id."""
    rows = conn.execute(
        f"SELECT {_NODE_COLUMNS} FROM memory_nodes WHERE tenant_id = %s AND namespace = %s"
        " AND archived_at IS NULL AND superseded_by IS NULL AND id = ANY(%s::uuid[]) ORDER BY id",
        (scope.tenant_id, scope.namespace, ids),
    ).fetchall()
    return pl.DataFrame(rows, schema=_NODE_SCHEMA, orient="row")


_cursor_numbers = itertools.count()


def _row_block(rows: list[tuple]) -> RowBlock:
    if not rows:
        return RowBlock([], [], np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))
    keys, types, versions, vectors = zip(*rows)
    return RowBlock(list(keys), list(types), np.fromiter(versions, dtype=np.int64, count=len(rows)),
                    _vector_view(vectors))


class _RawBytesLoader(psycopg.adapt.Loader):
    """Hand back pgvector's binary value untouched (decoded in bulk by _decode_vectors)."""

    format = psycopg.pq.Format.BINARY

    def load(self, data) -> bytes:
        return bytes(data)


def _decode_vectors(values) -> np.ndarray:
    """pgvector binary values (int16 dimension, int16 unused, big-endian float4s) -> float32."""
    return _vector_view(values).astype(np.float32)


def _vector_view(values) -> np.ndarray:
    """The float4s of pgvector binary values, as they came (big-endian): the search normalises
    them into native float32 in one pass (similarity.unit_rows)."""
    dimension = int.from_bytes(values[0][:2], "big")
    return np.frombuffer(b"".join(values), dtype=">f4").reshape(len(values), dimension + 1)[:, 1:]


def similar_pairs_in_database(
    conn: psycopg.Connection, scope: Scope, changed_ids: list[str], threshold: float, *,
    model: str, upper: float | None = None, same_memory_type: bool = True,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pairs of a few changed nodes with any active node of the same embedding model (and, for
    step 2, memory type) whose cosine is above `threshold`, computed exactly by pgvector next to
    the data, so only the pairs' rows travel (not the namespace's vectors). With `upper` (step
    6b), pairs step 2 will merge are left out (see steps/associate.association_pairs).

    Returns (the rows of every node in a pair, as consolidation_candidates without vectors;
    PAIR_SCHEMA pairs indexing those rows).
    """
    # One statement, so the pairs and the rows (with the row_version the merge is guarded by)
    # come from the same snapshot. A zero vector has no direction: its cosine distance is NaN,
    # which Postgres sorts above every number, so it must be excluded explicitly.
    records = conn.execute(
        f"""
        WITH pairs AS (
            SELECT DISTINCT least(c.id, n.id) AS a, greatest(c.id, n.id) AS b,
                   1 - (c.embedding <=> n.embedding) AS similarity
            FROM memory_nodes c
            JOIN memory_nodes n
              ON n.tenant_id = c.tenant_id AND n.namespace = c.namespace
             AND (n.memory_type = c.memory_type OR NOT %(same_type)s)
             AND n.embedding_model = c.embedding_model
             AND n.id <> c.id AND n.archived_at IS NULL AND n.superseded_by IS NULL AND n.embedding IS NOT NULL
            WHERE c.id = ANY(%(ids)s::uuid[]) AND c.tenant_id = %(t)s AND c.namespace = %(n)s
              AND c.archived_at IS NULL AND c.superseded_by IS NULL AND c.embedding IS NOT NULL
              AND c.embedding_model = %(model)s
              AND vector_norm(c.embedding) > 0 AND vector_norm(n.embedding) > 0
              AND 1 - (c.embedding <=> n.embedding) > %(low)s
              -- With an upper bound (step 6b): leave out the pairs step 2 will merge.
              AND (%(up)s::float8 IS NULL OR 1 - (c.embedding <=> n.embedding) <= %(up)s::float8
                   OR n.memory_type <> c.memory_type
                   OR EXISTS (SELECT 1 FROM merge_vetoes v
                              WHERE v.node_a = least(c.id, n.id) AND v.node_b = greatest(c.id, n.id)
                                AND v.lifted_by IS NULL))
        ),
        involved AS (SELECT a AS id FROM pairs UNION SELECT b FROM pairs)
        SELECT NULL::text, NULL::text, NULL::float8, m.id::text, m.memory_type,
               coalesce(m.embedding_model, ''), m.pointer_summary, m.base_utility, m.pinned,
               m.confidence, m.recall_count::bigint + {_RECALLS.format(table="m")}, m.created_at, m.row_version
        FROM memory_nodes m JOIN involved USING (id)
        UNION ALL
        SELECT a::text, b::text, similarity, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM pairs
        """,
        {"ids": changed_ids, "t": scope.tenant_id, "n": scope.namespace, "model": model,
         "same_type": same_memory_type, "low": threshold, "up": upper},
    ).fetchall()
    rows = pl.DataFrame(
        sorted(record[3:] for record in records if record[3] is not None),
        schema=_NODE_SCHEMA, orient="row",
    )
    index = {node_id: row for row, node_id in enumerate(rows["id"].to_list())}
    pairs = [record[:3] for record in records if record[0] is not None]
    found = pl.DataFrame(
        {"i": [index[a] for a, _, _ in pairs], "j": [index[b] for _, b, _ in pairs],
         "similarity": [float(sim) for _, _, sim in pairs]},
        schema=PAIR_SCHEMA,
    ).sort("i", "j")
    return rows, found


def vetoed_pairs(conn: psycopg.Connection, scope: Scope) -> pl.DataFrame:
    """Pairs whose merge an undo took back (ID_PAIR_SCHEMA): never proposed again."""
    rows = conn.execute(
        "SELECT node_a::text, node_b::text FROM merge_vetoes"
        " WHERE tenant_id = %s AND namespace = %s AND lifted_by IS NULL",
        (scope.tenant_id, scope.namespace),
    ).fetchall()
    return id_pairs(rows)


def verbose_candidates(conn: psycopg.Connection, scope: Scope, min_chars: int, *,
                       recall_below: int, limit: int) -> pl.DataFrame:
    """Active nodes longer than the verbose limit (step 3): the `limit` longest that may be
    summarized (not pinned; rarely recalled or holding a `[merged: ...]` marker: the planner's
    rule, core/steps/summarize.py), so that a namespace of long texts loads `limit` of them.
    A memory that supersedes another is left whole (see the query)."""
    cursor = conn.execute(
        """
        SELECT m.id::text, m.pointer_summary, r.recall_count::bigint, m.pinned, m.row_version
        FROM memory_nodes m JOIN memory_recall r ON r.id = m.id  -- stored + recorded recalls (sql/016)
        WHERE m.tenant_id = %(t)s AND m.namespace = %(n)s AND m.archived_at IS NULL
          AND char_length(m.pointer_summary) > %(min)s AND NOT m.pinned
          AND (r.recall_count < %(below)s OR m.pointer_summary ILIKE '%%[merged:%%')
          -- A successor's text is what keeps the older memory out of current_memory; a summary
          -- that cut its newer value would leave neither value current.
          AND NOT EXISTS (SELECT 1 FROM memory_nodes o
                          WHERE o.superseded_by = m.id AND o.archived_at IS NULL)
        ORDER BY char_length(m.pointer_summary) DESC, m.id
        LIMIT %(limit)s
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "min": min_chars, "below": recall_below, "limit": limit},
    )
    return _frame(cursor, {**summarize.NODE_SCHEMA, **_VERSION})


_EMBED_SCHEMA = {"id": pl.Utf8, "pointer_summary": pl.Utf8, "row_version": pl.Int64,
                 "embedding_model": pl.Utf8}
# More than any embedder reads of a text (each cuts its input itself, to its own limit).
_EMBEDDED_CHARS = 1_000_000


def missing_embedding_candidates(conn: psycopg.Connection, scope: Scope, limit: int) -> pl.DataFrame:
    """Active nodes without a vector (step 4), the `limit` oldest: a namespace loaded without
    vectors is embedded a bounded share a cycle. Each text only as long as an embedder reads
    (`_EMBEDDED_CHARS`): a 10 MB memory does not travel here to be cut."""
    cursor = conn.execute(
        f"""
        SELECT id::text, left(pointer_summary, {_EMBEDDED_CHARS}), row_version, embedding_model
        FROM memory_nodes
        WHERE tenant_id = %s AND namespace = %s AND archived_at IS NULL AND embedding IS NULL
        ORDER BY created_at, id
        LIMIT %s
        """,
        (scope.tenant_id, scope.namespace, limit),
    )
    return _frame(cursor, _EMBED_SCHEMA)


# "Another model than m" as three index ranges on (tenant_id, namespace, embedding_model):
# Postgres can't use an index for `<>`, and a namespace mid-migration must not cost a full scan.
_OTHER_MODEL = "(embedding_model < %(m)s OR embedding_model > %(m)s OR embedding_model IS NULL)"


def outdated_embedding_candidates(
    conn: psycopg.Connection, scope: Scope, model: str, limit: int
) -> pl.DataFrame:
    """Active nodes whose vector another model made (step 4's migration), oldest first."""
    cursor = conn.execute(
        f"""
        SELECT id::text, left(pointer_summary, {_EMBEDDED_CHARS}), row_version, embedding_model
        FROM memory_nodes
        WHERE tenant_id = %(t)s AND namespace = %(n)s AND archived_at IS NULL
          AND embedding IS NOT NULL AND {_OTHER_MODEL}
        ORDER BY created_at, id
        LIMIT %(limit)s
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "m": model, "limit": limit},
    )
    return _frame(cursor, _EMBED_SCHEMA)


def count_outdated_embeddings(conn: psycopg.Connection, scope: Scope, model: str) -> int:
    return conn.execute(
        f"SELECT count(*) FROM memory_nodes WHERE tenant_id = %(t)s AND namespace = %(n)s"
        f" AND archived_at IS NULL AND embedding IS NOT NULL AND {_OTHER_MODEL}",
        {"t": scope.tenant_id, "n": scope.namespace, "m": model},
    ).fetchone()[0]


def stale_confidence_candidates(
    conn: psycopg.Connection, scope: Scope, stale_after_days: int, limit: int
) -> pl.DataFrame:
    """Active nodes not recalled (or created, if never recalled) within the window (step 5), by
    their stored last recall and their recorded accesses (sql/016), the `limit` seen longest ago (the order of memory_nodes_last_seen: the range stops there)."""
    cursor = conn.execute(
        """
        SELECT m.id::text, m.confidence,
               greatest(m.last_recalled_at, (SELECT a.last_recalled_at FROM memory_access a WHERE a.node_id = m.id)),
               m.created_at, m.row_version
        FROM memory_nodes m
        WHERE m.tenant_id = %(t)s AND m.namespace = %(n)s AND m.archived_at IS NULL
          -- = 'default' is NOT IN ('verified', 'stale') under the column's CHECK, spelt as the
          -- partial index memory_nodes_last_seen says it, so that "nothing is old enough" is one
          -- empty index range (the planner can't prove the NOT IN form implies the index).
          AND m.confidence = 'default'
          AND coalesce(m.last_recalled_at, m.created_at) < now() - make_interval(days => %(days)s)
          -- Forget by disuse: a node with a recent recorded access (sql/016) stays fresh.
          AND NOT EXISTS (SELECT 1 FROM memory_access a WHERE a.node_id = m.id
                          AND a.last_recalled_at >= now() - make_interval(days => %(days)s))
        ORDER BY coalesce(m.last_recalled_at, m.created_at), m.id
        LIMIT %(limit)s
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "days": stale_after_days, "limit": limit},
    )
    return _frame(cursor, {**stale_confidence.NODE_SCHEMA, **_VERSION})


def count_active(conn: psycopg.Connection, scope: Scope) -> int:
    return conn.execute(
        "SELECT count(*) FROM memory_nodes WHERE tenant_id = %s AND namespace = %s AND archived_at IS NULL",
        (scope.tenant_id, scope.namespace),
    ).fetchone()[0]


def count_missing_embeddings(conn: psycopg.Connection, scope: Scope) -> int:
    return conn.execute(
        "SELECT count(*) FROM memory_nodes WHERE tenant_id = %s AND namespace = %s"
        " AND archived_at IS NULL AND embedding IS NULL",
        (scope.tenant_id, scope.namespace),
    ).fetchone()[0]


def database_now(conn: psycopg.Connection):
    """The database's clock, so planners and SQL agree on what 'now' is."""
    return conn.execute("SELECT now()").fetchone()[0].astimezone(UTC)

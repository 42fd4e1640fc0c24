"""The pair search steps 2 and 6b share: all pairs of a namespace, or only those of what changed.

A complete earlier pass with the same settings (store/passes.py, core/steps/incremental.py)
means only pairs involving a node written since can be new:

- a few changed nodes (up to `in_database_max_changed`): pgvector compares them with the rest
  where the vectors are, so only the pairs' rows travel here (cost follows the change);
- more: the changed rows are compared with the namespace's rows as they stream through a
  server-side binary cursor, one block at a time (core/steps/streamed_search.py);
- no usable earlier pass: every pair within each group, from the same stream ordered by memory
  type, holding at most one group (or SEARCH_MEMORY_BYTES of it) at a time.

Either way no more than a bounded part of the namespace's vectors is ever held here. Only the
rows of the pairs found are loaded in full afterwards, and a pair is kept only if both rows are
still the versions that were compared (a row an agent rewrote meanwhile is a changed node of
the next pass).
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass

import polars as pl
import psycopg
from threadpoolctl import threadpool_limits

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.incremental import PassStart
from curation_pipeline.core.steps.similarity import PAIR_SCHEMA
from curation_pipeline.core.steps.streamed_search import (
    FoundPairs,
    RowBlock,
    focus_search,
    full_search,
)
from curation_pipeline.store import candidates

INCREMENTAL_IN_DATABASE = "incremental (in database)"

# The vectors held at once by a search (twice that while a chunk is normalised): a memory type
# (or a group of changed nodes) larger than this is searched in parts.
SEARCH_MEMORY_BYTES = 128 * 2**20


@dataclass(frozen=True)
class PairSearch:
    nodes: pl.DataFrame  # the rows of the nodes in a pair (candidates' node columns), by id
    pairs: pl.DataFrame  # PAIR_SCHEMA: i < j rows of `nodes` above the threshold
    how: str  # "full", "incremental" or INCREMENTAL_IN_DATABASE
    focus_nodes: int  # nodes whose pairs were searched (all of them for a full pass)
    compared: int  # nodes compared: the namespace's (streamed), or the pairs' (in the database)
    # Pairs found by a shared subject rather than by their cosine (step 2): {id, id} each.
    by_subject: frozenset[frozenset[str]] = frozenset()
    # Pairs of a memory that names no subject and the memory written just before it (step 2).
    by_context: frozenset[frozenset[str]] = frozenset()


def search_pairs(
    conn: psycopg.Connection, scope: Scope, start: PassStart, *, model: str, threshold: float,
    in_database_max_changed: int, upper: float | None = None, same_memory_type: bool = True,
) -> PairSearch:
    """Pairs of active nodes embedded by `model` with cosine above `threshold`, within one
    memory type if `same_memory_type`. With `upper` (step 6b), the database leaves out the
    pairs step 2 merges; the caller filters the streamed pairs the same way."""
    if start.incremental and len(start.changed) <= in_database_max_changed:
        nodes, pairs = candidates.similar_pairs_in_database(
            conn, scope, sorted(start.changed), threshold, model=model, upper=upper,
            same_memory_type=same_memory_type,
        )
        return PairSearch(nodes, pairs, INCREMENTAL_IN_DATABASE, len(start.changed), nodes.height)
    with ExitStack() as opened:
        def stream(**options) -> Iterator[RowBlock]:
            # Every stream is closed when the search ends, also when it raises mid-stream (a NaN
            # vector): no read-ahead thread is left reading the step's connection.
            return opened.enter_context(closing(candidates.stream_search_rows(conn, scope, model, **options)))

        if start.incremental:
            found, focus_count, compared = _changed_against_namespace(
                conn, scope, model, sorted(start.changed), threshold, same_memory_type, stream)
            how = "incremental"
        else:
            found, compared = full_search(
                stream(ordered=True),
                lambda group, key: stream(ordered=True, after=(group, _node_id(key)), same_type=same_memory_type),
                threshold, by_group=same_memory_type, memory_bytes=SEARCH_MEMORY_BYTES, describe=_node_id,
            )
            focus_count, how = compared, "full"
    nodes, pairs = _pairs_of_unchanged_rows(conn, scope, found)
    return PairSearch(nodes, pairs, how, focus_count, compared)


def _changed_against_namespace(
    conn: psycopg.Connection, scope: Scope, model: str, changed: list[str], threshold: float,
    same_memory_type: bool, stream: Callable[..., Iterator[RowBlock]],
) -> tuple[FoundPairs, int, int]:
    """(pairs of the changed nodes, how many of them the search compares, the namespace's rows
    compared with them): the namespace streams once per SEARCH_MEMORY_BYTES of changed rows."""
    focus_rows = max(1, SEARCH_MEMORY_BYTES // (4 * candidates.embedding_dimension(conn)))
    all_focus = {uuid.UUID(node_id).bytes for node_id in changed}
    found, focus_count, compared = FoundPairs(), 0, 0
    for start in range(0, len(changed), focus_rows):
        focus = candidates.search_rows_by_id(conn, scope, model, changed[start : start + focus_rows])
        focus_count += len(focus)
        # The next block is being read (by the database and a decoding thread) while this one is
        # multiplied: BLAS leaves them a core. Within groups the products are small (one group's
        # focus rows against its rows of one block), where a thread pool costs more than it saves
        # (20 products of 50 x 820 took 12x the CPU time with 2 threads as with one): one thread.
        blas_threads = 1 if same_memory_type else max(1, (os.cpu_count() or 1) - 1)
        with threadpool_limits(blas_threads, user_api="blas"):
            part, compared = focus_search(
                focus, stream(ordered=False), threshold,
                by_group=same_memory_type, all_focus=all_focus, describe=_node_id,
            )
        found.extend(part)
    return found, focus_count, compared


def _pairs_of_unchanged_rows(
    conn: psycopg.Connection, scope: Scope, found: FoundPairs
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the node rows of the pairs, PAIR_SCHEMA pairs indexing them), keeping the pairs whose two
    rows are still the versions that were compared."""
    pairs = found.frame(name=_node_id)
    rows = candidates.node_rows(conn, scope, sorted(set(pairs["low_key"]) | set(pairs["high_key"])))
    versions = rows.select(key="id", version="row_version")
    current = (
        pairs.join(versions.rename({"key": "low_key", "version": "low_version"}), on=["low_key", "low_version"])
        .join(versions.rename({"key": "high_key", "version": "high_version"}), on=["high_key", "high_version"])
    )
    nodes = rows.filter(pl.col("id").is_in(current["low_key"].append(current["high_key"]).implode()))
    row_of = nodes.select(key="id").with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    indexed = (
        current.join(row_of.rename({"key": "low_key", "row": "i"}), on="low_key")
        .join(row_of.rename({"key": "high_key", "row": "j"}), on="high_key")
        .select("i", "j", "similarity").cast(dict(PAIR_SCHEMA)).sort("i", "j")
    )
    return nodes, indexed


def _node_id(key: bytes) -> str:
    return str(uuid.UUID(bytes=key))


def with_subject_pairs(conn: psycopg.Connection, scope: Scope, search: PairSearch, found: pl.DataFrame) -> PairSearch:
    """The search with the pairs a shared subject found (store/subject_index.py): those its
    cosine did not find are loaded (as the search's, in the same transaction) and indexed like
    the others; all of them are named in `by_subject`, also those the cosine found too (a pair
    just below the judge band that shares its subject is still the judge's question)."""
    widened, _ = _with_pairs(conn, scope, search, found)
    return dataclasses.replace(widened, by_subject=search.by_subject | {
        frozenset((a, b)) for a, b in zip(found["low_id"].to_list(), found["high_id"].to_list())})


def with_context_pairs(conn: psycopg.Connection, scope: Scope, search: PairSearch, found: pl.DataFrame) -> PairSearch:
    """The search with the pairs of a memory that needs context and the memory written just
    before it (store/context_pairs.py), named in `by_context` (also when the cosine found them)."""
    widened, _ = _with_pairs(conn, scope, search, found)
    return dataclasses.replace(widened, by_context=search.by_context | {
        frozenset((a, b)) for a, b in zip(found["low_id"].to_list(), found["high_id"].to_list())})


def _with_pairs(conn: psycopg.Connection, scope: Scope, search: PairSearch,
                found: pl.DataFrame) -> tuple[PairSearch, frozenset[frozenset[str]]]:
    """The search with the `found` pairs (low_id, high_id, similarity) it lacks, and those."""
    ids = search.nodes["id"].to_list()
    known = {frozenset((ids[i], ids[j])) for i, j in zip(search.pairs["i"].to_list(), search.pairs["j"].to_list())}
    new = [(a, b, similarity) for a, b, similarity in found.iter_rows() if frozenset((a, b)) not in known]
    if not new:
        return search, frozenset()
    missing = sorted({node_id for a, b, _ in new for node_id in (a, b)} - set(ids))
    nodes = pl.concat([search.nodes, candidates.node_rows(conn, scope, missing)], how="vertical_relaxed") \
        if missing else search.nodes
    row_of = {node_id: row for row, node_id in enumerate(nodes["id"].to_list())}
    new = [(a, b, similarity) for a, b, similarity in new if a in row_of and b in row_of]
    added = pl.DataFrame([(row_of[a], row_of[b], similarity) for a, b, similarity in new], schema=PAIR_SCHEMA,
                         orient="row")
    widened = dataclasses.replace(search, nodes=nodes, pairs=pl.concat([search.pairs.cast(dict(PAIR_SCHEMA)), added]))
    return widened, frozenset(frozenset((a, b)) for a, b, _ in new)

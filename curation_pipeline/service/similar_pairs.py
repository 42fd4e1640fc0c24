"""The pair search steps 2 and 6b share: all pairs of a namespace, or only those of what changed.

A complete earlier pass with the same settings (store/passes.py, core/steps/incremental.py)
means only pairs involving a node written since can be new:

- a few changed nodes (up to `in_database_max_changed`): pgvector compares them with the rest
  where the vectors are, so only the pairs' rows travel here (cost follows the change);
- more: the namespace's vectors are read through a binary cursor and the changed rows are
  compared with all of them in float32 blocks (core/steps/similarity.py);
- no usable earlier pass: every pair, the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl
import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.incremental import PassStart
from curation_pipeline.core.steps.similarity import (
    find_similar_pairs,
    require_finite_rows,
)
from curation_pipeline.store import candidates

INCREMENTAL_IN_DATABASE = "incremental (in database)"


@dataclass(frozen=True)
class PairSearch:
    nodes: pl.DataFrame  # the rows the pairs index (candidates' node columns)
    pairs: pl.DataFrame  # PAIR_SCHEMA: i < j rows of `nodes` above the threshold
    how: str  # "full", "incremental" or INCREMENTAL_IN_DATABASE
    focus_nodes: int  # nodes whose pairs were searched (all of them for a full pass)


def search_pairs(
    conn: psycopg.Connection, scope: Scope, start: PassStart, *, model: str, threshold: float,
    in_database_max_changed: int, groups: Callable[[pl.DataFrame], np.ndarray],
    upper: float | None = None, same_memory_type: bool = True,
) -> PairSearch:
    """Pairs of active nodes embedded by `model` with cosine above `threshold`, within the
    groups `groups(nodes)` assigns (in the database: within one memory type if
    `same_memory_type`). With `upper` (step 6b), the database leaves out the pairs step 2 merges;
    the caller filters the in-memory pairs the same way."""
    if start.incremental and len(start.changed) <= in_database_max_changed:
        nodes, pairs = candidates.similar_pairs_in_database(
            conn, scope, sorted(start.changed), threshold, model=model, upper=upper,
            same_memory_type=same_memory_type,
        )
        return PairSearch(nodes, pairs, INCREMENTAL_IN_DATABASE, len(start.changed))
    nodes, vectors = candidates.consolidation_candidates(conn, scope, model)
    if nodes.is_empty():
        return PairSearch(nodes, find_similar_pairs(np.zeros((0, 1), np.float32), np.zeros(0)), "full", 0)
    require_finite_rows(vectors, lambda row: f"node {nodes['id'][row]!r}")
    focus = nodes["id"].is_in(list(start.changed)).to_numpy() if start.incremental else None
    pairs = find_similar_pairs(vectors, groups(nodes), threshold=threshold, focus=focus)
    how = "incremental" if start.incremental else "full"
    return PairSearch(nodes, pairs, how, int(focus.sum()) if focus is not None else nodes.height)

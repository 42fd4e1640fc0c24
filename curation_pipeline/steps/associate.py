"""Step 6b planning: link memories that share a concept without being the same fact.

Two active nodes of one namespace whose vectors (from the configured, semantic model) are
similar above the association threshold (0.80 by default) but that step 2 will not merge (not
above the merge threshold, or of two memory types, or a merge an undo vetoed) get a
`shares_concept_with` edge carrying their similarity: "Dana prefers email" and "Dana would rather
be contacted by email" (0.885 with all-MiniLM-L6-v2) are linked, not merged.

Edges are undirected in meaning, so each pair is stored once, from the smaller node id to the
larger: a pair seen again in a later cycle is recognised and not added twice. A pair that already
has an edge (even one an undo retracted: the operator said no) is never proposed again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from curation_pipeline.steps.consolidate import find_similar_pairs

ASSOCIATION_LABEL = "shares_concept_with"

EDGE_SCHEMA = pl.Schema({
    "source_id": pl.Utf8, "target_id": pl.Utf8, "similarity": pl.Float64,
    # The row versions the similarity was computed from: an edge is only added while both
    # nodes are still what was compared (an agent may rewrite or archive one meanwhile).
    "source_version": pl.Int64, "target_version": pl.Int64,
})


@dataclass(frozen=True)
class AssociationPlan:
    edges: pl.DataFrame  # EDGE_SCHEMA, strongest first
    left_over: int  # qualifying new pairs beyond the cap: the next pass is a full one


def association_pairs(
    nodes: pl.DataFrame, vectors: np.ndarray, *, threshold: float, upper: float,
    vetoed: frozenset[tuple[str, str]] = frozenset(), focus: np.ndarray | None = None,
) -> pl.DataFrame:
    """Pairs (i, j, similarity) of rows of `nodes` (id, memory_type) above `threshold` that step
    2 will not merge: at most `upper` similar, or of two memory types (never merged), or a merge
    an undo vetoed (the operator said "not the same", and similar they still are). Memory types
    mix: a concept is shared between a fact and an episode as much as between two facts."""
    groups = np.zeros(vectors.shape[0], dtype=np.int64)
    pairs = find_similar_pairs(vectors, groups, threshold=threshold, focus=focus)
    ids, types = nodes["id"].to_list(), nodes["memory_type"].to_list()
    mergeable = [
        similarity > upper and types[i] == types[j] and (min(ids[i], ids[j]), max(ids[i], ids[j])) not in vetoed
        for i, j, similarity in pairs.iter_rows()
    ]
    return pairs.filter(~pl.Series(mergeable, dtype=pl.Boolean))


def candidate_edges(nodes: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """Pairs (row numbers into `nodes`: id, row_version) as EDGE_SCHEMA rows, smaller id first."""
    ids, versions = nodes["id"].to_list(), nodes["row_version"].to_list()
    rows = []
    for i, j, similarity in pairs.select("i", "j", "similarity").iter_rows():
        (a, va), (b, vb) = sorted([(ids[i], versions[i]), (ids[j], versions[j])])
        rows.append((a, b, similarity, va, vb))
    return pl.DataFrame(rows, schema=EDGE_SCHEMA, orient="row").unique(["source_id", "target_id"], keep="first")


def plan_associations(
    candidates: pl.DataFrame, *, existing: frozenset[tuple[str, str]], cap: int
) -> AssociationPlan:
    """The new edges to add: candidate edges (EDGE_SCHEMA) without an edge yet, strongest first,
    at most `cap` of them. `existing` holds (smaller id, larger id) pairs that have an edge."""
    is_new = [pair not in existing for pair in candidates.select("source_id", "target_id").iter_rows()]
    new = candidates.filter(pl.Series(is_new, dtype=pl.Boolean)).sort(
        ["similarity", "source_id", "target_id"], descending=[True, False, False]
    )
    return AssociationPlan(edges=new.head(cap), left_over=max(new.height - cap, 0))

"""Step 6b planning: link memories that share a concept without being the same fact.

Two active nodes of one namespace whose vectors (from the configured, semantic model) are
similar above the association threshold (0.80 by default) but not above the merge threshold
(step 2 merges those) get a `shares_concept_with` edge carrying their similarity: "Dana is moving
to Berlin in May" and "Dana asked about flats in Berlin" are linked, not merged.

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

EDGE_SCHEMA = pl.Schema({"source_id": pl.Utf8, "target_id": pl.Utf8, "similarity": pl.Float64})


@dataclass(frozen=True)
class AssociationPlan:
    edges: pl.DataFrame  # EDGE_SCHEMA, strongest first
    left_over: int  # qualifying new pairs beyond the cap: the next pass is a full one


def association_pairs(
    vectors: np.ndarray, *, threshold: float, upper: float, focus: np.ndarray | None = None
) -> pl.DataFrame:
    """Pairs (i, j, similarity) with threshold < similarity <= upper, memory types mixed: a
    concept is shared between a fact and an episode as much as between two facts."""
    groups = np.zeros(vectors.shape[0], dtype=np.int64)
    pairs = find_similar_pairs(vectors, groups, threshold=threshold, focus=focus)
    return pairs.filter(pl.col("similarity") <= upper)


def plan_associations(
    ids: list[str] | pl.Series,
    pairs: pl.DataFrame,
    *,
    existing: frozenset[tuple[str, str]],
    cap: int,
) -> AssociationPlan:
    """The new edges to add: pairs (row numbers into `ids`) without an edge yet, strongest
    first, at most `cap` of them. `existing` holds (smaller id, larger id) pairs."""
    id_list = list(ids)
    first = [id_list[i] for i in pairs["i"].to_list()]
    second = [id_list[j] for j in pairs["j"].to_list()]
    candidates = pl.DataFrame(
        {
            "source_id": [min(a, b) for a, b in zip(first, second)],
            "target_id": [max(a, b) for a, b in zip(first, second)],
            "similarity": pairs["similarity"].to_list(),
        },
        schema=EDGE_SCHEMA,
    )
    is_new = [(a, b) not in existing for a, b in candidates.select("source_id", "target_id").iter_rows()]
    new = (
        candidates.filter(pl.Series(is_new, dtype=pl.Boolean))
        .unique(["source_id", "target_id"], keep="first")
        .sort(["similarity", "source_id", "target_id"], descending=[True, False, False])
    )
    return AssociationPlan(edges=new.head(cap), left_over=max(new.height - cap, 0))

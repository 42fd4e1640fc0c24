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

from curation_pipeline.core.steps.similarity import (
    ID_PAIR_SCHEMA,
    find_similar_pairs,
    with_pair_ids,
)

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


def one_group(nodes: pl.DataFrame) -> np.ndarray:
    """Associations mix memory types: a concept is shared between a fact and an episode as much
    as between two facts, so every node is in the same search group."""
    return np.zeros(nodes.height, dtype=np.int64)


def without_merges(nodes: pl.DataFrame, pairs: pl.DataFrame, *, upper: float,
                   vetoed: pl.DataFrame | None = None) -> pl.DataFrame:
    """`pairs` (i, j, similarity into `nodes`: id, memory_type) minus those step 2 will merge:
    above `upper` and of one memory type, unless an undo vetoed that merge (the operator said
    "not the same", and similar they still are)."""
    types = nodes["memory_type"]
    same_type = types.gather(pairs["i"]) == types.gather(pairs["j"])
    merged_by_step_2 = with_pair_ids(pairs, nodes["id"]).filter(
        (pl.col("similarity") > upper) & pl.Series(same_type, dtype=pl.Boolean)
    )
    if vetoed is not None and vetoed.height:
        merged_by_step_2 = merged_by_step_2.join(vetoed, on=["low_id", "high_id"], how="anti")
    return pairs.join(merged_by_step_2.select("i", "j"), on=["i", "j"], how="anti")


def association_pairs(
    nodes: pl.DataFrame, vectors: np.ndarray, *, threshold: float, upper: float,
    vetoed: pl.DataFrame | None = None, focus: np.ndarray | None = None,
) -> pl.DataFrame:
    """Pairs (i, j, similarity) of rows of `nodes` above `threshold` that step 2 will not merge."""
    pairs = find_similar_pairs(vectors, one_group(nodes), threshold=threshold, focus=focus)
    return without_merges(nodes, pairs, upper=upper, vetoed=vetoed)


def candidate_edges(nodes: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """Pairs (row numbers into `nodes`: id, row_version) as EDGE_SCHEMA rows, smaller id first."""
    rows = nodes.select("id", "row_version").with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    both = (
        pairs.select("i", "j", "similarity")
        .join(rows.rename({"row": "i", "id": "id_i", "row_version": "version_i"}), on="i")
        .join(rows.rename({"row": "j", "id": "id_j", "row_version": "version_j"}), on="j")
    )
    i_first = pl.col("id_i") < pl.col("id_j")
    return both.select(
        source_id=pl.when(i_first).then("id_i").otherwise("id_j"),
        target_id=pl.when(i_first).then("id_j").otherwise("id_i"),
        similarity="similarity",
        source_version=pl.when(i_first).then("version_i").otherwise("version_j"),
        target_version=pl.when(i_first).then("version_j").otherwise("version_i"),
    ).cast(dict(EDGE_SCHEMA)).unique(["source_id", "target_id"], keep="first", maintain_order=True)


def plan_associations(candidates: pl.DataFrame, *, existing: pl.DataFrame, cap: int) -> AssociationPlan:
    """The new edges to add: candidate edges (EDGE_SCHEMA) without an edge yet, strongest first,
    at most `cap` of them. `existing` (ID_PAIR_SCHEMA) holds the pairs that have an edge."""
    new = candidates.join(
        existing.cast(dict(ID_PAIR_SCHEMA)), left_on=["source_id", "target_id"],
        right_on=["low_id", "high_id"], how="anti",
    ).sort(["similarity", "source_id", "target_id"], descending=[True, False, False])
    return AssociationPlan(edges=new.head(max(cap, 0)), left_over=max(new.height - max(cap, 0), 0))

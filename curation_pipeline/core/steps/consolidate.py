"""Step 2, ``consolidate_duplicates``: plan which near-duplicate memories merge this cycle.

Pure planning, no IO. The pieces, in the order :func:`plan_consolidation` uses them:

1. ``similarity.find_similar_pairs`` - exact cosine similarity of every pair inside one
   memory_type and embedding model, over bounded float32 tiles.
2. keeper choice (:func:`keeper_sort_key` / :func:`choose_keeper`, and :func:`keeper_rank`, the
   same rule over a whole frame): pinned, then ``verified``, then higher base_utility, then more
   recalls, then older, then smaller id.
3. the pinned rule: a pinned node is never archived and its text is never rewritten, so a pair
   with a pinned node merges only when the other node is a pure duplicate of it.
4. :func:`select_disjoint_pairs` - greedy, most similar first, each node in at most one pair.
   This is what stops chain merges: with A~B and B~C above threshold, only the most similar pair
   merges this cycle, and the other is reconsidered next cycle against the merged text.
5. :func:`offline_merge` - the merged text used when no LLM is available (or its answer is
   rejected): the keeper's sentences, then the absorbed node's new sentences while they fit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from curation_pipeline.core.steps.similarity import (
    find_similar_pairs,
    require_finite_rows,
    with_pair_ids,
)
from curation_pipeline.core.text import (
    append_sentence,
    normalise_sentence,
    split_sentences,
    strip_merge_markers,
)

NODE_SCHEMA = pl.Schema(
    {
        "id": pl.String,
        "memory_type": pl.String,
        "pointer_summary": pl.String,
        "base_utility": pl.Float64,
        "pinned": pl.Boolean,
        "confidence": pl.String,
        "recall_count": pl.Int64,
        "created_at": pl.Datetime("us", "UTC"),
    }
)

CONSOLIDATION_SCHEMA = pl.Schema(
    {
        "keeper_id": pl.String,
        "absorbed_id": pl.String,
        "similarity": pl.Float64,
        "merged_text": pl.String,
        "keeper_text_changed": pl.Boolean,
        "added_sentences": pl.Int64,
        "omitted_sentences": pl.Int64,
    }
)


# --------------------------------------------------------------------------- disjoint selection


def select_disjoint_pairs(pairs: pl.DataFrame, ids: list[str] | pl.Series, cap: int) -> pl.DataFrame:
    """Greedily pick at most ``cap`` pairs, most similar first, no node in two pairs.

    Equal similarities are ordered by the pair's ids (the smaller id of the pair first, then the
    larger one), so the plan does not depend on row order. ``ids[k]`` is the id of row ``k``.
    Returns the chosen rows of ``pairs`` (all its columns) in selection order.
    """
    if cap <= 0 or pairs.is_empty():
        return pairs.clear()
    id_series = ids.cast(pl.String) if isinstance(ids, pl.Series) else pl.Series(ids, dtype=pl.String)
    id_i = id_series.gather(pairs["i"])
    id_j = id_series.gather(pairs["j"])
    ranked = pairs.with_columns(
        _low_id=pl.min_horizontal(pl.lit(id_i), pl.lit(id_j)),
        _high_id=pl.max_horizontal(pl.lit(id_i), pl.lit(id_j)),
    ).sort(["similarity", "_low_id", "_high_id"], descending=[True, False, False])

    # The greedy choice depends on earlier choices, so this one loop is inherently sequential;
    # it stops as soon as the cap is reached.
    taken: set[int] = set()
    chosen: list[int] = []
    for position, (i, j) in enumerate(zip(ranked["i"], ranked["j"])):
        if i in taken or j in taken:
            continue
        taken.update((i, j))
        chosen.append(position)
        if len(chosen) == cap:
            break
    return ranked.select(pl.col(pairs.columns).gather(chosen))


# --------------------------------------------------------------------------- keeper choice


def keeper_sort_key(node: Mapping[str, Any]) -> tuple:
    """Sort key of a node as a keeper: the smaller key is kept, the other is absorbed.

    Order: pinned first (a pinned node must never be archived), then confidence ``verified``,
    then higher base_utility, then higher recall_count, then older created_at, then smaller id.
    Unknown values lose: a null pinned counts as pinned (the safe side), a null or NaN
    utility, null recall_count or null created_at ranks after any known value.
    """
    pinned = node.get("pinned")
    utility = node.get("base_utility")
    recalls = node.get("recall_count")
    created = node.get("created_at")
    utility_unknown = utility is None or math.isnan(utility)
    return (
        not (pinned is None or bool(pinned)),
        node.get("confidence") != "verified",
        (utility_unknown, 0.0 if utility_unknown else -utility),
        (recalls is None, 0 if recalls is None else -recalls),
        (created is None, 0 if created is None else created),
        node["id"],
    )


def choose_keeper(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """Return ``(keeper, absorbed)`` for two nodes, by :func:`keeper_sort_key`."""
    return (a, b) if keeper_sort_key(a) <= keeper_sort_key(b) else (b, a)


def keeper_rank(nodes: pl.DataFrame) -> np.ndarray:
    """Keeper rank of every row of ``nodes`` (0 = best keeper), the rule of
    :func:`keeper_sort_key` as one Polars sort: of two nodes, the lower rank is kept."""
    order = (
        nodes.with_row_index("_row")
        .sort(
            pl.col("pinned").fill_null(True),
            (pl.col("confidence") == "verified").fill_null(False),
            pl.col("base_utility").fill_nan(None),
            pl.col("recall_count"),
            pl.col("created_at"),
            pl.col("id"),
            descending=[True, True, True, True, False, False],
            nulls_last=True,
        )["_row"]
        .to_numpy()
    )
    rank = np.empty(nodes.height, dtype=np.int64)
    rank[order] = np.arange(nodes.height)
    return rank


# --------------------------------------------------------------------------- offline merge


@dataclass(frozen=True)
class MergeResult:
    """Outcome of :func:`offline_merge`.

    ``changed`` compares with the keeper's text exactly as given, so flattening an old
    ``[merged: ...]`` marker counts as a change even when nothing was added.
    """

    text: str
    added_sentences: int
    omitted_sentences: int
    changed: bool


def new_sentences(keeper_text: str, absorbed_text: str) -> list[str]:
    """Sentences of ``absorbed_text`` not already in ``keeper_text``, in order, each once.

    Both texts are flattened first (``[merged: ...]`` bodies become plain sentences) and compared
    with :func:`normalise_sentence`; sentences that normalise to nothing (``"..."``) add nothing.
    """
    present = {normalise_sentence(s) for s in split_sentences(strip_merge_markers(keeper_text))}
    fresh: list[str] = []
    for sentence in split_sentences(strip_merge_markers(absorbed_text)):
        key = normalise_sentence(sentence)
        if key and key not in present:
            present.add(key)  # a sentence repeated inside the absorbed text is added once
            fresh.append(sentence)
    return fresh


def offline_merge(keeper_text: str, absorbed_text: str, max_chars: int = 2000) -> MergeResult:
    """Merge two memory texts without an LLM.

    The flattened keeper text is kept whole and in order - never cut, even when it alone is
    longer than ``max_chars`` - and each new sentence of the absorbed text is appended while the
    result stays within ``max_chars`` (exactly ``max_chars`` fits). A sentence that does not fit
    is counted in ``omitted_sentences`` and later, shorter ones are still tried: each fact that
    fits is kept. Omitted sentences stay readable in the archived node. The result never contains
    a ``[merged:`` marker.
    """
    merged = strip_merge_markers(keeper_text)
    added = omitted = 0
    # The length of the text append_sentence would make, known without making it: a keeper of
    # megabytes (an agent's) would otherwise be copied once per sentence of the other node.
    head = len(merged.rstrip())
    for sentence in new_sentences(merged, absorbed_text):
        if (head + 1 + len(sentence) if head else len(sentence)) <= max_chars:
            merged = append_sentence(merged, sentence)
            head = len(merged.rstrip())
            added += 1
        else:
            omitted += 1
    return MergeResult(merged, added, omitted, changed=merged != keeper_text)


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class ConsolidationPass:
    plan: pl.DataFrame  # CONSOLIDATION_SCHEMA
    mergeable_pairs: int  # pairs found that the rules allow to merge, selected or not

    @property
    def left_over(self) -> int:
        """Mergeable pairs this pass did not take (cap, or a node already in another pair)."""
        return self.mergeable_pairs - self.plan.height


def plan_consolidation(
    nodes: pl.DataFrame,
    embeddings: np.ndarray,
    *,
    threshold: float = 0.92,
    cap: int = 20,
    max_chars: int = 2000,
) -> pl.DataFrame:
    """Plan this cycle's merges: at most ``cap`` disjoint (keeper, absorbed) pairs (see
    ``consolidation_pass``, which also tells whether pairs were left for another cycle)."""
    return consolidation_pass(nodes, embeddings, threshold=threshold, cap=cap, max_chars=max_chars).plan


def consolidation_pass(
    nodes: pl.DataFrame,
    embeddings: np.ndarray,
    *,
    threshold: float = 0.92,
    cap: int = 20,
    max_chars: int = 2000,
    focus: np.ndarray | None = None,
    vetoed: pl.DataFrame | None = None,
) -> ConsolidationPass:
    """Plan this cycle's merges: at most ``cap`` disjoint (keeper, absorbed) pairs.

    ``embeddings`` is aligned row for row with ``nodes``. Pairs only form within one
    memory_type (a null memory_type is a group of its own) and, when ``nodes`` has an
    ``embedding_model`` column, within one embedding model: vectors of two models live in
    different spaces and their cosine means nothing. Pairs that the pinned rule forbids
    are dropped before the disjoint selection, so they neither use the cap nor block their nodes
    from pairing with someone else. Rows come out most similar first. With ``focus``, only
    pairs involving a focus row are considered (see ``find_similar_pairs``).
    """
    empty = ConsolidationPass(pl.DataFrame(schema=CONSOLIDATION_SCHEMA), 0)
    groups = group_of_row(nodes)
    nodes = nodes.select(pl.col(name).cast(dtype) for name, dtype in NODE_SCHEMA.items())
    vectors = np.asarray(embeddings, dtype=np.float32)
    if nodes.is_empty() and vectors.size == 0:
        return empty  # accept any empty array shape
    if vectors.ndim != 2 or vectors.shape[0] != nodes.height:
        raise ValueError(f"embeddings must have one row per node ({nodes.height}), got shape {vectors.shape}")
    require_finite_rows(vectors, lambda row: f"node {nodes['id'][row]!r}")

    pairs = find_similar_pairs(vectors, groups, threshold=threshold, focus=focus)
    return select_merges(nodes, pairs, cap=cap, max_chars=max_chars, vetoed=vetoed)


def select_merges(
    nodes: pl.DataFrame, pairs: pl.DataFrame, *, cap: int, max_chars: int,
    vetoed: pl.DataFrame | None = None,
) -> ConsolidationPass:
    """The merges to make among pairs already found above the threshold (PAIR_SCHEMA rows
    indexing `nodes`), however they were found: keeper, pinned rule, disjoint selection, text.
    `vetoed` pairs (ID_PAIR_SCHEMA: undone merges) are never proposed."""
    empty = ConsolidationPass(pl.DataFrame(schema=CONSOLIDATION_SCHEMA), 0)
    if pairs.is_empty():
        return empty
    nodes = nodes.select(pl.col(name).cast(dtype) for name, dtype in NODE_SCHEMA.items())
    candidates = _orient_pairs(pairs, nodes)
    if vetoed is not None and vetoed.height:
        candidates = (
            with_pair_ids(candidates, nodes["id"])
            .join(vetoed, on=["low_id", "high_id"], how="anti")
            .drop("low_id", "high_id")
        )
    mergeable = candidates.filter(_allowed_by_pinned_rule(candidates))
    if cap <= 0:
        return ConsolidationPass(empty.plan, mergeable.height)
    selected = select_disjoint_pairs(mergeable, nodes["id"], cap)
    return ConsolidationPass(_with_merged_text(selected, max_chars), mergeable.height)


def group_of_row(nodes: pl.DataFrame) -> np.ndarray:
    """One integer per row; rows may pair only with rows of the same integer."""
    keys = [name for name in ("memory_type", "embedding_model") if name in nodes.columns]
    if nodes.is_empty():
        return np.zeros(0, dtype=np.int64)
    # Nulls become their own value ("\0" can't collide with a real memory_type or model name).
    group_key = pl.concat_str([pl.col(name).fill_null("\0") for name in keys], separator="\x1f")
    return nodes.select(group_key.rank("dense")).to_series().to_numpy().astype(np.int64)


def _orient_pairs(pairs: pl.DataFrame, nodes: pl.DataFrame) -> pl.DataFrame:
    """Attach to each pair its keeper and absorbed node (id, text, pinned)."""
    rank = keeper_rank(nodes)
    i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    keeper_row = np.where(rank[i] < rank[j], i, j)
    absorbed_row = np.where(rank[i] < rank[j], j, i)
    pinned = nodes["pinned"].fill_null(True)  # unknown pinned: the safe side
    text = nodes["pointer_summary"].fill_null("")
    return pairs.with_columns(
        keeper_id=nodes["id"].gather(keeper_row),
        absorbed_id=nodes["id"].gather(absorbed_row),
        keeper_text=text.gather(keeper_row),
        absorbed_text=text.gather(absorbed_row),
        keeper_pinned=pinned.gather(keeper_row),
        absorbed_pinned=pinned.gather(absorbed_row),
    )


def _allowed_by_pinned_rule(candidates: pl.DataFrame) -> pl.Series:
    """Which pairs may merge: no pinned node, or a pinned keeper and a pure duplicate.

    Pinned nodes rank first as keepers, so a pinned absorbed node means both are pinned: such
    a pair would archive a pinned node and is never allowed. With a pinned keeper the text may
    not change, so the pair merges only if the absorbed node brings no new sentence. Only the
    pinned-keeper pairs need the (Python) sentence comparison.
    """
    adds_nothing = [
        not new_sentences(keeper, absorbed) if keeper_pinned else True
        for keeper, absorbed, keeper_pinned in zip(
            candidates["keeper_text"], candidates["absorbed_text"], candidates["keeper_pinned"]
        )
    ]
    return ~candidates["absorbed_pinned"] & pl.Series(adds_nothing, dtype=pl.Boolean)


def _with_merged_text(selected: pl.DataFrame, max_chars: int) -> pl.DataFrame:
    """Compute the offline merge of each selected pair (at most ``cap`` rows)."""
    merges = [
        # A pinned keeper only absorbs pure duplicates and its text is never rewritten,
        # not even to flatten an old marker.
        MergeResult(keeper, 0, 0, False) if keeper_pinned else offline_merge(keeper, absorbed, max_chars)
        for keeper, absorbed, keeper_pinned in zip(
            selected["keeper_text"], selected["absorbed_text"], selected["keeper_pinned"]
        )
    ]
    return pl.DataFrame(
        {
            "keeper_id": selected["keeper_id"],
            "absorbed_id": selected["absorbed_id"],
            "similarity": selected["similarity"],
            "merged_text": [m.text for m in merges],
            "keeper_text_changed": [m.changed for m in merges],
            "added_sentences": [m.added_sentences for m in merges],
            "omitted_sentences": [m.omitted_sentences for m in merges],
        },
        schema=CONSOLIDATION_SCHEMA,
    )


def archive_allowance(active_nodes: int, max_fraction: float) -> int:
    """How many nodes one cycle may archive in a namespace of `active_nodes`: a share of it, but
    at least one, so a two-node namespace can still fold its duplicate."""
    return max(1, math.floor(active_nodes * max_fraction))

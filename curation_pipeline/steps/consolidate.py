"""Step 2, ``consolidate_duplicates``: plan which near-duplicate memories merge this cycle.

Pure planning, no IO. The pieces, in the order :func:`plan_consolidation` uses them:

1. :func:`find_similar_pairs` - exact cosine similarity of every pair inside one memory_type,
   computed over float32 tiles of at most ``block_rows`` x ``block_rows`` so memory stays bounded
   (an exact blocked scan beat both a SQL self-join and per-row HNSW queries on 100k vectors).
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from curation_pipeline.text import (
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

PAIR_SCHEMA = pl.Schema({"i": pl.Int64, "j": pl.Int64, "similarity": pl.Float64})

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


# --------------------------------------------------------------------------- similar pairs

# Tile side for the blocked products: 1024 x 1024 float32 tiles (4 MiB) stay in cache-friendly
# sizes and measured fastest on 2 cores (benchmarks/curation_cost.py).
BLOCK_ROWS = 1024


def find_similar_pairs(
    embeddings: np.ndarray,
    groups: np.ndarray,
    *,
    threshold: float = 0.92,
    block_rows: int = BLOCK_ROWS,
    focus: np.ndarray | None = None,
) -> pl.DataFrame:
    """Every pair ``i < j`` of rows in the same group whose cosine similarity is > ``threshold``.

    With ``focus`` (a boolean mask of rows, e.g. the nodes changed since the last complete
    pass), only pairs with at least one focus row are searched: k focus rows cost k x n
    products instead of n x n / 2.

    ``embeddings`` is ``(n, d)`` and need not be normalised; rows of zero norm have no direction
    and never pair. ``groups`` holds one integer per row (one value per memory_type): pairs never
    cross groups. Rows are sorted by group so each group is a contiguous slice, and each group is
    scanned in ``block_rows`` x ``block_rows`` float32 tiles on and above the diagonal, so the
    full n x n matrix is never built. Returns columns ``i``, ``j`` (row numbers of the input) and
    ``similarity``, sorted by ``i`` then ``j``.
    """
    vectors = np.asarray(embeddings, dtype=np.float32)
    group_of_row = np.asarray(groups)
    if vectors.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D (rows, dimensions) array, got shape {vectors.shape}")
    if group_of_row.shape != (vectors.shape[0],):
        raise ValueError(f"groups must have one entry per embedding row ({vectors.shape[0]}), got shape {group_of_row.shape}")
    if block_rows < 1:
        raise ValueError(f"block_rows must be at least 1, got {block_rows}")
    _require_finite_rows(vectors, lambda row: f"row {row}")

    # Squared norms in float64: float32 squares can overflow for large (but finite) values.
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64))
    usable_rows = np.flatnonzero((norms > 0) & np.isfinite(norms))
    # Stable sort keeps row numbers ascending inside a group, so tile positions r < c map to i < j.
    rows = usable_rows[np.argsort(group_of_row[usable_rows], kind="stable")]
    unit = vectors[rows]  # one reordered copy; normalised in place
    unit /= norms[rows, None].astype(np.float32)

    sorted_groups = group_of_row[rows]
    group_starts = np.flatnonzero(sorted_groups[1:] != sorted_groups[:-1]) + 1
    bounds = zip(np.concatenate(([0], group_starts)), np.concatenate((group_starts, [len(rows)])))

    focus_sorted = None if focus is None else np.asarray(focus, dtype=bool)[rows]
    found_i: list[np.ndarray] = []
    found_j: list[np.ndarray] = []
    found_sim: list[np.ndarray] = []
    for start, stop in bounds:
        if focus_sorted is None:
            pairs = _pairs_in_slice(unit[start:stop], threshold, block_rows)
        else:
            pairs = _focus_pairs_in_slice(unit[start:stop], focus_sorted[start:stop], threshold, block_rows)
        for r, c, sim in pairs:
            first, second = rows[start + r], rows[start + c]
            found_i.append(np.minimum(first, second))
            found_j.append(np.maximum(first, second))
            found_sim.append(sim)

    if not found_i:
        return pl.DataFrame(schema=PAIR_SCHEMA)
    return pl.DataFrame(
        {
            "i": np.concatenate(found_i).astype(np.int64),
            "j": np.concatenate(found_j).astype(np.int64),
            "similarity": np.concatenate(found_sim).astype(np.float64),
        },
        schema=PAIR_SCHEMA,
    ).sort("i", "j")


def _pairs_in_slice(
    unit: np.ndarray, threshold: float, block_rows: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(r, c, similarity)`` for r < c in one group's unit vectors, tile by tile.

    Only tiles on or above the diagonal are computed; inside a diagonal tile the strict upper
    triangle is kept, so each unordered pair appears exactly once and no row pairs with itself.
    """
    size = unit.shape[0]
    for row_start in range(0, size, block_rows):
        row_block = unit[row_start : row_start + block_rows]
        for col_start in range(row_start, size, block_rows):
            similarity = row_block @ unit[col_start : col_start + block_rows].T
            above = similarity > threshold
            # Pairs are rare: most tiles have none, and skipping them costs one pass over bytes.
            if not above.any():
                continue
            r, c = np.nonzero(above)
            if col_start == row_start:  # diagonal tile: strict upper triangle only
                upper = r < c
                r, c = r[upper], c[upper]
            if r.size:
                yield row_start + r, col_start + c, similarity[r, c]


def _focus_pairs_in_slice(
    unit: np.ndarray, focus: np.ndarray, threshold: float, block_rows: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(r, c, similarity)`` for pairs of one group with at least one focus row.

    Focus rows are compared with every row; a pair of two focus rows is kept once (from its
    smaller row) and a row never pairs with itself.
    """
    focus_rows = np.flatnonzero(focus)
    for row_start in range(0, focus_rows.size, block_rows):
        block_rows_ids = focus_rows[row_start : row_start + block_rows]
        row_block = unit[block_rows_ids]
        for col_start in range(0, unit.shape[0], block_rows):
            similarity = row_block @ unit[col_start : col_start + block_rows].T
            r, c = np.nonzero(similarity > threshold)
            if not r.size:
                continue
            sim = similarity[r, c]
            r, c = block_rows_ids[r], col_start + c
            keep = (r != c) & (~focus[c] | (r < c))
            if keep.any():
                yield r[keep], c[keep], sim[keep]


def _require_finite_rows(vectors: np.ndarray, describe_row: Callable[[int], str]) -> None:
    """Raise a ValueError naming the first row holding NaN or infinity."""
    bad = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
    if bad.size:
        raise ValueError(
            f"embedding of {describe_row(int(bad[0]))} contains NaN or infinity "
            f"({bad.size} bad row{'s' if bad.size > 1 else ''} in total)"
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
    for sentence in new_sentences(merged, absorbed_text):
        candidate = append_sentence(merged, sentence)
        if len(candidate) <= max_chars:
            merged = candidate
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
    vetoed: frozenset[tuple[str, str]] = frozenset(),
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
    group_of_row = _group_of_row(nodes)
    nodes = nodes.select(pl.col(name).cast(dtype) for name, dtype in NODE_SCHEMA.items())
    vectors = np.asarray(embeddings, dtype=np.float32)
    if nodes.is_empty() and vectors.size == 0:
        return empty  # accept any empty array shape
    if vectors.ndim != 2 or vectors.shape[0] != nodes.height:
        raise ValueError(f"embeddings must have one row per node ({nodes.height}), got shape {vectors.shape}")
    _require_finite_rows(vectors, lambda row: f"node {nodes['id'][row]!r}")

    pairs = find_similar_pairs(vectors, group_of_row, threshold=threshold, focus=focus)
    return select_merges(nodes, pairs, cap=cap, max_chars=max_chars, vetoed=vetoed)


def select_merges(
    nodes: pl.DataFrame, pairs: pl.DataFrame, *, cap: int, max_chars: int,
    vetoed: frozenset[tuple[str, str]] = frozenset(),
) -> ConsolidationPass:
    """The merges to make among pairs already found above the threshold (PAIR_SCHEMA rows
    indexing `nodes`), however they were found: keeper, pinned rule, disjoint selection, text.
    `vetoed` pairs (sorted id pairs of undone merges) are never proposed."""
    empty = ConsolidationPass(pl.DataFrame(schema=CONSOLIDATION_SCHEMA), 0)
    if pairs.is_empty():
        return empty
    nodes = nodes.select(pl.col(name).cast(dtype) for name, dtype in NODE_SCHEMA.items())
    candidates = _orient_pairs(pairs, nodes)
    if vetoed:
        candidates = candidates.filter(pl.Series([
            tuple(sorted((keeper, absorbed))) not in vetoed
            for keeper, absorbed in zip(candidates["keeper_id"], candidates["absorbed_id"])
        ], dtype=pl.Boolean))
    mergeable = candidates.filter(_allowed_by_pinned_rule(candidates))
    if cap <= 0:
        return ConsolidationPass(empty.plan, mergeable.height)
    selected = select_disjoint_pairs(mergeable, nodes["id"], cap)
    return ConsolidationPass(_with_merged_text(selected, max_chars), mergeable.height)


def _group_of_row(nodes: pl.DataFrame) -> np.ndarray:
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

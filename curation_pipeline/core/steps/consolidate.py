"""Step 2 (consolidation): plan which near-duplicate memories merge this cycle.

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
   rejected): the keeper's sentences, then what of the absorbed node they do not already say
   (clause coverage, coverage.py), while it fits.

Which similar pairs merge at all, and which are updates to supersede instead, is decided by
pair_decisions.py before these rules run.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from curation_pipeline.core.clauses import text_clauses
from curation_pipeline.core.coverage import KeptText, Semantic, uncovered
from curation_pipeline.core.steps.similarity import (
    find_similar_pairs,
    require_finite_rows,
    with_pair_ids,
)
from curation_pipeline.core.supersession import says_two_values
from curation_pipeline.core.text import (
    CJK_TERMINATORS,
    append_sentence,
    ends_sentence,
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
        # JSON: the absorbed clauses the merged text does not repeat and what says them, and the
        # keeper sentences a fuller absorbed sentence replaced (MergeResult); null: none.
        "coverage": pl.String,
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
    ``[merged: ...]`` marker counts as a change even when nothing was added. ``covered``: each
    clause of the absorbed text that the merged text does not repeat, with the kept sentence
    that already says it and how (coverage.Covered.record); ``replaced``: keeper sentences that
    an absorbed sentence saying all of it and more took the place of.
    """

    text: str
    added_sentences: int
    omitted_sentences: int
    changed: bool
    covered: tuple[dict, ...] = ()
    replaced: tuple[dict, ...] = ()


def new_sentences(keeper_text: str, absorbed_text: str) -> list[str]:
    """Sentences of ``absorbed_text`` that ``keeper_text`` does not hold as written, in order, a
    repeated one each time, as the clause-by-clause merge would count them when none fits: a
    check linear in the texts, for texts too long to compare clause by clause. Both are
    flattened and compared in NFC with runs of whitespace as one space, but case and
    punctuation kept ("Xq7-LmN2" is not "xq7-lmn2"), so nothing said differently is counted said."""
    present = {_as_written(s) for s in split_sentences(strip_merge_markers(keeper_text))}
    return [s for s in split_sentences(strip_merge_markers(absorbed_text)) if _as_written(s) not in present]


def _as_written(sentence: str) -> str:
    return " ".join(unicodedata.normalize("NFC", sentence).split())


def adds_nothing(keeper_text: str, absorbed_text: str, semantic: Semantic | None = None) -> bool:
    """Whether every clause of ``absorbed_text`` is already said by ``keeper_text``."""
    return not uncovered([absorbed_text], KeptText.of([keeper_text], semantic))


def _replace_sentences(text: str, sentences: list[str], gone: set[int], replacement: str) -> str:
    """``text`` with its sentences (``sentences``, in order, as split_sentences gives them)
    numbered in ``gone`` taken out and ``replacement`` standing where the first of them stood."""
    spans, at = [], 0
    for sentence in sentences:
        start = text.find(sentence, at)
        spans.append((start, start + len(sentence)))
        at = start + len(sentence)
    first = min(gone)
    pieces, at, after = [], 0, 0
    for number, (start, end) in enumerate(spans):
        if number not in gone:
            continue
        pieces.append(text[at:start])
        if number == first:
            pieces.append(replacement)
            after = len(pieces)
        at = end
        if number != first:  # the space after a sentence that is taken out goes with it
            while at < len(text) and text[at].isspace():
                at += 1
    pieces.append(text[at:])
    rest = "".join(pieces[after:])
    if rest.strip() and not _still_apart(replacement, rest):
        # "User likes" (or "User likes.") where "User。" stood right before "Next" would glue
        # the two into one sentence: they are set apart as append_sentence sets sentences.
        return append_sentence("".join(pieces[:after]), rest.lstrip()).rstrip()
    return "".join(pieces).rstrip()


def _still_apart(sentence: str, rest: str) -> bool:
    """Whether ``rest`` after ``sentence`` still starts a new sentence (text.split_sentences)."""
    gap = rest[: len(rest) - len(rest.lstrip())]
    return "\n" in gap or sentence.rstrip().endswith(tuple(CJK_TERMINATORS)) or (bool(gap) and ends_sentence(sentence))


def _host(outcome: list) -> int | None:
    """The kept sentence that says the first said clause of a partly said sentence (None: no
    clause of it with words is said)."""
    said = [c for c in outcome if c.covered and c.clause.keys and c.by is not None and c.by.sentence >= 0]
    return said[0].by.sentence if said and any(not c.covered for c in outcome) else None


def _extended(sentence: str, clauses: list[str]) -> str:
    """``sentence`` with ``clauses`` added at its end, before its final punctuation."""
    body = sentence.rstrip()
    end = body[-1] if body and body[-1] in ".!?…" else ""
    body = body[:-1].rstrip() if end else body
    return f"{body}, {', '.join(clauses)}{end}"


def _without_clauses_said_by(merged: str, present: KeptText,
                             other: KeptText) -> tuple[str, list[tuple[str, str]], list[dict]]:
    """`merged` (whose sentences `present` holds) without the clauses that `other` says, after
    the first clause of their sentence (which holds its subject); each sentence so changed,
    before and after; and each clause dropped, with what says it."""
    changed, said = [], []
    for sentence in present.sentences:
        drop = set()
        for n, clause in enumerate(sentence.clauses):
            covered = other.cover(clause) if n > 0 and clause.keys else None
            if covered is not None and covered.covered:
                drop.add(n)
                said.append(covered.record())
        if drop:
            changed.append((sentence.index, sentence.text, _without(sentence, drop)))
    texts = [s.text for s in present.sentences]
    for number, _, shorter in changed:
        merged = _replace_sentences(merged, texts, {number}, shorter)
        texts[number] = shorter
    return merged, [(old, new) for _, old, new in changed], said


def _without(sentence, drop: set[int]) -> str:
    """A sentence without some of its clauses (each with the separator before it)."""
    spans, text = sentence.spans, sentence.text
    kept = text[: spans[0][1]]
    for n in range(1, len(spans)):
        if n not in drop:
            kept += text[spans[n - 1][1]: spans[n][1]]
    return kept + text[spans[-1][1]:]


def offline_merge(keeper_text: str, absorbed_text: str, max_chars: int = 2000,
                  semantic: Semantic | None = None) -> MergeResult:
    """Merge two memory texts without an LLM, saying each fact once.

    The flattened keeper text is kept whole and in order - never cut, even when it alone is
    longer than ``max_chars``. Each sentence of the absorbed text is then, in order:

    - left out when every one of its clauses is already said by the merged text so far (its
      clauses and what covers them are listed in ``covered``): a restatement adds nothing;
    - put in the place of the keeper sentences it says entirely when it also says more (the
      keeper's "The job runs nightly." becomes the absorbed "The job runs nightly and is
      deprecated."), so the fact the keeper had is said once and nothing of it is lost;
    - when the keeper says only part of it, the rest (its clauses the keeper does not say, as
      written) is added to the keeper's sentence that says that part: "Dana prefers email and
      lives in Berlin." and "Dana prefers email and wants invoices by the 5th." make "Dana
      prefers email and lives in Berlin, and wants invoices by the 5th.";
    - else appended whole: it is new.

    A keeper already longer than ``max_chars`` is kept as it is (each absorbed sentence it does
    not contain word for word is counted omitted). Otherwise each change that keeps the result
    within ``max_chars`` (exactly ``max_chars`` fits) is made;
    a sentence that does not fit is counted in ``omitted_sentences`` and later, shorter ones are
    still tried. Omitted sentences stay readable in the archived node. The result never contains
    a ``[merged:`` marker, and every clause of both texts is in it or covered by it.
    """
    merged = strip_merge_markers(keeper_text)
    if len(merged) > max_chars:
        # Every change but a replacement makes the text longer, so a keeper already over the
        # cap (an agent's) is kept as it is, without comparing each clause of two long texts
        # (minutes of step 2 for two 10 MB memories, benchmarks/huge_namespace_cost.py).
        return MergeResult(merged, 0, len(new_sentences(merged, absorbed_text)), changed=merged != keeper_text)
    added = omitted = 0
    covered: list[dict] = []
    replaced: list[dict] = []
    for absorbed in text_clauses(absorbed_text):
        present = KeptText.of([merged], semantic)
        outcome = present.cover_all(absorbed.clauses)
        if all(c.covered for c in outcome):
            covered.extend(c.record() for c in outcome if c.clause.keys)
            continue
        says_all_of = KeptText([absorbed], semantic)
        contained = [s.text for s in present.sentences if any(c.keys for c in s.clauses)
                     and all(c.covered for c in says_all_of.cover_all(s.clauses))]
        sentences = [s.text for s in present.sentences]
        host = _host(outcome)
        if contained:
            numbers = {n for n, text in enumerate(sentences) if text in contained}
            candidate = _replace_sentences(merged, sentences, numbers, absorbed.text)
            changes = [{"sentence": old, "by": absorbed.text} for old in contained]
        elif host is not None:
            # The keeper says part of the sentence: only the rest is added, to the keeper's
            # sentence that says that part ("..., and wants invoices by the 5th.").
            extended = _extended(sentences[host], [c.clause.text for c in outcome if not c.covered])
            candidate = _replace_sentences(merged, sentences, {host}, extended)
            changes = [{"sentence": sentences[host], "by": extended}]
        else:
            # New, but it may say again a later clause of a keeper sentence ("..., and is off
            # every other Friday." before "... takes every other Friday off."): that clause goes.
            trimmed, said_again, dropped = _without_clauses_said_by(merged, present, says_all_of)
            candidate = append_sentence(trimmed, absorbed.text)
            changes = [{"sentence": old, "by": new} for old, new in said_again]
        if len(candidate) <= max_chars:
            merged = candidate
            added += 1
            replaced.extend(changes)
            if host is not None and not contained:
                covered.extend(c.record() for c in outcome if c.covered and c.clause.keys)
            elif host is None and not contained:
                covered.extend(dropped)
        else:
            omitted += 1
    return MergeResult(merged, added, omitted, changed=merged != keeper_text,
                       covered=tuple(covered), replaced=tuple(replaced))


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
    vetoed: pl.DataFrame | None = None, semantic: Semantic | None = None,
) -> ConsolidationPass:
    """The merges to make among pairs already found above the threshold (PAIR_SCHEMA rows
    indexing `nodes`), however they were found: keeper, pinned rule, disjoint selection, text.
    `vetoed` pairs (ID_PAIR_SCHEMA: undone merges) are never proposed. `semantic`: the
    configured embedder's judgement of what a text already says (coverage.py)."""
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
    mergeable = candidates.filter(_allowed_by_pinned_rule(candidates, semantic))
    if cap <= 0:
        return ConsolidationPass(empty.plan, mergeable.height)
    selected = select_disjoint_pairs(mergeable, nodes["id"], cap)
    planned = _with_merged_text(selected, max_chars, semantic)
    # A merge that cannot keep every clause within the limit, or whose text would state one
    # thing with two values, does not happen: the pair stays, counted as left over.
    return ConsolidationPass(planned.filter((pl.col("omitted_sentences") == 0) & ~pl.col("two_values"))
                             .drop("two_values"), mergeable.height)


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


def _allowed_by_pinned_rule(candidates: pl.DataFrame, semantic: Semantic | None = None) -> pl.Series:
    """Which pairs may merge: no pinned node, or a pinned keeper and a pure duplicate.

    Pinned nodes rank first as keepers, so a pinned absorbed node means both are pinned: such
    a pair would archive a pinned node and is never allowed. With a pinned keeper the text may
    not change, so the pair merges only if the absorbed node says nothing the keeper does not.
    Only the pinned-keeper pairs need the (Python) clause comparison.
    """
    says_nothing_new = [
        adds_nothing(keeper, absorbed, semantic) if keeper_pinned else True
        for keeper, absorbed, keeper_pinned in zip(
            candidates["keeper_text"], candidates["absorbed_text"], candidates["keeper_pinned"]
        )
    ]
    return ~candidates["absorbed_pinned"] & pl.Series(says_nothing_new, dtype=pl.Boolean)


def _with_merged_text(selected: pl.DataFrame, max_chars: int, semantic: Semantic | None = None) -> pl.DataFrame:
    """Compute the offline merge of each selected pair (at most ``cap`` rows)."""
    merges = [
        # A pinned keeper only absorbs what it already says and its text is never rewritten,
        # not even to flatten an old marker.
        _pinned_keeper(keeper, absorbed, semantic) if keeper_pinned
        else offline_merge(keeper, absorbed, max_chars, semantic)
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
            "coverage": [json.dumps({"covered": list(m.covered), "replaced": list(m.replaced)})
                         if m.covered or m.replaced else None for m in merges],
            "two_values": [m.changed and says_two_values(m.text) and not says_two_values(keeper)
                           and not says_two_values(absorbed)
                           for m, keeper, absorbed in zip(merges, selected["keeper_text"], selected["absorbed_text"])],
        },
        schema={**CONSOLIDATION_SCHEMA, "two_values": pl.Boolean},
    )


def _pinned_keeper(keeper: str, absorbed: str, semantic: Semantic | None) -> MergeResult:
    """A pinned keeper's merge: its text as it is, and what of the absorbed node it says."""
    said = KeptText.of([keeper], semantic).cover_all([c for s in text_clauses(absorbed) for c in s.clauses])
    return MergeResult(keeper, 0, 0, False, covered=tuple(c.record() for c in said if c.clause.keys))


def archive_allowance(active_nodes: int, max_fraction: float) -> int:
    """How many nodes one cycle may archive in a namespace of `active_nodes`: a share of it, but
    at least one, so a two-node namespace can still fold its duplicate."""
    return max(1, math.floor(active_nodes * max_fraction))

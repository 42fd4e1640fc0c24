"""Step 2 planning: pair search, disjoint selection, keeper choice, offline merge, the plan."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from curation_pipeline.core.coverage import KeptText, clauses_of
from curation_pipeline.core.steps.consolidate import (
    CONSOLIDATION_SCHEMA,
    choose_keeper,
    consolidation_pass,
    keeper_rank,
    keeper_sort_key,
    offline_merge,
    plan_consolidation,
    select_disjoint_pairs,
)
from curation_pipeline.core.steps.similarity import PAIR_SCHEMA, find_similar_pairs
from curation_pipeline.core.text import (
    has_merge_marker,
    split_sentences,
    strip_merge_markers,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def angle_vectors(*angles: float) -> np.ndarray:
    """2-D unit vectors at the given angles: cos(a - b) is the similarity of a pair."""
    return np.array([[math.cos(a), math.sin(a)] for a in angles], dtype=np.float32)


_WORDS = ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliett",
          "Kilo", "Lima", "Mike", "November", "Oscar", "Papa", "Quebec", "Romeo", "Sierra", "Tango")


def make_nodes(count: int, **columns: list) -> pl.DataFrame:
    """A node frame of ``count`` rows with neutral defaults, overridden by ``columns``."""
    base = {
        "id": [f"n{k}" for k in range(count)],
        "memory_type": ["fact"] * count,
        # Distinct facts of distinct things: two values of one thing never merge.
        "pointer_summary": [f"{_WORDS[k % len(_WORDS)]} has a note{'s' * (k // len(_WORDS))}." for k in range(count)],
        "base_utility": [0.5] * count,
        "pinned": [False] * count,
        "confidence": ["default"] * count,
        "recall_count": [0] * count,
        "created_at": [T0] * count,
    }
    base.update(columns)
    return pl.DataFrame(base).cast({"created_at": pl.Datetime("us", "UTC")})


def pairs_as_set(frame: pl.DataFrame) -> set[tuple[int, int]]:
    return set(zip(frame["i"].to_list(), frame["j"].to_list()))


# ----------------------------------------------------------------------------- find_similar_pairs


def brute_force_pairs(embeddings: np.ndarray, groups: np.ndarray, threshold: float) -> dict[tuple[int, int], float]:
    """Reference: the full n x n similarity matrix in float64."""
    norms = np.linalg.norm(embeddings.astype(np.float64), axis=1)
    unit = np.divide(embeddings, norms[:, None], out=np.zeros(embeddings.shape), where=norms[:, None] > 0)
    sims = unit @ unit.T
    return {
        (i, j): float(sims[i, j])
        for i in range(len(embeddings))
        for j in range(i + 1, len(embeddings))
        if groups[i] == groups[j] and norms[i] > 0 and norms[j] > 0 and sims[i, j] > threshold
    }


@pytest.mark.parametrize("block_rows", [1, 7, 64, 2048])
def test_blocked_search_matches_brute_force(block_rows: int) -> None:
    rng = np.random.default_rng(42)
    n, d, threshold = 300, 32, 0.9
    embeddings = rng.normal(size=(n, d)).astype(np.float32) * rng.uniform(0.1, 10, size=(n, 1)).astype(np.float32)
    groups = rng.integers(0, 3, size=n)
    # Plant near-duplicates (some scaled, i.e. not normalised), inside and across groups.
    for source, target in [(0, 150), (3, 299), (10, 11), (40, 41), (41, 42), (100, 250)]:
        embeddings[target] = embeddings[source] * 3 + rng.normal(scale=0.05, size=d).astype(np.float32)
    groups[[0, 150, 3, 299, 10, 11, 40, 41, 42]] = [1, 1, 2, 2, 0, 0, 1, 1, 1]
    groups[100], groups[250] = 0, 2  # near-duplicate across groups: must not pair
    embeddings[[5, 6]] = 0.0  # zero vectors never pair

    expected = brute_force_pairs(embeddings, groups, threshold)
    # The data keeps every similarity far from the threshold, so float32 rounding cannot flip one.
    full = brute_force_pairs(embeddings, groups, -2.0)
    assert all(abs(s - threshold) > 1e-3 for s in full.values())
    assert {(0, 150), (3, 299), (10, 11), (40, 41), (41, 42), (40, 42)} <= set(expected)
    assert (100, 250) not in expected

    found = find_similar_pairs(embeddings, groups, threshold=threshold, block_rows=block_rows)
    assert found.schema == PAIR_SCHEMA
    assert pairs_as_set(found) == set(expected)
    for i, j, sim in found.iter_rows():
        assert sim == pytest.approx(expected[(i, j)], abs=1e-5)
    assert found.sort("i", "j").equals(found)


def test_identical_vectors_pair_and_scale_is_ignored() -> None:
    embeddings = np.array([[1, 0], [2, 0], [0, 5]], dtype=np.float32)
    found = find_similar_pairs(embeddings, np.zeros(3, dtype=int))
    assert found.to_dicts() == [{"i": 0, "j": 1, "similarity": 1.0}]


def test_threshold_is_strict() -> None:
    embeddings = np.array([[1, 0], [3, 0]], dtype=np.float32)  # similarity exactly 1.0
    groups = np.zeros(2, dtype=int)
    assert find_similar_pairs(embeddings, groups, threshold=1.0).is_empty()
    assert find_similar_pairs(embeddings, groups, threshold=0.999).height == 1


def test_no_pair_across_groups() -> None:
    embeddings = np.ones((4, 3), dtype=np.float32)
    found = find_similar_pairs(embeddings, np.array([5, 9, 5, 9]))
    assert pairs_as_set(found) == {(0, 2), (1, 3)}


def test_zero_norm_rows_never_pair_even_with_negative_threshold() -> None:
    embeddings = np.array([[0, 0], [0, 0], [1, 0]], dtype=np.float32)
    found = find_similar_pairs(embeddings, np.zeros(3, dtype=int), threshold=-1.0)
    assert found.is_empty()


def test_empty_and_single_row_inputs_give_typed_empty_frames() -> None:
    for n in (0, 1):
        found = find_similar_pairs(np.ones((n, 4), dtype=np.float32), np.zeros(n, dtype=int))
        assert found.is_empty() and found.schema == PAIR_SCHEMA


def test_bad_embeddings_are_rejected_with_the_row() -> None:
    embeddings = np.ones((3, 2), dtype=np.float32)
    embeddings[2, 1] = np.nan
    with pytest.raises(ValueError, match="row 2"):
        find_similar_pairs(embeddings, np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="one entry per embedding row"):
        find_similar_pairs(np.ones((3, 2)), np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match="2-D"):
        find_similar_pairs(np.ones(3), np.zeros(3, dtype=int))


# ----------------------------------------------------------------------------- select_disjoint_pairs


def pair_frame(rows: list[tuple[int, int, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=PAIR_SCHEMA, orient="row")


def test_chain_selects_only_the_most_similar_pair() -> None:
    pairs = pair_frame([(0, 1, 0.95), (1, 2, 0.97), (0, 2, 0.93)])
    chosen = select_disjoint_pairs(pairs, ["a", "b", "c"], cap=20)
    assert chosen.to_dicts() == [{"i": 1, "j": 2, "similarity": 0.97}]


def test_each_node_used_once_and_greedy_continues_past_conflicts() -> None:
    pairs = pair_frame([(0, 1, 0.99), (1, 2, 0.98), (2, 3, 0.97), (3, 4, 0.96)])
    chosen = select_disjoint_pairs(pairs, ["a", "b", "c", "d", "e"], cap=20)
    assert pairs_as_set(chosen) == {(0, 1), (2, 3)}


def test_equal_similarity_ties_break_by_ids_not_row_order() -> None:
    pairs = pair_frame([(0, 1, 0.95), (1, 2, 0.95)])
    # Row 2 has the smallest id: the pair {row1, row2} = {"b", "a"} sorts first.
    chosen = select_disjoint_pairs(pairs, pl.Series(["c", "b", "a"]), cap=5)
    assert pairs_as_set(chosen) == {(1, 2)}
    chosen = select_disjoint_pairs(pairs, ["a", "b", "c"], cap=5)
    assert pairs_as_set(chosen) == {(0, 1)}


def test_cap_limits_and_order_is_most_similar_first() -> None:
    pairs = pair_frame([(0, 1, 0.93), (2, 3, 0.99), (4, 5, 0.95)])
    chosen = select_disjoint_pairs(pairs, list("abcdef"), cap=2)
    assert chosen["similarity"].to_list() == [0.99, 0.95]
    assert select_disjoint_pairs(pairs, list("abcdef"), cap=0).is_empty()


def test_extra_columns_are_kept_and_empty_input_keeps_schema() -> None:
    pairs = pair_frame([(0, 1, 0.95)]).with_columns(note=pl.lit("x"))
    assert select_disjoint_pairs(pairs, ["a", "b"], 3).columns == ["i", "j", "similarity", "note"]
    empty = select_disjoint_pairs(pl.DataFrame(schema=PAIR_SCHEMA), [], 3)
    assert empty.is_empty() and empty.schema == PAIR_SCHEMA


# ----------------------------------------------------------------------------- keeper choice


def node(id: str, **fields) -> dict:
    values = {
        "id": id,
        "pinned": False,
        "confidence": "default",
        "base_utility": 0.5,
        "recall_count": 0,
        "created_at": T0,
    }
    values.update(fields)
    return values


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        (node("z", pinned=True, base_utility=0.0), node("a", confidence="verified", base_utility=1.0)),
        (node("z", confidence="verified", base_utility=0.1), node("a", base_utility=0.9, recall_count=99)),
        (node("z", base_utility=0.6), node("a", base_utility=0.5, recall_count=99)),
        (node("z", recall_count=2), node("a", recall_count=1, created_at=T0 - timedelta(days=9))),
        (node("z", created_at=T0 - timedelta(seconds=1)), node("a")),
        (node("a"), node("b")),
        (node("z", base_utility=0.0), node("a", base_utility=None)),
        (node("z", base_utility=0.0), node("a", base_utility=float("nan"))),
        (node("z", pinned=None), node("a", confidence="verified")),
    ],
)
def test_keeper_rule(winner: dict, loser: dict) -> None:
    assert choose_keeper(winner, loser) == (winner, loser)
    assert choose_keeper(loser, winner) == (winner, loser)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([True, False, None]),
            st.sampled_from(["default", "verified", "stale", None]),
            st.sampled_from([0.0, 0.5, 1.0, None, float("nan")]),
            st.sampled_from([0, 1, 5, None]),
            st.sampled_from([0, 1, None]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_frame_rank_agrees_with_dict_rule(rows: list[tuple]) -> None:
    nodes = make_nodes(
        len(rows),
        pinned=[r[0] for r in rows],
        confidence=[r[1] for r in rows],
        base_utility=[r[2] for r in rows],
        recall_count=[r[3] for r in rows],
        created_at=[None if r[4] is None else T0 + timedelta(days=r[4]) for r in rows],
    )
    rank = keeper_rank(nodes)
    dict_order = sorted(range(nodes.height), key=lambda k: keeper_sort_key(nodes.row(k, named=True)))
    assert list(np.argsort(rank)) == dict_order


# ----------------------------------------------------------------------------- offline merge


def test_merge_appends_only_new_sentences_in_order() -> None:
    result = offline_merge("User likes tea. Lives in Paris.", "user likes TEA! Works at ACME. Lives in  paris")
    assert result.text == "User likes tea. Lives in Paris. Works at ACME."
    assert (result.added_sentences, result.omitted_sentences, result.changed) == (1, 0, True)


def test_pure_duplicate_leaves_keeper_unchanged() -> None:
    result = offline_merge("A fact. Another.", "another. A FACT")
    assert result.text == "A fact. Another."
    assert (result.added_sentences, result.omitted_sentences, result.changed) == (0, 0, False)


def test_merge_flattens_nested_markers_in_both_texts() -> None:
    result = offline_merge("A. [merged: B. [merged: C.]]", "C. [merged: D.] B.")
    assert result.text == "A. B. C. D."
    assert not has_merge_marker(result.text)
    assert result.added_sentences == 1 and result.changed


def test_flattening_alone_counts_as_a_change() -> None:
    result = offline_merge("A. [merged: B.]", "B.")
    assert result.text == "A. B." and result.changed and result.added_sentences == 0


def test_exactly_max_chars_fits_and_one_more_does_not() -> None:
    keeper = "k" * 1990 + "."  # 1991 characters
    fits = offline_merge(keeper, "Exactly.", max_chars=2000)  # 1991 + 1 space + 8 = 2000
    assert len(fits.text) == 2000 and fits.added_sentences == 1 and fits.omitted_sentences == 0
    too_long = offline_merge(keeper, "Exactly!!", max_chars=2000)  # would be 2001
    assert too_long.text == keeper
    assert (too_long.added_sentences, too_long.omitted_sentences, too_long.changed) == (0, 1, False)


def test_shorter_later_sentence_still_fits_after_an_omission() -> None:
    result = offline_merge("Keep.", "This sentence is far too long to fit. Short.", max_chars=12)
    assert result.text == "Keep. Short."
    assert (result.added_sentences, result.omitted_sentences) == (1, 1)


def test_keeper_longer_than_max_is_never_cut() -> None:
    keeper = "word " * 500
    result = offline_merge(keeper, "New fact.", max_chars=2000)
    assert result.text == keeper and result.omitted_sentences == 1 and not result.changed


def test_keeper_without_final_punctuation_gets_a_line_break() -> None:
    result = offline_merge("User likes tea", "User lives in Oslo")
    assert result.text == "User likes tea\nUser lives in Oslo"
    assert split_sentences(result.text) == ["User likes tea", "User lives in Oslo"]


def test_unicode_lengths_are_characters() -> None:
    keeper = "😀" * 10 + "."  # 11 characters, many more bytes
    result = offline_merge(keeper, "日本語です。 Café été.", max_chars=11 + 1 + 6)
    assert result.text == keeper + " 日本語です。"
    assert (result.added_sentences, result.omitted_sentences) == (1, 1)


def test_repeated_new_sentence_is_added_once() -> None:
    result = offline_merge("A.", "B. b. B!")
    assert result.text == "A. B." and result.added_sentences == 1


_TOKENS = st.sampled_from(
    ["User", "likes", "tea", "ÉTÉ", "straße", "😀", "漢字", " ", "  ", ". ", "! ", "? ", "…", "\n", "。",
     ",", "[merged: ", "[MERGED:", "]", "[", "..."]
)
_TEXTS = st.lists(_TOKENS, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, _TEXTS, st.integers(min_value=0, max_value=150))
# Found by longer runs: a replacement glued to the keeper sentence after it ("User。tea"), and a
# keeper over the cap whose absorbed sentences were counted once per spelling, or not at all.
@example(keeper="User。UserUser", absorbed="User😀likes", max_chars=18)
@example(keeper="User。tea", absorbed="User]likes. ", max_chars=14)
@example(keeper="User", absorbed="UserUser. UserUser", max_chars=0)
@example(keeper="\n", absorbed="! ", max_chars=0)
def test_merge_says_or_counts_every_clause(keeper: str, absorbed: str, max_chars: int) -> None:
    result = offline_merge(keeper, absorbed, max_chars=max_chars)
    flat_keeper = strip_merge_markers(keeper)
    said = KeptText.of([result.text])

    # Every clause of the keeper is still said (a keeper sentence may give way to a fuller one).
    assert all(c.covered for c in said.cover_all(clauses_of([flat_keeper])))
    # Every absorbed sentence is said, or counted as left out for lack of room.
    unsaid = [s for s in split_sentences(strip_merge_markers(absorbed))
              if not all(c.covered for c in said.cover_all(clauses_of([s])))]
    assert len(unsaid) <= result.omitted_sentences
    assert not has_merge_marker(result.text)
    assert len(result.text) <= max(max_chars, len(flat_keeper))
    assert result.changed == (result.text != keeper)


def test_a_restatement_is_said_once_and_what_says_it_is_recorded() -> None:
    keeper = "exp-0412: LightGBM with 400 leaves and learning rate 0.05 reached MAPE 11.8% on shipments-2024 hub volumes."
    absorbed = "In exp-0412, LightGBM with 400 leaves and learning rate 0.05 reached MAPE 11.8% on shipments-2024 hub volumes."
    result = offline_merge(keeper, absorbed)
    assert result.text == keeper and not result.changed
    assert len(result.covered) == 3 and all(c["covered_by"] in keeper and c["how"] == "lexical" for c in result.covered)


def test_a_fuller_sentence_takes_the_place_of_the_one_it_says_entirely() -> None:
    keeper = "The billing-export job writes invoices to s3://acme-billing/exports every night. Owner: Dana."
    absorbed = "The billing-export job writes invoices to s3://acme-billing/exports every night and is deprecated."
    result = offline_merge(keeper, absorbed)
    assert result.text == absorbed + " Owner: Dana."
    assert result.replaced == ({"sentence": keeper.split(" Owner")[0], "by": absorbed},)


def test_an_identifier_in_another_case_is_another_fact() -> None:
    result = offline_merge("The staging API token is xq7-lmn2-pq9.", "The staging API token is Xq7-LmN2-pQ9.")
    assert "Xq7-LmN2-pQ9" in result.text and "xq7-lmn2-pq9" in result.text


def test_a_paraphrase_is_said_once_with_a_semantic_embedder(minilm) -> None:
    keeper, absorbed = "The CI runners for the Lumen monorepo use Ubuntu 24.04.", "Lumen monorepo CI machines run on Ubuntu 24.04."
    assert offline_merge(keeper, absorbed).text == f"{keeper} {absorbed}"  # by words: two sentences
    said_once = offline_merge(keeper, absorbed, semantic=minilm)
    assert said_once.text == keeper and said_once.covered[0]["how"] == "semantic"


# ----------------------------------------------------------------------------- plan_consolidation


def test_plan_keeps_higher_utility_and_merges_text() -> None:
    nodes = make_nodes(
        2,
        pointer_summary=["Old fact.", "Old fact. New detail."],
        base_utility=[0.2, 0.8],
    )
    plan = plan_consolidation(nodes, angle_vectors(0.0, 0.1))
    assert plan.schema == CONSOLIDATION_SCHEMA
    assert plan.drop("similarity", "coverage").to_dicts() == [
        {
            "keeper_id": "n1",
            "absorbed_id": "n0",
            "merged_text": "Old fact. New detail.",
            "keeper_text_changed": False,
            "added_sentences": 0,
            "omitted_sentences": 0,
        }
    ]
    # The revision will say what of the absorbed node the keeper already said.
    assert json.loads(plan["coverage"][0])["covered"] == [{"clause": "Old fact", "covered_by": "Old fact", "how": "lexical"}]
    assert plan["similarity"][0] == pytest.approx(math.cos(0.1), abs=1e-6)


def test_chain_merges_only_the_most_similar_pair() -> None:
    # A~B 0.980, B~C 0.989, A~C 0.939: all above 0.92, only B+C merges this cycle.
    plan = plan_consolidation(make_nodes(3), angle_vectors(0.0, 0.2, 0.35))
    assert plan.height == 1
    assert {plan["keeper_id"][0], plan["absorbed_id"][0]} == {"n1", "n2"}
    assert plan["similarity"][0] == pytest.approx(math.cos(0.15), abs=1e-6)


def test_equal_similarity_tie_goes_to_smaller_ids() -> None:
    # B is equally similar to A and C; the pair with the smaller ids (A, B) wins.
    # B's unit vector has two equal components, so both similarities are bit-identical.
    nodes = make_nodes(3, id=["c", "b", "a"])
    embeddings = np.array([[0, 1], [1, 1], [1, 0]], dtype=np.float32)
    plan = plan_consolidation(nodes, embeddings, threshold=0.7)
    assert plan.select("keeper_id", "absorbed_id").rows() == [("a", "b")]  # equal utility: smaller id keeps


def test_pinned_beats_verified_as_keeper() -> None:
    nodes = make_nodes(
        2,
        pointer_summary=["Same fact.", "same fact"],
        pinned=[False, True],
        confidence=["verified", "default"],
        base_utility=[0.9, 0.1],
    )
    plan = plan_consolidation(nodes, angle_vectors(0.0, 0.05))
    assert plan.select("keeper_id", "absorbed_id").rows() == [("n1", "n0")]
    assert plan["merged_text"][0] == "same fact"
    assert plan["keeper_text_changed"][0] is False


def test_verified_keeper_without_pins() -> None:
    nodes = make_nodes(2, confidence=["default", "verified"], base_utility=[0.9, 0.1])
    plan = plan_consolidation(nodes, angle_vectors(0.0, 0.05))
    assert plan["keeper_id"].to_list() == ["n1"]


def test_both_pinned_is_skipped() -> None:
    nodes = make_nodes(2, pointer_summary=["Same.", "Same."], pinned=[True, True])
    assert plan_consolidation(nodes, angle_vectors(0.0, 0.01)).is_empty()


def test_pinned_keeper_with_old_marker_keeps_its_text_verbatim() -> None:
    text = "A. [merged: B.]"
    nodes = make_nodes(2, pointer_summary=[text, "B. A."], pinned=[True, False])
    plan = plan_consolidation(nodes, angle_vectors(0.0, 0.01))
    assert plan.row(0, named=True)["merged_text"] == text
    assert plan["keeper_text_changed"].to_list() == [False]


def test_pinned_keeper_with_new_content_is_skipped_and_frees_its_partner() -> None:
    # n0 pinned; n1 adds a sentence, so n0+n1 (the most similar pair) is not allowed.
    # n1 must stay free to merge with n2, and the skipped pair must not use the cap.
    nodes = make_nodes(
        3,
        pointer_summary=["Pinned fact.", "Pinned fact. Extra.", "Other."],
        pinned=[True, False, False],
        base_utility=[0.1, 0.9, 0.1],
    )
    plan = plan_consolidation(nodes, angle_vectors(0.0, 0.05, 0.2), cap=1)
    assert plan.select("keeper_id", "absorbed_id").rows() == [("n1", "n2")]
    assert plan["merged_text"][0] == "Pinned fact. Extra. Other."


def test_pinned_pure_duplicate_is_merged_into_the_pinned_node() -> None:
    nodes = make_nodes(2, pointer_summary=["Pinned fact. Second.", "second! PINNED FACT"], pinned=[True, False])
    plan = plan_consolidation(nodes, angle_vectors(0.0, 0.05))
    assert plan.drop("similarity", "coverage").row(0) == ("n0", "n1", "Pinned fact. Second.", False, 0, 0)


def test_no_merge_across_memory_types() -> None:
    nodes = make_nodes(4, memory_type=["fact", "preference", "fact", None])
    embeddings = np.ones((4, 3), dtype=np.float32)
    embeddings[3] = [1, 1, 1.0001]
    plan = plan_consolidation(nodes, embeddings)
    assert plan.select("keeper_id", "absorbed_id").rows() == [("n0", "n2")]


def test_cap_limits_pairs_most_similar_first() -> None:
    nodes = make_nodes(6, memory_type=["a", "a", "b", "b", "c", "c"])
    embeddings = angle_vectors(0.0, 0.30, 0.0, 0.10, 0.0, 0.20)
    plan = plan_consolidation(nodes, embeddings, cap=2)
    assert plan.select("keeper_id", "absorbed_id").rows() == [("n2", "n3"), ("n4", "n5")]
    assert plan_consolidation(nodes, embeddings, cap=0).is_empty()


def test_threshold_parameter_is_respected() -> None:
    nodes = make_nodes(2)
    embeddings = angle_vectors(0.0, 0.5)  # cos 0.5 = 0.878
    assert plan_consolidation(nodes, embeddings).is_empty()
    assert plan_consolidation(nodes, embeddings, threshold=0.85).height == 1


def test_a_merge_that_does_not_fit_max_chars_is_left_for_the_next_cycle() -> None:
    nodes = make_nodes(2, pointer_summary=["Keep this.", "Keep this. " + "Long " * 10 + "tail."])
    chosen = consolidation_pass(nodes, angle_vectors(0.0, 0.01), max_chars=20)
    assert chosen.plan.is_empty() and chosen.left_over == 1  # "Long ... tail." would be dropped


def test_empty_nodes_give_typed_empty_plan() -> None:
    empty = make_nodes(0)
    assert plan_consolidation(empty, np.empty((0, 8), dtype=np.float32)).schema == CONSOLIDATION_SCHEMA
    assert plan_consolidation(empty, np.empty(0)).is_empty()
    untyped = pl.DataFrame({name: [] for name in empty.columns})
    assert plan_consolidation(untyped, np.empty((0, 3))).schema == CONSOLIDATION_SCHEMA


def test_plan_rejects_misaligned_or_non_finite_embeddings() -> None:
    nodes = make_nodes(2)
    with pytest.raises(ValueError, match="one row per node"):
        plan_consolidation(nodes, np.ones((3, 2)))
    bad = np.ones((2, 2), dtype=np.float32)
    bad[1, 0] = np.inf
    with pytest.raises(ValueError, match="'n1'"):
        plan_consolidation(nodes, bad)


def test_plan_is_deterministic_under_row_shuffles() -> None:
    rng = np.random.default_rng(7)
    n = 60
    embeddings = rng.normal(size=(n, 16)).astype(np.float32)
    embeddings[n // 2 :] = embeddings[: n // 2] + rng.normal(scale=0.01, size=(n // 2, 16)).astype(np.float32)
    nodes = make_nodes(n, base_utility=rng.uniform(size=n).round(1).tolist())
    plan = plan_consolidation(nodes, embeddings, cap=100)
    assert plan.height == n // 2
    order = rng.permutation(n)
    shuffled = plan_consolidation(nodes[order], embeddings[order], cap=100)
    assert shuffled.sort("keeper_id").equals(plan.sort("keeper_id"))


def test_vectors_of_different_embedding_models_are_never_compared():
    nodes = pl.DataFrame(
        {
            "id": ["a", "b", "c"],
            "memory_type": ["semantic"] * 3,
            "embedding_model": ["model-x", "model-y", "model-x"],
            "pointer_summary": ["Same text.", "Same text.", "Other text entirely."],
            "base_utility": [0.5, 0.5, 0.5],
            "pinned": [False] * 3,
            "confidence": ["default"] * 3,
            "recall_count": [1, 1, 1],
            "created_at": [datetime(2026, 1, 1, tzinfo=UTC)] * 3,
        }
    )
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert plan_consolidation(nodes, vectors).is_empty()
    same_model = nodes.with_columns(pl.lit("model-x").alias("embedding_model"))
    assert plan_consolidation(same_model, vectors).select("keeper_id", "absorbed_id").rows() == [("a", "b")]


def test_archive_allowance_is_a_share_but_at_least_one():
    from curation_pipeline.core.steps.consolidate import archive_allowance

    assert archive_allowance(30, 0.1) == 3
    assert archive_allowance(2, 0.1) == 1
    assert archive_allowance(0, 0.5) == 1
    assert archive_allowance(1000, 1.0) == 1000


@pytest.mark.parametrize("block_rows", [1, 5, 64])
def test_focused_search_finds_exactly_the_pairs_that_involve_a_focus_row(block_rows):
    from curation_pipeline.core.steps.similarity import find_similar_pairs

    rng = np.random.default_rng(11)
    base = rng.normal(size=(40, 16)).astype(np.float32)
    # Near-duplicates of some rows, so there are pairs to find, including focus-focus pairs.
    vectors = np.vstack([base, base[:15] + rng.normal(scale=0.05, size=(15, 16)).astype(np.float32)])
    groups = rng.integers(0, 2, size=vectors.shape[0])
    groups[40:] = groups[:15]
    focus = rng.random(vectors.shape[0]) < 0.3
    full = find_similar_pairs(vectors, groups, threshold=0.9, block_rows=block_rows)
    expected = full.filter(pl.Series(focus[full["i"].to_numpy()] | focus[full["j"].to_numpy()]))
    focused = find_similar_pairs(vectors, groups, threshold=0.9, block_rows=block_rows, focus=focus)
    assert focused.select("i", "j").rows() == expected.select("i", "j").rows()
    assert np.allclose(focused["similarity"].to_numpy(), expected["similarity"].to_numpy(), atol=1e-6)
    assert expected.height >= 5  # the test has something to find


def test_a_pass_reports_the_mergeable_pairs_it_left_for_later():
    from curation_pipeline.core.steps.consolidate import consolidation_pass

    nodes = pl.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "memory_type": ["semantic"] * 4,
            "pointer_summary": ["One.", "One!", "Two.", "Two!"],
            "base_utility": [0.5] * 4,
            "pinned": [False] * 4,
            "confidence": ["default"] * 4,
            "recall_count": [1] * 4,
            "created_at": [datetime(2026, 1, 1, tzinfo=UTC)] * 4,
        }
    )
    vectors = np.array([[1, 0], [1, 0.01], [0, 1], [0.01, 1]], dtype=np.float32)
    capped = consolidation_pass(nodes, vectors, cap=1)
    assert (capped.plan.height, capped.mergeable_pairs, capped.left_over) == (1, 2, 1)
    complete = consolidation_pass(nodes, vectors, cap=5)
    assert complete.left_over == 0


# --------------------------------------------------------------------------- round three


def _merge_plan(keeper: str, absorbed: str, *, max_chars: int):
    from curation_pipeline.core.steps.consolidate import select_merges

    nodes = make_nodes(2, pointer_summary=[keeper, absorbed], base_utility=[0.9, 0.1])
    return select_merges(nodes, pl.DataFrame([(0, 1, 0.97)], schema=PAIR_SCHEMA, orient="row"), cap=5,
                         max_chars=max_chars)


@pytest.mark.parametrize(("keeper", "absorbed", "max_chars"), [
    # The absorbed clause does not fit: archiving it would drop a fact (issue "Integrity, round
    # three", point 8).
    ("The billing-export job runs nightly.", "The billing-export job runs nightly and is deprecated.", 40),
    ("The billing-export job runs nightly.", "The billing-export job runs nightly. It is deprecated.", 40),
    # A keeper already over the limit absorbs only what it says word for word.
    ("word " * 500, "The billing-export job is deprecated.", 2000),
])
def test_a_merge_that_cannot_keep_every_clause_within_the_limit_does_not_happen(keeper, absorbed, max_chars):
    chosen = _merge_plan(keeper, absorbed, max_chars=max_chars)
    assert chosen.plan.is_empty()
    assert chosen.left_over == 1  # counted, left for a person or a larger limit


def test_a_merge_within_the_limit_still_happens():
    chosen = _merge_plan("The billing-export job runs nightly.", "The billing-export job runs nightly and is deprecated.",
                         max_chars=2000)
    assert chosen.plan.height == 1 and chosen.plan["omitted_sentences"].to_list() == [0]
    long_keeper = "word " * 500 + ". The job is deprecated."
    assert _merge_plan(long_keeper, "The job is deprecated.", max_chars=2000).plan.height == 1


def test_comparing_two_long_lists_is_bounded_in_clauses():
    """Two comma lists of 8.7 KB made one step-2 run take 126 s (issue "Integrity, round three",
    point 13): a pair over the clause budget is not compared clause by clause, and says so."""
    from curation_pipeline.core import supersession

    items = ", ".join(f"item{n} costs {n} dollars" for n in range(600))
    check = supersession.compare_versions(f"The price list: {items}.", f"The price list: {items.replace('5 dollars', '6 dollars')}.")
    assert check.verdict == supersession.NONE and check.too_long

"""Step 3 planning: which verbose memories get condensed, and the offline summary."""

from __future__ import annotations

import polars as pl

from curation_pipeline.core.steps.summarize import (
    SUMMARY_SCHEMA,
    is_verbose_expr,
    offline_summary,
    plan_summaries,
)


def nodes(**columns: list) -> pl.DataFrame:
    count = len(next(iter(columns.values())))
    base = {
        "id": [f"m{k}" for k in range(count)],
        "pointer_summary": ["word " * 120] * count,  # 600 characters
        "recall_count": [0] * count,
        "pinned": [False] * count,
    }
    base.update(columns)
    return pl.DataFrame(base)


def test_exactly_500_is_not_verbose_501_is() -> None:
    frame = nodes(id=["at", "over"], pointer_summary=["a" * 500, "a" * 501])
    plan = plan_summaries(frame)
    assert plan.select("id", "original_chars").rows() == [("over", 501)]


def test_length_counts_characters_not_bytes() -> None:
    frame = nodes(id=["emoji", "cjk", "accent"], pointer_summary=["😀" * 500, "漢" * 501, "é" * 499 + " ."])
    # Both are 501 characters: the tie is broken by id.
    assert plan_summaries(frame)["id"].to_list() == ["accent", "cjk"]


def test_recall_below_three_or_marker_makes_it_eligible() -> None:
    marker_text = "Fact. " * 90 + "[merged: More facts.]"
    frame = nodes(
        id=["recalled2", "recalled3", "marker", "marker_upper"],
        recall_count=[2, 3, 50, 50],
        pointer_summary=["x " * 300, "x " * 300, marker_text, marker_text.upper()],
    )
    assert sorted(plan_summaries(frame)["id"].to_list()) == ["marker", "marker_upper", "recalled2"]


def test_pinned_and_unknown_pinned_are_never_summarised() -> None:
    frame = nodes(id=["pinned", "unknown", "free"], pinned=[True, None, False])
    assert plan_summaries(frame)["id"].to_list() == ["free"]


def test_longest_first_then_id_and_cap() -> None:
    frame = nodes(id=["b", "a", "c"], pointer_summary=["x" * 600, "x" * 600, "x" * 700])
    assert plan_summaries(frame)["id"].to_list() == ["c", "a", "b"]
    assert plan_summaries(frame, cap=1)["id"].to_list() == ["c"]
    assert plan_summaries(frame, cap=0).is_empty()


def test_summary_is_word_boundary_truncation_with_ellipsis() -> None:
    text = "The user asked about tea, coffee; and juice. " * 20
    plan = plan_summaries(nodes(pointer_summary=[text]))
    summary = plan["summary"][0]
    assert len(summary) <= 200 and summary.endswith("…")
    assert text.startswith(summary[:-1])
    assert summary[-2] not in ",;: "
    assert text[len(summary) - 1] in " ,;:."  # the cut ended on a word boundary
    assert summary == offline_summary(text, 200)
    assert plan["original_chars"][0] == len(text)


def test_offline_summary_values() -> None:
    assert offline_summary("alpha beta, gamma delta", 14) == "alpha beta…"
    assert offline_summary("short", 200) == "short"


def test_parameters_are_respected() -> None:
    frame = nodes(pointer_summary=["word " * 20], recall_count=[5])
    assert plan_summaries(frame).is_empty()
    plan = plan_summaries(frame, min_chars=50, recall_below=6, summary_chars=12)
    assert plan["summary"].to_list() == ["word word…"]


def test_is_verbose_expr_handles_nulls() -> None:
    frame = nodes(pointer_summary=[None, "y" * 600], recall_count=[0, None])
    assert frame.select(is_verbose_expr()).to_series().to_list() == [False, False]


def test_empty_input_gives_typed_empty_output() -> None:
    untyped = pl.DataFrame({"id": [], "pointer_summary": [], "recall_count": [], "pinned": []})
    plan = plan_summaries(untyped)
    assert plan.is_empty() and plan.schema == SUMMARY_SCHEMA
    assert plan_summaries(nodes(pointer_summary=["short"])).schema == SUMMARY_SCHEMA

"""Step 3 (summaries): plan which long, little-used memories get condensed.

A memory is verbose when its text is longer than ``min_chars`` and it is either rarely
recalled or carries ``[merged: ...]`` artifacts of earlier merges. Pinned memories are never
rewritten. The store replaces the text and sets the embedding NULL (step 4 re-embeds it).

Two summary paths exist. Without the LLM, the plan's summary is :func:`offline_summary`, the
text cut at a word boundary (the whole text stays in the node's revision). With the LLM path on
(service/llm_rewrite.rewrite_summaries: an answer of at most CURATOR_LLM_SUMMARY_CHARS, checked by
core/fact_guard.py), only the rows whose LLM summary the guard accepted are rewritten; the
others keep their text, and are counted with the guard's reason.
"""

from __future__ import annotations

import polars as pl

from curation_pipeline.core.text import MERGE_MARKER_PATTERN, truncate_at_word_boundary

NODE_SCHEMA = pl.Schema(
    {"id": pl.String, "pointer_summary": pl.String, "recall_count": pl.Int64, "pinned": pl.Boolean}
)

SUMMARY_SCHEMA = pl.Schema({"id": pl.String, "summary": pl.String, "original_chars": pl.Int64})


def text_length_expr() -> pl.Expr:
    """Length of the memory text in characters (code points, like Python ``len``)."""
    return pl.col("pointer_summary").str.len_chars().cast(pl.Int64)


def is_verbose_expr(*, min_chars: int = 500, recall_below: int = 3) -> pl.Expr:
    """Not pinned, longer than ``min_chars`` (exactly ``min_chars`` is fine), and rarely
    recalled or holding a ``[merged: ...]`` marker.

    A null ``pinned`` counts as pinned (never rewrite what might be protected); a null text
    is never verbose.
    """
    rarely_recalled = (pl.col("recall_count") < recall_below).fill_null(False)
    has_marker = pl.col("pointer_summary").str.contains(MERGE_MARKER_PATTERN)
    return (
        ~pl.col("pinned").fill_null(True)
        & (text_length_expr() > min_chars).fill_null(False)
        & (rarely_recalled | has_marker.fill_null(False))
    )


def offline_summary(text: str, summary_chars: int = 200) -> str:
    """The summary used without an LLM: the text cut at a word boundary, ellipsis included."""
    return truncate_at_word_boundary(text, summary_chars)


def plan_summaries(
    nodes: pl.DataFrame,
    *,
    min_chars: int = 500,
    recall_below: int = 3,
    cap: int = 30,
    summary_chars: int = 200,
) -> pl.DataFrame:
    """Summaries to write this cycle: the ``cap`` longest verbose memories, ties by id."""
    verbose = (
        nodes.select(pl.col(name).cast(dtype) for name, dtype in NODE_SCHEMA.items())
        .filter(is_verbose_expr(min_chars=min_chars, recall_below=recall_below))
        .with_columns(original_chars=text_length_expr())
        .sort(["original_chars", "id"], descending=[True, False])
        .head(max(cap, 0))
    )
    # At most `cap` rows: a comprehension over them is clearer than map_elements.
    summaries = [offline_summary(text, summary_chars) for text in verbose["pointer_summary"]]
    return verbose.select(
        "id",
        summary=pl.Series(summaries, dtype=pl.String),
        original_chars="original_chars",
    )

"""Step 1 (reclassification): plan which never-recalled memories get a reclassify signal.

A memory that has not been recalled once while the namespace moved on by more than
``min_epoch_lag`` epochs is probably misfiled; the curator does not change it, it records a
``reclassify_pending`` training signal (source ``curator``). Pure planning, no IO: the store
loads the candidate frame and writes the signals.
"""

from __future__ import annotations

import polars as pl

CANDIDATE_SCHEMA = pl.Schema(
    {
        "id": pl.String,
        "pointer_summary": pl.String,
        "memory_type": pl.String,
        "recall_count": pl.Int64,
        "epoch": pl.Int64,
        "current_epoch": pl.Int64,
        "has_pending_signal": pl.Boolean,
    }
)

RECLASSIFY_SCHEMA = pl.Schema(
    {"memory_id": pl.String, "content_snapshot": pl.String, "epoch_lag": pl.Int64}
)


def epoch_lag_expr() -> pl.Expr:
    """How many epochs the namespace has moved on since the memory was written."""
    return pl.col("current_epoch") - pl.col("epoch")


def needs_reclassify_expr(min_epoch_lag: int) -> pl.Expr:
    """Never recalled, lagging by strictly more than ``min_epoch_lag`` epochs, and no signal yet.

    An unknown ``has_pending_signal`` counts as pending: a skipped memory is proposed again
    next cycle, whereas a duplicate signal would be a wrong training example.
    """
    return (
        (pl.col("recall_count") == 0)
        & (epoch_lag_expr() > min_epoch_lag)
        & ~pl.col("has_pending_signal").fill_null(True)
    )


def plan_reclassify(candidates: pl.DataFrame, *, min_epoch_lag: int = 100, cap: int = 50) -> pl.DataFrame:
    """Signals to record this cycle: the ``cap`` most lagging eligible memories, ties by id.

    Returns ``memory_id``, ``content_snapshot`` (the text as it is now, so the training signal
    stays meaningful if the memory is later rewritten) and ``epoch_lag``.
    """
    return (
        candidates.select(pl.col(name).cast(dtype) for name, dtype in CANDIDATE_SCHEMA.items())
        .filter(needs_reclassify_expr(min_epoch_lag))
        .select(
            memory_id=pl.col("id"),
            content_snapshot=pl.col("pointer_summary"),
            epoch_lag=epoch_lag_expr(),
        )
        .sort(["epoch_lag", "memory_id"], descending=[True, False])
        .head(max(cap, 0))
    )

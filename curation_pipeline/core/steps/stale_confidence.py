"""Step 5 (stale confidence): plan which memories lose their confidence.

A memory nobody has recalled for ``stale_after_days`` days (or, if never recalled, created
that long ago) may describe a world that has moved on: its confidence becomes ``stale``.
``verified`` memories were confirmed on purpose and are left alone; ``stale`` ones are already
marked. Pure planning, no IO.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

UTC_DATETIME = pl.Datetime("us", "UTC")

NODE_SCHEMA = pl.Schema(
    {
        "id": pl.String,
        "confidence": pl.String,
        "last_recalled_at": UTC_DATETIME,
        "created_at": UTC_DATETIME,
    }
)

STALE_SCHEMA = pl.Schema({"id": pl.String, "last_seen_at": UTC_DATETIME})

# Confidence values that this step never touches.
PROTECTED_CONFIDENCE = ("verified", "stale")


def last_seen_expr() -> pl.Expr:
    """When the memory was last useful: its last recall, or its creation if never recalled."""
    return pl.coalesce("last_recalled_at", "created_at")


def plan_stale_confidence(nodes: pl.DataFrame, *, now: datetime, stale_after_days: int = 30) -> pl.DataFrame:
    """Memories to mark ``stale``: last seen strictly before ``now - stale_after_days``.

    ``now`` must be timezone-aware (a naive datetime would silently mean a different instant
    depending on the server). A null confidence counts as ``default`` (the column's default).
    Rows come out oldest first, ties by id.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"now must be timezone-aware, got naive {now!r}")
    cutoff = now - timedelta(days=stale_after_days)
    return (
        nodes.select(pl.col(name).cast(dtype) for name, dtype in NODE_SCHEMA.items())
        .filter(
            ~pl.col("confidence").fill_null("default").is_in(PROTECTED_CONFIDENCE)
            & (last_seen_expr() < cutoff)
        )
        .select("id", last_seen_at=last_seen_expr())
        .sort(["last_seen_at", "id"])
    )

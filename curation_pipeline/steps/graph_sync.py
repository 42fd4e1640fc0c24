"""Step 6 planning: which changed nodes to sync to the graph this cycle, and the next watermark.

Changes are found by transaction id, not by time: every write to memory_nodes stamps the row
with the writing transaction's id (`last_txid`). The watermark is a (txid, node id) cursor. When
every changed row fits under the cap, the next watermark is the snapshot xmin taken before the
load: transactions still in flight then have ids >= xmin, so rows they commit later are read
next cycle (a row may be read twice; the vertex upsert is idempotent). When the cap cuts the
list, the cursor stops at the last row taken, but never beyond xmin, for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

CHANGED_SCHEMA = {
    "id": pl.Utf8, "heat": pl.Float64, "pinned": pl.Boolean, "pointer_summary": pl.Utf8,
    "archived": pl.Boolean, "last_txid": pl.Int64,
}


@dataclass(frozen=True)
class Watermark:
    txid: int
    node_id: str | None = None  # None: from the start of `txid`


@dataclass(frozen=True)
class GraphSyncPlan:
    vertices: pl.DataFrame  # node_id, heat, pinned, summary, archived
    next_watermark: Watermark
    remaining: bool  # more changed rows than the cap: the rest goes next cycle


def plan_graph_sync(changed: pl.DataFrame, *, snapshot_xmin: int, cap: int) -> GraphSyncPlan:
    """`changed`: rows past the watermark, ordered by (last_txid, id), at most cap + 1 of them."""
    ordered = changed.sort(["last_txid", "id"])
    taken = ordered.head(cap)
    remaining = ordered.height > cap
    if remaining and taken.height:
        last = taken.row(-1, named=True)
        cut = Watermark(last["last_txid"], last["id"])
        next_watermark = cut if cut.txid < snapshot_xmin else Watermark(snapshot_xmin)
    elif remaining:
        next_watermark = Watermark(ordered["last_txid"][0])  # cap 0: stay where we are
    else:
        next_watermark = Watermark(snapshot_xmin)
    vertices = taken.select(
        pl.col("id").alias("node_id"), "heat", "pinned",
        pl.col("pointer_summary").alias("summary"), "archived",
    )
    return GraphSyncPlan(vertices=vertices, next_watermark=next_watermark, remaining=remaining)

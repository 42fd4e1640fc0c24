"""Step 6 planning: which changed nodes to sync to the graph this cycle, and where to resume.

Changes are found by transaction id, not by time: every write to memory_nodes stamps the row
with the writing transaction's id (`last_txid`, a trigger). A transaction id is assigned when a
transaction first writes but its rows only become visible when it commits, possibly after
transactions with higher ids. So the position kept between cycles is

- a cursor `(txid, node id)`: every visible row at or before it has been synced, and
- `pending`: transactions below the cursor that were still running when it moved; their rows
  are read (in full) as soon as they commit.

Everything is decided from one snapshot of the database: rows it shows, the transactions it
reports in progress (`in_progress`) and its upper bound (`snapshot_xmax`, the first transaction
id it knows nothing about). A row is therefore never skipped, and a namespace where nothing
changed reads nothing. Ids from another server (a restored dump) that lie beyond the snapshot
reset the cursor instead of hiding every change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

CHANGED_SCHEMA = {
    "id": pl.Utf8, "tenant_id": pl.Utf8, "namespace": pl.Utf8, "heat": pl.Float64,
    "pinned": pl.Boolean, "pointer_summary": pl.Utf8, "archived": pl.Boolean, "last_txid": pl.Int64,
}
VERTEX_COLUMNS = ["node_id", "tenant_id", "namespace", "heat", "pinned", "summary", "archived"]
# A vertex's summary is its node's text up to this many characters ("…" marks a cut): the graph
# shows and searches memories, it does not hold a second copy of a 10 MB one.
VERTEX_SUMMARY_CHARS = 1_000


@dataclass(frozen=True)
class SyncPosition:
    txid: int = 0
    node_id: str | None = None  # None: from the first row of `txid`
    pending: tuple[int, ...] = ()

    def usable_with(self, snapshot_xmax: int) -> SyncPosition:
        """This position, or the start if it names transactions the server never had."""
        if self.txid > snapshot_xmax or any(txid > snapshot_xmax for txid in self.pending):
            return SyncPosition()
        return self


@dataclass(frozen=True)
class GraphSyncPlan:
    vertices: pl.DataFrame  # VERTEX_COLUMNS
    next_position: SyncPosition
    remaining: bool  # more changed rows than the cap: the rest goes next cycle


def plan_graph_sync(
    after_cursor: pl.DataFrame,
    from_pending: pl.DataFrame,
    *,
    position: SyncPosition,
    snapshot_xmax: int,
    in_progress: Sequence[int],
    cap: int,
) -> GraphSyncPlan:
    """Plan one sync.

    `after_cursor`: visible rows past `position`'s cursor, ordered by (last_txid, id), at most
    cap + 1 of them. `from_pending`: every visible row of `position.pending` transactions (not
    capped: an in-flight transaction's rows are few and must not hold the cursor back).
    """
    ordered = after_cursor.sort(["last_txid", "id"])
    taken = ordered.head(cap)
    remaining = ordered.height > cap
    if remaining and taken.height:
        last = taken.row(-1, named=True)
        cursor = (last["last_txid"], last["id"])
    elif remaining:  # cap 0: stay where we are
        cursor = (position.txid, position.node_id)
    else:  # everything visible was read: resume at the first id this snapshot knows nothing of
        cursor = (snapshot_xmax, None)
    # Transactions below the new cursor that this snapshot could not see yet.
    pending = tuple(sorted(txid for txid in set(in_progress) if txid < cursor[0]))
    synced = pl.concat([from_pending, taken]).unique("id", keep="last", maintain_order=True)
    vertices = synced.select(
        pl.col("id").alias("node_id"), "tenant_id", "namespace", "heat", "pinned",
        pl.col("pointer_summary").alias("summary"), "archived",
    )
    return GraphSyncPlan(
        vertices=vertices,
        next_position=SyncPosition(cursor[0], cursor[1], pending),
        remaining=remaining,
    )

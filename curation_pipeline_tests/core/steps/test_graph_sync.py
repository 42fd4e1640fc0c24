"""Step 6 planning: the cursor, pending transactions and the cap."""

from __future__ import annotations

import polars as pl

from curation_pipeline.core.steps.graph_sync import (
    CHANGED_SCHEMA,
    SyncPosition,
    plan_graph_sync,
)


def _rows(*pairs: tuple[int, str]) -> pl.DataFrame:
    return pl.DataFrame(
        [(node_id, "acme", "support", 0.0, False, f"text {node_id}", False, txid) for txid, node_id in pairs],
        schema=CHANGED_SCHEMA, orient="row",
    )


EMPTY = _rows()


def test_uncapped_sync_moves_the_cursor_to_the_snapshot_horizon():
    plan = plan_graph_sync(_rows((5, "a"), (7, "b")), EMPTY, position=SyncPosition(),
                           snapshot_xmax=9, in_progress=[6, 8], cap=10)
    assert plan.vertices["node_id"].to_list() == ["a", "b"]
    # 6 and 8 were running below the new cursor: their rows are read once they commit.
    assert plan.next_position == SyncPosition(9, None, (6, 8))
    assert not plan.remaining


def test_capped_sync_stops_at_the_last_row_taken_and_keeps_earlier_running_transactions():
    plan = plan_graph_sync(_rows((5, "a"), (5, "b"), (7, "c")), EMPTY, position=SyncPosition(),
                           snapshot_xmax=9, in_progress=[4, 6], cap=2)
    assert plan.vertices["node_id"].to_list() == ["a", "b"]
    assert plan.next_position == SyncPosition(5, "b", (4,))
    assert plan.remaining


def test_cap_zero_never_moves_the_cursor():
    position = SyncPosition(3, "x", (2,))
    plan = plan_graph_sync(_rows((5, "a")), EMPTY, position=position, snapshot_xmax=9,
                           in_progress=[2, 4], cap=0)
    assert plan.vertices.is_empty()
    assert plan.next_position.txid == 3 and plan.next_position.node_id == "x"
    assert plan.next_position.pending == (2,)


def test_rows_of_pending_transactions_are_synced_beyond_the_cap_once():
    plan = plan_graph_sync(_rows((8, "a")), _rows((4, "p"), (4, "a")), position=SyncPosition(7, None, (4,)),
                           snapshot_xmax=9, in_progress=[], cap=5)
    assert sorted(plan.vertices["node_id"].to_list()) == ["a", "p"]
    assert plan.next_position == SyncPosition(9, None, ())


def test_a_position_from_another_server_starts_over():
    assert SyncPosition(500, "z", ()).usable_with(snapshot_xmax=40) == SyncPosition()
    assert SyncPosition(3, None, (800,)).usable_with(snapshot_xmax=40) == SyncPosition()
    assert SyncPosition(40, None, (12,)).usable_with(snapshot_xmax=40) == SyncPosition(40, None, (12,))

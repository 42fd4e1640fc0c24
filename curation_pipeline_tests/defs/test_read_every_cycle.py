"""The whole job on a namespace an agent reads through recall() before every cycle: recorded
reads never bump row_version, so the node read on every cycle is still merged with its
duplicate, stays fresh, and the next cycles find nothing more to do (issue "The agent's side")."""

from __future__ import annotations

from datetime import timedelta

import pytest

from curation_pipeline_tests.conftest import EMBEDDER, NOW, cycle_row, fetch_node, insert, node, run_cycle

pytestmark = pytest.mark.slow

READ = "Customer Dana Reyes prefers email over phone calls."


def _recall(db, question: str) -> list[str]:
    rows = db.execute("SELECT id::text FROM recall('acme', 'support', %s, 3)", (EMBEDDER.embed([question])[0],))
    return [row[0] for row in rows.fetchall()]


def test_a_node_read_before_every_cycle_is_merged_and_stays_fresh(db, instance):
    read, duplicate = insert(
        db,
        node(text=READ, created_at=NOW - timedelta(days=60), last_recalled_at=NOW - timedelta(days=45), recall_count=0),
        node(text="Customer Dana Reyes prefers email to phone calls.", created_at=NOW - timedelta(days=50),
             last_recalled_at=NOW - timedelta(days=45), recall_count=0),
    )
    steps = []
    for _ in range(3):
        assert read in _recall(db, "How does Dana Reyes like to be contacted?")
        result = run_cycle(instance)
        assert result.success
        steps.append(cycle_row(db, result.run_id)["steps"])
    assert steps[0]["consolidate_duplicates"]["pairs_merged"] == 1
    merged = {fetch_node(db, read)["archived_at"] is None, fetch_node(db, duplicate)["archived_at"] is None}
    assert merged == {True, False}  # one keeper, one archived into it
    keeper = read if fetch_node(db, read)["archived_at"] is None else duplicate
    # Read on every cycle (its accesses count, through the merge), so never marked stale.
    assert fetch_node(db, keeper)["confidence"] == "default"
    assert all(cycle["mark_stale_confidence"]["marked_stale"] == 0 for cycle in steps)
    assert all(cycle["consolidate_duplicates"]["pairs_merged"] == 0 for cycle in steps[1:])

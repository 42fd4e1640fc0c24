"""Step 1 where no agent reported the namespace's epoch (rows written before the clocks moved by
themselves, sql/015, with no namespace_activity row, or one without an epoch): it falls back to the nodes' highest epoch,
which must cost an index probe, not a read of the namespace, so a cycle where nothing changed
reads as little as where the epoch is known (benchmarks/zero_change_cost.py measures it)."""

from __future__ import annotations

import pytest

from curation_pipeline.core.scope import Scope
from curation_pipeline.store.candidates import reclassify_candidates

NODES = 50_000
LAGGING = 10  # nodes far behind the others' epoch: step 1's only candidates


class _Recording:
    """A connection that remembers the statements sent through it."""

    def __init__(self, conn):
        self.conn, self.sent = conn, []

    def execute(self, query, params=None):
        self.sent.append((query, params))
        return self.conn.execute(query, params)


def _agent_copies_rows(db, namespace: str) -> None:
    db.execute(
        "INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary, recall_count, epoch)"
        " SELECT 'acme', %s, 'Memory ' || n, 0, CASE WHEN n <= %s THEN 0 ELSE 400 + n %% 100 END"
        " FROM generate_series(1, %s) AS n",
        (namespace, LAGGING, NODES),
    )


def _pages_read(db, query, params) -> tuple[int, list[str]]:
    plan = db.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {query}", params).fetchone()[0][0]
    scans, stack = [], [plan["Plan"]]
    while stack:
        node = stack.pop()
        stack.extend(node.get("Plans", []))
        if node.get("Relation Name") == "memory_nodes" and node["Node Type"] == "Seq Scan" and node.get("Actual Loops"):
            scans.append(node["Node Type"])
    top = plan["Plan"]
    return top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0), scans


@pytest.mark.parametrize("activity", ["no row", "a row without an epoch", "a reported epoch"])
def test_step_1_reads_a_few_pages_whether_or_not_the_epoch_was_reported(db, activity):
    _agent_copies_rows(db, "copied")
    # The copy moved the clock (sql/015): past the nodes' highest epoch, 499.
    assert db.execute("SELECT current_epoch FROM namespace_activity WHERE namespace = 'copied'").fetchone()[0] == 500
    if activity == "no row":
        db.execute("DELETE FROM namespace_activity WHERE namespace = 'copied'")
    elif activity == "a row without an epoch":
        db.execute("UPDATE namespace_activity SET current_epoch = NULL WHERE namespace = 'copied'")
    else:
        db.execute("UPDATE namespace_activity SET current_epoch = 499 WHERE namespace = 'copied'")
    db.execute("ANALYZE memory_nodes")
    scope = Scope(run_id="run", tenant_id="acme", namespace="copied", step="reclassify_stale")
    recording = _Recording(db)
    candidates = reclassify_candidates(recording, scope, min_epoch_lag=100)
    # The highest epoch is 499 either way: only the lagging nodes are candidates.
    assert candidates.height == LAGGING
    [(query, params)] = recording.sent
    pages, seq_scans = _pages_read(db, query, params)
    assert seq_scans == []
    # Index pages and the candidates' own pages: far from the namespace's hundreds of pages.
    namespace_pages = db.execute("SELECT relpages FROM pg_class WHERE relname = 'memory_nodes'").fetchone()[0]
    assert namespace_pages > 300 and pages < 60, (pages, namespace_pages)

"""The change cursors of steps 2, 6 and 6b inside one bulk transaction's rows (issue "Integrity,
round three", point 14): a batch reads the rows it takes, wherever the cursor stands.

A bulk COPY writes every row with one transaction id, so the cursor `(txid, node id)` sits
inside that transaction's rows for the whole catch-up. Each batch must read about `cap` rows
from the index, not every row of the transaction before the cursor (which made each cycle of a
100,000-node catch-up slower than the last). Rows read are counted by the plan Postgres ran
(EXPLAIN ANALYZE of the very statement the store sent), not timed.
"""

from __future__ import annotations

import json

import psycopg
import pytest

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.store import graph, passes
from curation_pipeline_tests.conftest import EMBEDDER

ROWS, CAP = 6_000, 100
SCOPE = Scope("run-1", "acme", "bulk", "sync_graph")


class _Recording:
    """A connection that remembers the statements sent through it."""

    def __init__(self, conn: psycopg.Connection):
        self.conn, self.sent = conn, []

    def execute(self, query, params=None):
        self.sent.append((query, params))
        return self.conn.execute(query, params)


def _rows_read(conn: psycopg.Connection, query, params) -> int:
    """Rows the executed plan took from memory_nodes: returned plus removed by a filter."""
    plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query, params).fetchone()[0]
    plan = plan if isinstance(plan, list) else json.loads(plan)

    def walk(node: dict) -> int:
        own = 0
        if node.get("Relation Name") == "memory_nodes":
            loops = node.get("Actual Loops", 1)
            own = (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
                   + node.get("Rows Removed by Index Recheck", 0)) * loops
        return own + sum(walk(child) for child in node.get("Plans", []))

    return walk(plan[0]["Plan"])


@pytest.fixture
def bulk(db) -> tuple[int, list[str]]:
    """ROWS nodes COPYed in one transaction (with vectors, so step 2's search takes them too),
    ANALYZEd; returns their transaction id and their ids in cursor order."""
    vector = "[" + ",".join(str(float(x)) for x in EMBEDDER.embed(["a bulk-loaded note"])[0]) + "]"
    with db.transaction(), db.cursor().copy(
            "COPY memory_nodes (tenant_id, namespace, pointer_summary, embedding, embedding_model)"
            " FROM STDIN") as copy:
        for k in range(ROWS):
            copy.write_row(("acme", "bulk", f"note {k}", vector, EMBEDDER.name))
    db.execute("ANALYZE memory_nodes")
    txid = db.execute("SELECT DISTINCT last_txid::text::bigint FROM memory_nodes").fetchone()[0]
    ids = [row[0] for row in db.execute("SELECT id::text FROM memory_nodes ORDER BY id")]
    return txid, ids


@pytest.mark.parametrize("at", [0.5, 0.9])
def test_a_graph_sync_batch_reads_its_cap_wherever_the_cursor_stands_in_a_bulk_load(db, bulk, at):
    txid, ids = bulk
    position = SyncPosition(txid, ids[int(at * ROWS)])
    recording = _Recording(db)
    after_cursor, _, _, _ = graph.load_changes(recording, SCOPE, position, CAP)
    assert after_cursor["id"].to_list() == ids[int(at * ROWS) + 1:int(at * ROWS) + 2 + CAP]
    assert _rows_read(db, *recording.sent[-1]) <= 2 * (CAP + 1)


@pytest.mark.parametrize("at", [0.5, 0.9])
def test_an_incremental_pass_reads_its_cap_wherever_the_cursor_stands_in_a_bulk_load(db, bulk, at):
    txid, ids = bulk
    position = SyncPosition(txid, ids[int(at * ROWS)])
    recording = _Recording(db)
    changed, _, _, capped_at = passes.changed_active_ids(recording, SCOPE, position, CAP)
    assert changed == ids[int(at * ROWS) + 1:int(at * ROWS) + 1 + CAP]
    assert capped_at == (txid, ids[int(at * ROWS) + CAP])
    assert _rows_read(db, *recording.sent[-1]) <= 2 * (CAP + 1)

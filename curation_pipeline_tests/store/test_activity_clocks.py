"""The activity clocks move by themselves (sql/015): any write to memory_nodes that is not the
curator's moves its namespace's last_interaction_at and current_epoch, once per statement and
namespace, whatever wrote it; the curator's writes, undo and import's COPY do not count."""

from __future__ import annotations

import io
import uuid

import pytest

from curation_pipeline.core.scope import Scope
from curation_pipeline.store.revisions import update_nodes
from curation_pipeline.store.writer_mark import UnmarkedWriteError
from curation_pipeline_tests.conftest import insert, node


@pytest.fixture
def every_statement(db):
    """Clocks count every statement (no granularity): what a test of counting needs."""
    db.execute("SET curation.clock_granularity_ms = 0")
    yield db
    db.execute("RESET curation.clock_granularity_ms")


def clock(db, namespace="support", tenant="acme"):
    return db.execute(
        "SELECT last_interaction_at, current_epoch FROM namespace_activity WHERE tenant_id = %s AND namespace = %s",
        (tenant, namespace),
    ).fetchone()


def agent_insert(db, namespace="support", text="The customer prefers email.", tenant="acme") -> str:
    return db.execute(
        "INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary) VALUES (%s, %s, %s) RETURNING id::text",
        (tenant, namespace, text),
    ).fetchone()[0]


def test_an_agents_insert_creates_and_then_moves_the_clock(every_statement):
    db = every_statement
    assert clock(db) is None
    first = agent_insert(db)
    moved_at, epoch = clock(db)
    assert epoch == 1 and moved_at is not None
    agent_insert(db, text="The customer is on the Pro plan.")
    later_at, later_epoch = clock(db)
    assert later_epoch == 2 and later_at > moved_at
    # A node an agent writes without an epoch is written at its namespace's epoch.
    epochs = dict(db.execute("SELECT id::text, epoch FROM memory_nodes").fetchall())
    assert epochs[first] == 0 and sorted(epochs.values()) == [0, 1]


def test_an_agents_update_moves_the_clock_and_a_move_counts_in_both_namespaces(every_statement):
    db = every_statement
    node_id = agent_insert(db)
    db.execute("UPDATE memory_nodes SET recall_count = recall_count + 1, last_recalled_at = now() WHERE id = %s",
               (node_id,))
    assert clock(db)[1] == 2
    db.execute("UPDATE memory_nodes SET namespace = 'sales' WHERE id = %s", (node_id,))
    assert clock(db)[1] == 3 and clock(db, "sales")[1] is not None


def test_an_update_that_matches_nothing_moves_nothing(every_statement):
    db = every_statement
    agent_insert(db)
    before = clock(db)
    db.execute("UPDATE memory_nodes SET heat = 1 WHERE id = %s", (str(uuid.uuid4()),))
    assert clock(db) == before


def test_a_copy_of_ten_thousand_rows_moves_each_namespace_once(every_statement):
    db = every_statement
    agent_insert(db)  # epoch 1
    data = io.StringIO("".join(f"acme\t{'support' if n % 2 else 'sales'}\tMemory {n}\n" for n in range(10_000)))
    with db.cursor().copy("COPY memory_nodes (tenant_id, namespace, pointer_summary) FROM STDIN") as copy:
        copy.write(data.getvalue())
    assert clock(db)[1] == 2
    assert clock(db, "sales")[1] == 1
    # Every copied row was stamped with its namespace's epoch before the copy moved it.
    assert db.execute("SELECT array_agg(DISTINCT epoch) FROM memory_nodes WHERE namespace = 'support'"
                      " AND pointer_summary LIKE 'Memory %'").fetchone()[0] == [1]


def test_within_the_granularity_the_clock_is_left_as_it_is(db):
    db.execute("SET curation.clock_granularity_ms = 60000")
    try:
        agent_insert(db)
        first = clock(db)
        agent_insert(db, text="Another memory.")
        assert clock(db) == first
    finally:
        db.execute("RESET curation.clock_granularity_ms")


def test_an_epoch_written_by_the_agent_moves_the_clock_past_it(every_statement):
    db = every_statement
    db.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary, epoch) VALUES ('acme', 'support', 'x', 500)")
    assert clock(db)[1] == 501
    db.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary, epoch) VALUES ('acme', 'support', 'y', 900)")
    assert clock(db)[1] == 901


def test_the_curators_writes_and_import_do_not_move_the_clocks(every_statement):
    db = every_statement
    [imported] = insert(db, node(epoch=7))
    # Import registers its namespace itself: its epoch is its nodes', and the trigger added nothing.
    at_import = clock(db)
    assert at_import[1] == 7
    scope = Scope(run_id="run-1", tenant_id="acme", namespace="support", step="stale_confidence")
    version = db.execute("SELECT row_version FROM memory_nodes WHERE id = %s", (imported,)).fetchone()[0]
    with db.transaction():
        changed = update_nodes(db, scope, ids=[imported], row_versions=[version], reasons=[{}],
                               assignments="confidence = 'stale'")
    assert changed == [imported]
    assert clock(db) == at_import
    # The mark ends with the curator's transaction: the agent's next write counts again.
    db.execute("UPDATE memory_nodes SET heat = 0.3 WHERE id = %s", (imported,))
    assert clock(db)[1] == 8


def test_a_curator_write_outside_a_transaction_is_refused(db):
    [imported] = insert(db, node())
    scope = Scope(run_id="run-1", tenant_id="acme", namespace="support", step="stale_confidence")
    with pytest.raises(UnmarkedWriteError):
        update_nodes(db, scope, ids=[imported], row_versions=[1], reasons=[{}], assignments="confidence = 'stale'")


def test_a_writer_never_waits_for_another_writers_open_transaction(every_statement, database_url):
    from curation_pipeline.store.database import open_connection

    db = every_statement
    agent_insert(db)  # the row exists
    with open_connection(database_url) as slow_agent:  # its transaction stays open, holding the clock's row
        slow_agent.execute("SET curation.clock_granularity_ms = 0")
        slow_agent.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary) VALUES ('acme', 'support', 'slow')")
        slow_agent.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary) VALUES ('acme', 'new-ns', 'slow')")
        db.execute("SET lock_timeout = '3s'")
        try:
            agent_insert(db, text="Not kept waiting.")  # the clock is left to the open writer
            agent_insert(db, namespace="new-ns", text="Nor here.")  # its first row too
        finally:
            db.execute("RESET lock_timeout")
        assert clock(db)[1] == 2 and clock(db, "new-ns")[1] == 1  # the open writer has moved nothing yet
        slow_agent.commit()
    assert clock(db)[1] == 3 and clock(db, "new-ns")[1] == 2  # its clock moves at its commit

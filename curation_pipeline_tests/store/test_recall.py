"""recall (sql/016): ranks current memory by similarity, records an access per returned node in a
side table (never bumping row_version), moves the clock; steps 1, 3 and 5, merges and export
read a node's recall as its stored columns plus its recorded accesses."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest

from curation_pipeline.core.scope import Scope
from curation_pipeline.store import candidates
from curation_pipeline.store.nodes_io import iter_nodes
from curation_pipeline_tests.conftest import EMBEDDER, NOW, fetch_node, insert, node


def recall(db, question, k=5, **options):
    names = ", ".join(f"{name} => %({name})s" for name in options)
    cursor = db.execute(
        f"SELECT * FROM recall('acme', 'support', %(query)s, %(k)s{', ' + names if names else ''})",
        {"query": EMBEDDER.embed([question])[0], "k": k, **options},
    )
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def test_recall_ranks_current_memory_and_records_each_access_without_bumping_row_versions(db):
    email, plan, other, archived = insert(
        db,
        node(text="Dana prefers email for invoices.", recall_count=0, last_recalled_at=None),
        node(text="Dana is on the Pro plan.", recall_count=2, last_recalled_at=None),
        node(text="The office printer is on floor 5.", namespace="other"),
        node(text="Dana prefers email for invoices.", archived_at=NOW),
    )
    before = {node_id: fetch_node(db, node_id)["row_version"] for node_id in (email, plan)}
    db.execute("UPDATE namespace_activity SET last_interaction_at = now() - interval '1 hour'")

    found = recall(db, "Does Dana prefer email for invoices?", k=2)

    assert [str(row["id"]) for row in found] == [email, plan]  # archived and other namespaces left out
    assert found[0]["similarity"] > found[1]["similarity"]
    assert [row["recall_count"] for row in found] == [1, 3]  # stored + recorded
    assert {node_id: fetch_node(db, node_id)["row_version"] for node_id in (email, plan)} == before
    assert dict(db.execute("SELECT node_id::text, recall_count FROM memory_access").fetchall()) == {email: 1, plan: 1}
    moved = db.execute("SELECT last_interaction_at FROM namespace_activity WHERE namespace = 'support'").fetchone()[0]
    assert moved > NOW - timedelta(minutes=1)
    # current_memory shows the same recall.
    assert db.execute("SELECT recall_count FROM current_memory WHERE id = %s", (plan,)).fetchone()[0] == 3


def test_filters_by_memory_type_and_confidence(db):
    fact, episode, stale = insert(
        db,
        node(text="Dana prefers email."),
        node(text="Dana wrote an email on Monday.", memory_type="episodic"),
        node(text="Dana prefers email, said long ago.", confidence="stale"),
    )
    assert {str(row["id"]) for row in recall(db, "Dana email", memory_types=["episodic"])} == {episode}
    assert {str(row["id"]) for row in recall(db, "Dana email", confidences=["default", "verified"])} == {fact, episode}


def test_a_superseded_node_is_not_recalled_and_its_successor_says_what_it_superseded(db):
    newer, older = insert(db, node(text="Dana's plan is Enterprise."), node(text="Dana's plan is Pro."))
    db.execute("UPDATE memory_nodes SET superseded_by = %s, confidence = 'superseded', valid_until = now()"
               " WHERE id = %s", (newer, older))
    [found] = recall(db, "Dana's plan", k=5)
    assert str(found["id"]) == newer and [str(i) for i in found["supersedes"]] == [older]


def test_recency_of_access_re_orders_but_never_filters(db):
    close, read_often = insert(
        db,
        node(text="Dana prefers email for invoices.", recall_count=0, last_recalled_at=None,
             created_at=NOW - timedelta(days=300)),
        node(text="Dana prefers email.", recall_count=0, last_recalled_at=None, created_at=NOW - timedelta(days=300)),
    )
    db.execute("INSERT INTO memory_access VALUES (%s, 5, now())", (read_often,))
    # Weighted first: a recall records an access to both, which makes them equally recent.
    weighted = [str(row["id"]) for row in recall(db, "Dana prefers email for invoices", recency_weight=0.5)]
    plain = [str(row["id"]) for row in recall(db, "Dana prefers email for invoices")]
    assert plain == [close, read_often] and weighted == [read_often, close]


@pytest.mark.parametrize("arguments", ["k => 0", "k => 5000", "recency_weight => 2"])
def test_bad_arguments_are_refused_and_record_nothing(db, arguments):
    insert(db, node())
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="recall:"):
        db.execute(f"SELECT * FROM recall('acme', 'support', %s, {arguments})", (EMBEDDER.embed(["x"])[0],))
    assert db.execute("SELECT count(*) FROM memory_access").fetchone()[0] == 0


def test_step_5_marks_stale_by_the_last_access(db):
    read_yesterday, unread = insert(
        db,
        node(text="Read yesterday.", created_at=NOW - timedelta(days=200), last_recalled_at=NOW - timedelta(days=90)),
        node(text="Nobody reads this.", created_at=NOW - timedelta(days=200), last_recalled_at=NOW - timedelta(days=90)),
    )
    db.execute("INSERT INTO memory_access VALUES (%s, 1, now() - interval '1 day')", (read_yesterday,))
    scope = Scope(run_id="r", tenant_id="acme", namespace="support", step="stale_confidence")
    loaded = candidates.stale_confidence_candidates(db, scope, 30, 50)
    assert loaded["id"].to_list() == [unread]


def test_steps_1_and_3_count_recorded_accesses(db):
    never, accessed = insert(
        db,
        node(text="Misfiled " + "x" * 600, recall_count=0, last_recalled_at=None, epoch=0),
        node(text="Read often " + "y" * 600, recall_count=0, last_recalled_at=None, epoch=0),
    )
    db.execute("UPDATE namespace_activity SET current_epoch = 500")
    db.execute("INSERT INTO memory_access VALUES (%s, 3, now())", (accessed,))
    scope = Scope(run_id="r", tenant_id="acme", namespace="support", step="any")
    assert candidates.reclassify_candidates(db, scope, 100)["id"].to_list() == [never]
    verbose = candidates.verbose_candidates(db, scope, 500, recall_below=3, limit=10)
    assert verbose["id"].to_list() == [never]


def test_export_carries_recorded_accesses(db):
    [node_id] = insert(db, node(recall_count=2, last_recalled_at=NOW - timedelta(days=3)))
    db.execute("INSERT INTO memory_access VALUES (%s, 4, now())", (node_id,))
    with db.transaction():
        [row] = list(iter_nodes(db))
    assert row["recall_count"] == 6 and row["last_recalled_at"] > NOW - timedelta(minutes=1)

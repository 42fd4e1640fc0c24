"""Supersession on the real store, step 2 run directly: what is current after each cycle, and
what happens when an agent edits, moves or archives a successor (issue "Integrity, round
three", points 1, 3, 4, 6 and 7)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from curation_pipeline_tests.conftest import NOW, fetch_node, insert, node
from curation_pipeline_tests.service.test_steps_direct import _step_2, _step_2_config


def _current(db) -> set[str]:
    return {row[0] for row in db.execute("SELECT pointer_summary FROM current_memory WHERE tenant_id = 'acme'")}


def _cycles(database_url: str, count: int = 3) -> list[dict]:
    return [_step_2(database_url, _step_2_config()) for _ in range(count)]


def _days_ago(days: int):
    return NOW - timedelta(days=days)


def test_a_role_swap_leaves_what_the_agent_wrote_last_current(db, database_url):
    # Before: the newer was archived into the older (cosine 1.0), and active memory said the
    # opposite of what the agent wrote last. Now neither is merged nor superseded: when unsure, link.
    older, newer = insert(db, node(text="Dana owns billing, and Sam owns search.", created_at=_days_ago(9)),
                          node(text="Dana owns search, and Sam owns billing.", created_at=_days_ago(2)))
    _cycles(database_url)
    assert "Dana owns search, and Sam owns billing." in _current(db)
    assert fetch_node(db, newer)["archived_at"] is None and fetch_node(db, older)["archived_at"] is None


@pytest.mark.parametrize(("first", "second"), [
    ("Ticket 3301 is about a failed password reset.", "Ticket 3302 is about a failed password reset."),
    ("Room 101 is booked for the design review.", "Room 205 is booked for the design review."),
    ("Payment 1 is due on March 5.", "Payment 2 is due on April 5."),
    ("The gym opens at 6:00 on weekdays.", "The gym opens at 8:00 on weekends."),
])
def test_two_numbered_things_both_stay_current(db, database_url, first, second):
    insert(db, node(text=first, created_at=_days_ago(9)), node(text=second, created_at=_days_ago(2)))
    _cycles(database_url)
    assert _current(db) == {first, second}


@pytest.mark.parametrize(("older", "newer"), [
    ("The billing-export job writes invoices to s3://acme-billing/exports at 02:00 UTC, and is deprecated.",
     "The billing-export job now writes invoices to s3://acme-billing/exports at 03:00 UTC."),
    ("The Brightline Dental support plan includes 40 tickets per month, by phone and email.",
     "The Brightline Dental support plan now includes 60 tickets per month."),
])
def test_no_clause_of_an_older_memory_leaves_current_memory_unless_a_newer_one_says_or_updates_it(
        db, database_url, older, newer):
    insert(db, node(text=older, created_at=_days_ago(9)), node(text=newer, created_at=_days_ago(2)))
    _cycles(database_url)
    current = " ".join(_current(db))
    assert ("deprecated" in current) if "deprecated" in older else ("phone and email" in current)


def test_a_chain_of_three_updates_leaves_only_the_newest_current(db, database_url):
    a, b, c = insert(db, node(text="The office printer is on floor 3.", created_at=_days_ago(10)),
                     node(text="The office printer is on floor 5.", created_at=_days_ago(5)),
                     node(text="The office printer is on floor 7.", created_at=_days_ago(1)))
    counts = _cycles(database_url)
    assert _current(db) == {"The office printer is on floor 7."}
    assert (fetch_node(db, a)["superseded_by"], fetch_node(db, b)["superseded_by"]) == (uuid.UUID(b), uuid.UUID(c))
    assert sum(cycle["superseded"] for cycle in counts) == 2
    assert counts[-1]["superseded"] == 0 and counts[-1].get("pairs_left_over", 0) == 0


def _superseded_pair(db, database_url) -> tuple[str, str]:
    older, newer = insert(db, node(text="The office printer is on floor 3.", created_at=_days_ago(10)),
                          node(text="The office printer is on floor 5.", created_at=_days_ago(2)))
    _step_2(database_url, _step_2_config())
    assert fetch_node(db, older)["superseded_by"] == uuid.UUID(newer)
    return older, newer


def _restored(db, older: str) -> None:
    row = fetch_node(db, older)
    assert (row["superseded_by"], row["valid_until"], row["confidence"]) == (None, None, "default")
    assert "The office printer is on floor 3." in _current(db)


def test_a_successor_an_agent_rewrote_no_longer_supersedes(db, database_url):
    older, newer = _superseded_pair(db, database_url)
    db.execute("UPDATE memory_nodes SET pointer_summary = 'The office coffee machine is broken.', embedding = NULL "
               "WHERE id = %s", (newer,))
    counts = _step_2(database_url, _step_2_config())
    _restored(db, older)
    assert counts["supersessions_undone"] == 1
    why = db.execute("SELECT reason FROM node_revisions WHERE node_id = %s ORDER BY id DESC LIMIT 1",
                     (older,)).fetchone()[0]
    assert why["supersession_undone"]["superseded_by"] == newer


def test_a_successor_moved_to_another_tenant_no_longer_supersedes(db, database_url):
    older, newer = _superseded_pair(db, database_url)
    db.execute("UPDATE memory_nodes SET tenant_id = 'globex' WHERE id = %s", (newer,))
    counts = _step_2(database_url, _step_2_config())
    _restored(db, older)
    assert counts["supersessions_undone"] == 1
    crossing = db.execute(
        "SELECT count(*) FROM memory_nodes o JOIN memory_nodes n ON n.id = o.superseded_by "
        "WHERE (o.tenant_id, o.namespace) <> (n.tenant_id, n.namespace)").fetchone()[0]
    assert crossing == 0


def test_a_successor_an_agent_archived_no_longer_supersedes(db, database_url):
    older, newer = _superseded_pair(db, database_url)
    db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (newer,))
    counts = _step_2(database_url, _step_2_config())
    _restored(db, older)
    assert counts["supersessions_undone"] == 1


def test_a_successor_that_still_says_the_newer_value_keeps_superseding(db, database_url):
    older, newer = _superseded_pair(db, database_url)
    db.execute("UPDATE memory_nodes SET pointer_summary = 'The office printer is on floor 5, next to the kitchen.', "
               "embedding = NULL WHERE id = %s", (newer,))
    counts = _step_2(database_url, _step_2_config())
    assert fetch_node(db, older)["superseded_by"] == uuid.UUID(newer)
    assert counts["supersessions_undone"] == 0


def test_history_shows_the_versions_of_a_fact_and_which_is_current(db, database_url, capsys):
    # A -> B -> C, superseded by step 2 in two cycles: the history of any of them lists all
    # three, oldest first, and says which one is current.
    a, b, c = insert(db, node(text="The office printer is on floor 3.", created_at=_days_ago(10)),
                     node(text="The office printer is on floor 5.", created_at=_days_ago(5)),
                     node(text="The office printer is on floor 7.", created_at=_days_ago(1)))
    _cycles(database_url)
    from curation_pipeline.cli.main import main

    assert main(["history", b]) == 0
    out = capsys.readouterr().out
    lines = out[out.index("versions, oldest first:"):].splitlines()[1:4]
    assert [line.split()[0] for line in lines] == [a, b, c]
    assert "superseded" in lines[0] and "(this node)" in lines[1] and "current" in lines[2]
    assert lines[2].endswith("The office printer is on floor 7.")

"""`curation-pipeline recall TENANT:NAMESPACE "question"`: what an agent would get, with ids,
confidence and what superseded what; an operator's look records no access and moves no clock."""

from __future__ import annotations

from curation_pipeline.cli.main import main
from curation_pipeline.service.memory_client import MemoryClient


def test_recall_shows_ids_confidence_and_what_superseded_what(db, capsys):
    with MemoryClient("acme", "support-bot") as memory:
        old = memory.remember("Dana's plan is Pro.")
        new = memory.remember("Dana's plan is Enterprise now.")
        memory.remember("The office printer is on floor 5.")
    db.execute("UPDATE memory_nodes SET superseded_by = %s, confidence = 'superseded', valid_until = now() WHERE id = %s",
               (new, old))
    db.execute("UPDATE namespace_activity SET last_interaction_at = '2020-01-01'")

    assert main(["recall", "acme:support-bot", "What plan is Dana on?", "-k", "1"]) == 0

    out = capsys.readouterr().out
    assert f"1. {new}  similarity" in out and "semantic, default, recalled 0 times" in out
    assert f"supersedes {old}: Dana's plan is Pro." in out and "printer" not in out
    assert db.execute("SELECT count(*) FROM memory_access").fetchone()[0] == 0
    assert str(db.execute("SELECT last_interaction_at FROM namespace_activity").fetchone()[0]).startswith("2020-01-01")


def test_an_unknown_namespace_or_an_empty_question_is_one_line_and_exit_2(db, capsys):
    assert main(["recall", "acme:nowhere", "anything"]) == 2
    assert "error: unknown namespace acme:nowhere" in capsys.readouterr().err
    with MemoryClient("acme", "support-bot") as memory:
        memory.remember("Something.")
    assert main(["recall", "acme:support-bot", " "]) == 2
    assert capsys.readouterr().err.strip() == "error: the question is empty"


def test_history_shows_a_nodes_recall_as_stored_plus_recorded(db, capsys):
    with MemoryClient("acme", "support-bot") as memory:
        node_id = memory.remember("Dana prefers email.")
        db.execute("UPDATE memory_nodes SET recall_count = 2 WHERE id = %s", (node_id,))  # an agent's own count
        memory.recall("Dana email")
        memory.recall("Dana email")
    assert main(["history", node_id]) == 0
    assert "  recalled 4 times (2 stored, 2 recorded by recall), last 20" in capsys.readouterr().out

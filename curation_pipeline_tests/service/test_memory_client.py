"""MemoryClient: remember embeds with the configured embedder and inserts, recall embeds the
question and reads through the store's recall (recording accesses, moving the clock), touch
moves the clock alone; refused input writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from curation_pipeline.service.memory_client import MemoryClient, MemoryInputError, UnknownNamespaceError
from curation_pipeline_tests.conftest import NOW


def _an_hour_ago(db) -> None:
    db.execute("UPDATE namespace_activity SET last_interaction_at = now() - interval '1 hour'")


def _clock(db):
    return db.execute("SELECT last_interaction_at FROM namespace_activity"
                      " WHERE tenant_id = 'acme' AND namespace = 'support'").fetchone()[0]


def test_remember_recall_and_touch_move_the_clock_and_record_accesses(db):
    with MemoryClient("acme", "support") as memory:
        email = memory.remember("Dana prefers email over phone calls.")
        memory.remember("The office printer is on floor 5.", memory_type="episodic")
        assert _clock(db) > NOW - timedelta(minutes=1)

        _an_hour_ago(db)
        [found] = memory.recall("How does Dana want to be contacted? email", k=1)
        assert (found.id, found.text, found.recall_count) == (email, "Dana prefers email over phone calls.", 1)
        assert _clock(db) > NOW - timedelta(minutes=1)
        stored = db.execute("SELECT embedding_model, recall_count, row_version FROM memory_nodes WHERE id = %s",
                            (email,)).fetchone()
        assert stored == (memory.embedder_name, 0, 1)  # the access is recorded beside the node

        assert [m.memory_type for m in memory.recall("printer floor", k=5, memory_types=["episodic"])] == ["episodic"]

        _an_hour_ago(db)
        memory.touch()
        assert _clock(db) > NOW - timedelta(minutes=1)

        _an_hour_ago(db)
        looked = memory.recall("Dana email", k=1, record=False)
        # Against the time now, not the session's start: a long run reaches this test later.
        assert looked[0].recall_count == 1 and _clock(db) < datetime.now(UTC) - timedelta(minutes=30)


@pytest.mark.parametrize(("text", "message"), [("", "is empty"), ("   \n", "is empty"),
                                                ("x" * 20_001, "20,001 characters long; at most 20,000")])
def test_refused_text_writes_nothing(db, text, message):
    with MemoryClient("acme", "support") as memory:
        with pytest.raises(MemoryInputError, match=message):
            memory.remember(text)
        with pytest.raises(MemoryInputError, match=message.replace("text", "question")):
            memory.recall(text)
    assert db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM namespace_activity").fetchone()[0] == 0


def test_an_unknown_namespace_is_refused_unless_created(db):
    with pytest.raises(UnknownNamespaceError, match="unknown namespace acme:typo: it holds no memory"):
        MemoryClient("acme", "typo", create=False)
    with MemoryClient("acme", "typo") as memory:
        memory.remember("A first memory.")
    with MemoryClient("acme", "typo", create=False) as memory:
        assert len(memory.recall("first memory")) == 1

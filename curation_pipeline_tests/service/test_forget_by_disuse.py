"""Forget by disuse, over 40 days: a node an agent reads every day through recall() stays
fresh, however old it gets; a node nobody reads goes stale once its last use is 30 days past.

A day passes by moving every stored time of the store one day into the past (the database's
clock cannot be moved): the nodes' times and the recorded accesses alike, as the curator would
see them a day later. Each day the agent reads, then step 5 runs as a cycle would."""

from __future__ import annotations

import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest

from curation_pipeline.config.settings import load_settings
from curation_pipeline.service.session import open_namespace_session
from curation_pipeline.service.step_run import StepRun, run_step
from curation_pipeline.service.steps.stale_confidence import mark_stale_confidence
from curation_pipeline_tests.conftest import EMBEDDER, NOW, insert, node

pytestmark = pytest.mark.slow  # 40 cycles of step 5


def _a_day_passes(db) -> None:
    with db.transaction():
        db.execute("SELECT set_config('curation.writer', 'curator', true)")  # the test's time machine, not an agent
        db.execute("UPDATE memory_nodes SET created_at = created_at - interval '1 day',"
                   " last_recalled_at = last_recalled_at - interval '1 day'")
        db.execute("UPDATE memory_access SET last_recalled_at = last_recalled_at - interval '1 day'")


def _step_5(database_url: str) -> int:
    config = SimpleNamespace(stale_after_days=30, cap=100)
    with open_namespace_session(database_url, load_settings(), str(uuid.uuid4()), "acme", "support",
                                lock_timeout_s=5) as session:
        run = StepRun(session, session.scope("mark_stale_confidence"))
        return run_step(run, lambda r: mark_stale_confidence(r, config)).counts["marked_stale"]


def test_a_node_read_every_day_stays_fresh_and_an_unread_one_goes_stale(db, database_url):
    read_daily, unread = insert(
        db,
        node(text="Dana prefers email over phone calls.", recall_count=0, last_recalled_at=None,
             created_at=NOW - timedelta(days=5, hours=-1)),
        node(text="The office printer is on floor 5.", recall_count=0, last_recalled_at=None,
             created_at=NOW - timedelta(days=5, hours=-1)),
    )
    question = EMBEDDER.embed(["How does Dana want to be contacted? Dana prefers email"])[0]
    stale_on = None
    for day in range(1, 41):
        _a_day_passes(db)
        [(found,)] = db.execute("SELECT id::text FROM recall('acme', 'support', %s, 1)", (question,)).fetchall()
        assert found == read_daily
        _step_5(database_url)
        confidence = dict(db.execute("SELECT id::text, confidence FROM memory_nodes").fetchall())
        assert confidence[read_daily] == "default", f"day {day}: a node read every day went stale"
        if stale_on is None and confidence[unread] == "stale":
            stale_on = day
    # Written 5 days (less an hour) before day 0, never read: 30 days past on day 26.
    assert stale_on == 26
    accesses = db.execute("SELECT recall_count FROM memory_access WHERE node_id = %s", (read_daily,)).fetchone()[0]
    assert accesses == 40

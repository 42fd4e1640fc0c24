"""Recorded access never fights the curator: a node an agent reads while step 2 plans is still
merged (recall does not bump row_version), the keeper takes the absorbed node's recall, and an
undo of the merge gives each node back its own recall, the accesses agents recorded kept."""

from __future__ import annotations

import uuid
from datetime import timedelta

from curation_pipeline.config.settings import load_settings
from curation_pipeline.service.session import open_namespace_session
from curation_pipeline.service.step_run import StepRun, run_step
from curation_pipeline.service.steps.consolidate import consolidate_duplicates
from curation_pipeline.service.undo import undo_run
from curation_pipeline.store import candidates
from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.conftest import EMBEDDER, NOW, insert, node
from curation_pipeline_tests.service.test_steps_direct import _step_2_config

TEXT = "Dana Reyes prefers email over phone calls."


def recall_for(db, node_id: str) -> int:
    return db.execute("SELECT recall_count FROM memory_recall WHERE id = %s", (node_id,)).fetchone()[0]


def test_a_node_read_while_step_2_plans_is_merged_and_undo_gives_each_node_its_recall_back(db, database_url, monkeypatch):
    keeper, copy = insert(db, node(text=TEXT, created_at=NOW - timedelta(days=9), recall_count=2),
                          node(text=TEXT, created_at=NOW - timedelta(days=8), recall_count=1))
    query = EMBEDDER.embed([TEXT])[0]
    loads = candidates.vetoed_pairs

    def an_agent_reads_meanwhile(conn, scope):
        # After step 2 loaded the nodes and their row versions, before it writes.
        with open_connection(database_url, autocommit=True) as agent:
            assert len(agent.execute("SELECT * FROM recall('acme', 'support', %s, 5)", (query,)).fetchall()) == 2
        return loads(conn, scope)

    monkeypatch.setattr(candidates, "vetoed_pairs", an_agent_reads_meanwhile)
    run_id = str(uuid.uuid4())
    with open_namespace_session(database_url, load_settings(), run_id, "acme", "support", lock_timeout_s=5) as session:
        run = StepRun(session, session.scope("consolidate_duplicates"))
        counts = run_step(run, lambda r: consolidate_duplicates(r, _step_2_config(), model=EMBEDDER.name, llm=None)).counts

    assert (counts["pairs_merged"], counts["skipped_concurrent"]) == (1, 0)
    # Both were read once: 2 + 1 stored, 2 recorded; all of it is the keeper's now.
    assert recall_for(db, keeper) == 5

    monkeypatch.setattr(candidates, "vetoed_pairs", loads)
    [report] = undo_run(database_url, run_id)
    assert report.status == "success", report.as_dict()
    assert (recall_for(db, keeper), recall_for(db, copy)) == (3, 2)


def test_the_keeper_of_a_merge_is_the_node_agents_read_more(db, database_url):
    older, read = insert(db, node(text=TEXT, created_at=NOW - timedelta(days=9), recall_count=1),
                         node(text=TEXT, created_at=NOW - timedelta(days=8), recall_count=1))
    db.execute("INSERT INTO memory_access VALUES (%s, 5, now())", (read,))
    with open_namespace_session(database_url, load_settings(), str(uuid.uuid4()), "acme", "support",
                                lock_timeout_s=5) as session:
        run = StepRun(session, session.scope("consolidate_duplicates"))
        counts = run_step(run, lambda r: consolidate_duplicates(r, _step_2_config(), model=EMBEDDER.name, llm=None)).counts
    assert counts["pairs_merged"] == 1
    # Older wins a tie; five recorded reads are not a tie.
    assert db.execute("SELECT merged_into::text FROM memory_nodes WHERE id = %s", (older,)).fetchone()[0] == read

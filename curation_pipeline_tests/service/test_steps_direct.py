"""Step functions and store writes called directly, without Dagster: what an op adds is only
its config, resources and metadata, so the work itself is tested here, in the fast tier."""

from __future__ import annotations

import uuid
from datetime import timedelta
from types import SimpleNamespace

import polars as pl

from curation_pipeline.config.op_config import ConsolidateConfig, config_fields
from curation_pipeline.config.settings import load_settings
from curation_pipeline.config.steps import StepSettings
from curation_pipeline.core.scope import Scope
from curation_pipeline.service.session import open_namespace_session
from curation_pipeline.service.step_run import StepRun, run_step
from curation_pipeline.service.steps.consolidate import consolidate_duplicates
from curation_pipeline.store.actions import mark_stale
from curation_pipeline_tests.conftest import EMBEDDER, NOW, fetch_node, insert, node


def _step_2_config(**overrides) -> SimpleNamespace:
    """Step 2's settings as its op config names them, at their shipped defaults."""
    d = StepSettings.model_construct()
    config = {field: getattr(d, setting) for field, setting in config_fields(ConsolidateConfig).items()}
    return SimpleNamespace(**{**config, "max_archive_fraction": 0.5, **overrides})


def _step_2(database_url: str, config: SimpleNamespace) -> dict:
    with open_namespace_session(database_url, load_settings(), str(uuid.uuid4()), "acme", "support",
                                lock_timeout_s=5) as session:
        run = StepRun(session, session.scope("consolidate_duplicates"))
        return run_step(run, lambda r: consolidate_duplicates(r, config, model=EMBEDDER.name, llm=None)).counts


def test_step_2_merges_a_duplicate_supersedes_an_update_and_then_has_nothing_to_do(db, database_url):
    keeper, copy = insert(db, node(text="Dana Reyes prefers email over phone calls.", created_at=NOW - timedelta(days=9)),
                          node(text="Dana Reyes prefers email over phone calls.", created_at=NOW - timedelta(days=8)))
    old, new = insert(db, node(text="The Brightline Dental support plan includes 40 tickets per month.", created_at=NOW - timedelta(days=20)),
                      node(text="The Brightline Dental support plan now includes 60 tickets per month.",
                           created_at=NOW - timedelta(days=2)))

    counts = _step_2(database_url, _step_2_config())

    assert (counts["pairs_merged"], counts["superseded"]) == (1, 1)
    assert fetch_node(db, copy)["merged_into"] == uuid.UUID(keeper)
    superseded = fetch_node(db, old)
    assert (superseded["confidence"], superseded["superseded_by"]) == ("superseded", uuid.UUID(new))
    assert superseded["archived_at"] is None  # the old value stays, recallable, out of current_memory
    current = {row[0] for row in db.execute("SELECT pointer_summary FROM current_memory")}
    assert current == {"Dana Reyes prefers email over phone calls.", "The Brightline Dental support plan now includes 60 tickets per month."}

    again = _step_2(database_url, _step_2_config())
    assert (again["pairs_merged"], again["superseded"]) == (0, 0)


def test_a_store_write_skips_a_row_an_agent_changed_since_it_was_loaded(db):
    edited, idle = insert(db, node(text="Old note one."), node(text="Old note two."))
    loaded = pl.DataFrame({"id": [edited, idle], "row_version": [1, 1]})
    plan = pl.DataFrame({"id": [edited, idle], "last_seen_at": [NOW - timedelta(days=90)] * 2})
    db.execute("UPDATE memory_nodes SET recall_count = recall_count + 1 WHERE id = %s", (edited,))  # the agent

    scope = Scope(run_id=str(uuid.uuid4()), tenant_id="acme", namespace="support", step="mark_stale_confidence")
    with db.transaction():
        counts = mark_stale(db, scope, plan, loaded)

    assert counts == {"marked_stale": 1, "skipped_concurrent": 1}
    assert (fetch_node(db, edited)["confidence"], fetch_node(db, idle)["confidence"]) == ("default", "stale")
    revised = db.execute("SELECT node_id::text FROM node_revisions WHERE run_id = %s", (scope.run_id,)).fetchall()
    assert revised == [(idle,)]

"""Property: on random stores, undoing every run newest first restores the start exactly, and
undoing those undos (last first) brings back the curated state exactly."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from curation_pipeline.service.undo import undo_run
from curation_pipeline_tests.conftest import NOW, insert, node, run_cycle

pytestmark = pytest.mark.slow

WORDS = ("invoice", "Dana", "Reyes", "email", "Slack", "renewal", "contract", "Globex", "SSO",
         "Okta", "2025-03-01", "EUR", "webhook", "retries", "pilot", "churn", "Friday", "region",
         "eu-central-1", "API", "v3", "export", "CSV", "budget", "Q2", "roadmap")
NAMESPACES = (("acme", "support"), ("acme", "sales"), ("globex", "support"))


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))).capitalize() + "."


def _random_store(rng: random.Random) -> list[dict]:
    rows = []
    for tenant_id, namespace in NAMESPACES:
        for _ in range(rng.randint(6, 14)):
            text = " ".join(_sentence(rng) for _ in range(rng.choice((1, 1, 2, 9))))
            if rng.random() < 0.15:
                text = f"{text} [merged: {_sentence(rng)}]"
            columns = {
                "tenant_id": tenant_id, "namespace": namespace, "text": text,
                "embed": rng.random() > 0.15,
                "memory_type": rng.choice(("semantic", "semantic", "episodic")),
                "base_utility": round(rng.random(), 2), "pinned": rng.random() < 0.1,
                "confidence": rng.choice(("default", "default", "verified", "stale")),
                "recall_count": rng.choice((0, 0, 1, 5)), "epoch": rng.choice((0, 50, 400)),
                "last_recalled_at": rng.choice((None, NOW - timedelta(days=rng.randint(1, 90)))),
                "created_at": NOW - timedelta(days=rng.randint(1, 200)),
            }
            rows.append(node(**columns))
            if rng.random() < 0.3:  # a near-verbatim duplicate (sometimes twice)
                for _ in range(rng.choice((1, 1, 2))):
                    rows.append(node(**{**columns, "text": text.replace(".", "!", 1),
                                        "base_utility": round(rng.random(), 2), "pinned": False}))
    return rows


def _state(db) -> dict:
    return {
        "nodes": db.execute(
            "SELECT to_jsonb(m) - 'row_version' - 'updated_at' - 'last_txid' - 'content_txid' FROM memory_nodes m ORDER BY id"
        ).fetchall(),
        "signals": db.execute(
            "SELECT memory_id, signal_type, content_snapshot, status FROM training_signals"
            " WHERE status <> 'withdrawn' ORDER BY id"
        ).fetchall(),
        "vertices": db.execute(
            "SELECT to_jsonb(v) - 'synced_at' FROM graph_vertices v ORDER BY node_id"
        ).fetchall(),
        "edges": db.execute(
            "SELECT source_id, target_id, label FROM graph_edges WHERE retracted_at IS NULL ORDER BY id"
        ).fetchall(),
    }


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_undoing_every_run_newest_first_restores_the_start_exactly(db, instance, database_url, seed):
    rng = random.Random(seed)
    insert(db, *_random_store(rng))
    db.execute("UPDATE namespace_activity SET current_epoch = 500")
    # A signal that exists before curation starts must survive all of it untouched.
    db.execute(
        "INSERT INTO training_signals (memory_id, tenant_id, namespace, signal_type, content_snapshot, source)"
        " SELECT id, tenant_id, namespace, 'reclassify_pending', pointer_summary, 'agent'"
        " FROM memory_nodes ORDER BY id LIMIT 1"
    )
    for tenant_id, namespace in NAMESPACES:  # the graph starts in step with the store
        assert run_cycle(instance, tenant_id, namespace, op_selection=["sync_graph"]).success
    start = _state(db)

    runs = []
    for _ in range(3):
        for tenant_id, namespace in NAMESPACES:
            result = run_cycle(instance, tenant_id, namespace)
            assert result.success
            runs.append(result.run_id)
    curated = _state(db)
    assert curated != start

    undos = []
    for run_id in reversed(runs):
        try:
            reports = undo_run(database_url, run_id)
        except ValueError:  # a run that found nothing to do has nothing to undo
            continue
        assert all(report.conflicts == [] for report in reports), reports
        undos.append(reports[0].undo_id)
    assert _state(db) == start

    for undo_id in reversed(undos):
        undo_run(database_url, undo_id)
    assert _state(db) == curated


@pytest.mark.parametrize("seed", [1, 9])
def test_random_runs_agent_writes_and_undos_never_strand_a_merged_node_or_delete_a_row(
    db, instance, database_url, monkeypatch, seed,
):
    """Issue 13.3 as a property: after every run, agent write and undo (forced or not, of a run
    or of an undo), no row is gone, every archived node's keeper chain ends at an active node,
    and every sentence an agent wrote is in an active node (or recorded as left out); at the end,
    undoing everything newest first gives back exactly what the agents wrote."""
    from curation_pipeline_tests.support.soak import Mix, Soak

    mix = Mix(insert=22, edit=12, recall=0, store_recall=0, run=36, undo=30, force_share=0.6, newest_share=0.2,
              duplicate_share=0.8, faults=(None,))
    soak = Soak(db, database_url, instance, seed=seed, mix=mix, set_env=monkeypatch.setenv)
    log = soak.run(18)
    assert log.actions["run actions"] and log.actions["undo --force"]

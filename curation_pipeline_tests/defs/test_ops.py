"""Each curation op against the real database, on small hand-made namespaces."""

from __future__ import annotations

from datetime import timedelta

import pytest

from curation_pipeline.defs.job import step_run_config
from curation_pipeline_tests.conftest import (
    NOW,
    cycle_row,
    fetch_node,
    insert,
    node,
    run_cycle,
)

pytestmark = pytest.mark.slow


def _step_metadata(result, op_name: str) -> dict:
    [event] = [
        e for e in result.all_events if e.is_successful_output and e.node_name == op_name
    ]
    return {key: value.value for key, value in event.event_specific_data.metadata.items()}


def test_reclassify_creates_one_pending_signal_per_stale_node(db, instance):
    stale, recalled, recent = insert(
        db,
        node(text="Old idea nobody used.", recall_count=0, epoch=10),
        node(text="Old but recalled.", recall_count=2, epoch=10),
        node(text="Exactly at the lag.", recall_count=0, epoch=100),
    )
    db.execute("UPDATE namespace_activity SET current_epoch = 200")
    other_ns = insert(db, node(namespace="other", text="Old elsewhere.", recall_count=0, epoch=0))[0]
    for _ in range(2):  # the second cycle must not add a duplicate
        result = run_cycle(instance, op_selection=["reclassify_stale"])
        assert result.success
    signals = db.execute(
        "SELECT memory_id::text, signal_type, source, status, content_snapshot FROM training_signals"
    ).fetchall()
    assert signals == [(stale, "reclassify_pending", "curator", "pending", "Old idea nobody used.")]
    assert other_ns not in {s[0] for s in signals}
    assert _step_metadata(result, "reclassify_stale")["signals_created"] == 0


def test_consolidate_merges_paraphrases_into_the_higher_utility_node(db, instance):
    keeper, absorbed, unrelated, other_type, other_tenant = insert(
        db,
        node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
        node(text="Customer Dana Reyes prefers email to phone calls.", base_utility=0.2),
        node(text="The deploy pipeline runs on Fridays at 16:00 UTC."),
        node(text="Customer Dana Reyes prefers email over phone calls.", memory_type="preference"),
        node(tenant_id="globex", text="Customer Dana Reyes prefers email over phone calls."),
    )
    result = run_cycle(instance, op_selection=["consolidate_duplicates"])
    assert result.success

    kept, archived = fetch_node(db, keeper), fetch_node(db, absorbed)
    assert archived["archived_at"] is not None and str(archived["merged_into"]) == keeper
    # The keeper already says what the other says: its text (and vector) stay, it says it once,
    # and it takes the other's recalls.
    assert kept["archived_at"] is None and kept["embedding"] is not None
    assert kept["pointer_summary"] == "Customer Dana Reyes prefers email over phone calls."
    assert kept["recall_count"] == 10
    for untouched in (unrelated, other_type, other_tenant):
        row = fetch_node(db, untouched)
        assert row["archived_at"] is None and row["embedding"] is not None and row["row_version"] == 1

    revisions = db.execute(
        "SELECT node_id::text, step, before->>'pointer_summary', after->>'archived_at' IS NOT NULL,"
        " reason->>'keeper_id', (reason->>'similarity')::float FROM node_revisions ORDER BY id"
    ).fetchall()
    assert {r[0] for r in revisions} == {keeper, absorbed}
    assert all(r[1] == "consolidate_duplicates" and r[4] == keeper and r[5] > 0.92 for r in revisions)
    assert dict((r[0], r[3]) for r in revisions) == {keeper: False, absorbed: True}
    [covered] = db.execute("SELECT reason->'covered' FROM node_revisions WHERE node_id = %s", (absorbed,)).fetchone()
    assert covered == [{"clause": "Customer Dana Reyes prefers email to phone calls",
                        "covered_by": "Customer Dana Reyes prefers email over phone calls", "how": "lexical"}]
    assert _step_metadata(result, "consolidate_duplicates")["pairs_merged"] == 1


def test_consolidate_never_rewrites_or_archives_a_pinned_node(db, instance):
    pinned, duplicate, richer = insert(
        db,
        node(text="Invoices go to billing@acme.example.", pinned=True, base_utility=0.1),
        node(text="Invoices go to billing@acme.example.", base_utility=0.9),
        node(namespace="other", text="Invoices go to billing@acme.example.", pinned=True),
    )
    insert(db, node(namespace="other", text="Invoices go to billing@acme.example. Also CC finance.", base_utility=0.9))
    assert run_cycle(instance, op_selection=["consolidate_duplicates"]).success
    assert run_cycle(instance, namespace="other", op_selection=["consolidate_duplicates"]).success
    # A pure duplicate folds into the pinned node, which keeps its text and vector.
    assert str(fetch_node(db, duplicate)["merged_into"]) == pinned
    assert fetch_node(db, pinned)["row_version"] == 1
    # A duplicate that would add a sentence to a pinned node is left alone.
    assert db.execute(
        "SELECT count(*) FROM memory_nodes WHERE namespace = 'other' AND archived_at IS NOT NULL"
    ).fetchone()[0] == 0
    assert fetch_node(db, richer)["row_version"] == 1


def test_consolidate_does_not_chain_merges_within_one_cycle(db, instance):
    # All three are above the threshold pairwise; a node takes part in one merge per cycle.
    insert(
        db,
        node(text="The customer Dana Reyes prefers email over phone calls."),
        node(text="Customer Dana Reyes prefers email over phone calls."),
        node(text="Customer Dana Reyes prefers email to phone calls."),
    )
    assert run_cycle(instance, op_selection=["consolidate_duplicates"]).success
    archived = db.execute("SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL").fetchone()[0]
    assert archived == 1


def test_summarize_truncates_verbose_nodes_and_keeps_the_full_text_in_revisions(db, instance):
    long_text = ("The onboarding call with Initech covered SSO setup, billing contacts and data "
                 "retention. ") * 7
    verbose, exactly_500, pinned = insert(
        db,
        node(text=long_text.strip(), recall_count=0),
        node(text="y" * 500, recall_count=0),
        node(text=long_text.strip(), recall_count=0, pinned=True),
    )
    assert run_cycle(instance, op_selection=["summarize_verbose"]).success
    row = fetch_node(db, verbose)
    assert len(row["pointer_summary"]) <= 200 and row["pointer_summary"].endswith("…")
    assert long_text.startswith(row["pointer_summary"][:-1].rstrip())
    assert row["embedding"] is None
    before = db.execute(
        "SELECT before->>'pointer_summary' FROM node_revisions WHERE node_id = %s", (verbose,)
    ).fetchone()[0]
    assert before == long_text.strip()
    assert fetch_node(db, exactly_500)["row_version"] == 1
    assert fetch_node(db, pinned)["row_version"] == 1


def test_revectorize_embeds_missing_vectors_with_the_configured_embedder(db, instance):
    missing, present = insert(db, node(text="No vector yet.", embed=False), node(text="Has one."))
    result = run_cycle(instance, op_selection=["revectorize"])
    assert result.success
    row = fetch_node(db, missing)
    assert row["embedding"] is not None and row["embedding_model"] == "lexical-ngram-v1/384"
    assert abs(float((row["embedding"].to_numpy() ** 2).sum()) - 1.0) < 1e-4
    assert fetch_node(db, present)["row_version"] == 1
    metadata = _step_metadata(result, "revectorize")
    assert (metadata["embedded"], metadata["still_missing"]) == (1, 0)


def test_mark_stale_confidence_respects_the_window_and_verified_nodes(db, instance):
    old, recent, verified, never_recalled_old = insert(
        db,
        node(text="a", last_recalled_at=NOW - timedelta(days=31)),
        node(text="b", last_recalled_at=NOW - timedelta(days=29)),
        node(text="c", last_recalled_at=NOW - timedelta(days=90), confidence="verified"),
        node(text="d", last_recalled_at=None, created_at=NOW - timedelta(days=45)),
    )
    assert run_cycle(instance, op_selection=["mark_stale_confidence"]).success
    confidence = {
        node_id: fetch_node(db, node_id)["confidence"]
        for node_id in (old, recent, verified, never_recalled_old)
    }
    assert confidence == {old: "stale", recent: "default", verified: "verified",
                          never_recalled_old: "stale"}


def test_sync_graph_follows_changes_by_watermark_and_never_deletes(db, instance):
    ids = insert(db, *[node(text=f"Fact number {i} about Acme.", heat=0.1 * i) for i in range(5)])
    config = step_run_config({"sync_graph": {"cap": 2, "backfill_cap": 0}})  # 2 a cycle, no catching up
    counts = []
    for _ in range(4):
        result = run_cycle(instance, op_selection=["sync_graph"], run_config=config)
        counts.append(_step_metadata(result, "sync_graph")["nodes_considered"])
    assert counts == [2, 2, 1, 0]
    assert db.execute("SELECT count(*) FROM graph_vertices").fetchone()[0] == 5

    # An agent pins one node and another is archived into a keeper: both reach the graph.
    db.execute("UPDATE memory_nodes SET pinned = true WHERE id = %s", (ids[0],))
    db.execute("UPDATE memory_nodes SET archived_at = now(), merged_into = %s WHERE id = %s",
               (ids[2], ids[1]))
    result = run_cycle(instance, op_selection=["sync_graph"])
    assert _step_metadata(result, "sync_graph")["nodes_considered"] == 2
    vertices = {
        row[0]: row[1:]
        for row in db.execute("SELECT node_id::text, pinned, archived FROM graph_vertices").fetchall()
    }
    assert vertices[ids[0]] == (True, False) and vertices[ids[1]] == (False, True)
    assert db.execute(
        "SELECT source_id::text, target_id::text, label FROM graph_edges"
    ).fetchall() == [(ids[1], ids[2], "merged_into")]
    assert db.execute("SELECT count(*) FROM graph_vertices").fetchone()[0] == 5


def test_every_step_records_its_counts_in_one_cycle_row(db, instance):
    insert(db, node(text="Something to remember.", embed=False, recall_count=0, epoch=0))
    result = run_cycle(instance)
    assert result.success
    metadata = cycle_row(db, result.run_id)
    assert metadata["status"] == "success" and metadata["failed_steps"] == []
    assert set(metadata["steps"]) == {
        "reclassify_stale", "consolidate_duplicates", "summarize_verbose", "revectorize",
        "mark_stale_confidence", "sync_graph", "associate_concepts",
    }
    assert metadata["steps"]["revectorize"]["embedded"] == 1
    assert metadata["duration_s"] >= 0 and metadata["namespace"] == "support"
    curated = db.execute("SELECT last_curation_run_id FROM namespace_activity").fetchone()[0]
    assert curated == result.run_id


def _sync(instance, cap=100):
    # One batch of `cap` a cycle, no catching up (backfill: test_bounded_work.py).
    result = run_cycle(instance, op_selection=["sync_graph"],
                       run_config=step_run_config({"sync_graph": {"cap": cap, "backfill_cap": 0}}))
    assert result.success
    return _step_metadata(result, "sync_graph")["nodes_considered"]


def test_sync_graph_never_loses_a_change_committed_late_by_a_slow_transaction(db, instance, database_url):
    from curation_pipeline.store.database import open_connection

    slow_node, *others = insert(db, *[node(text=f"Fact {i}.") for i in range(6)])
    assert _sync(instance) == 6
    with open_connection(database_url) as slow_agent:
        # The slow transaction writes first (lower id) and commits last.
        slow_agent.execute("UPDATE memory_nodes SET pointer_summary = 'Revised slowly.' WHERE id = %s", (slow_node,))
        for other in others:
            db.execute("UPDATE memory_nodes SET heat = 0.5 WHERE id = %s", (other,))
        assert _sync(instance, cap=0) == 0          # a disabled step moves nothing
        assert [_sync(instance, cap=2) for _ in range(4)] == [2, 2, 1, 0]  # not stuck behind it
        slow_agent.commit()
    assert _sync(instance) == 1
    summary = db.execute("SELECT summary FROM graph_vertices WHERE node_id = %s", (slow_node,)).fetchone()[0]
    assert summary == "Revised slowly."
    assert _sync(instance) == 0


def test_sync_graph_starts_over_when_its_position_comes_from_another_server(db, instance):
    insert(db, node(text="Restored fact."))
    db.execute(
        "INSERT INTO namespace_activity (tenant_id, namespace, graph_sync_txid) VALUES ('acme', 'support', '999999999')"
        " ON CONFLICT (tenant_id, namespace) DO UPDATE SET graph_sync_txid = EXCLUDED.graph_sync_txid"
    )
    assert _sync(instance) == 1


def test_one_cycle_archives_at_most_its_share_of_the_namespace(db, instance):
    # Ten copies of one memory among 30 nodes: a threshold gone wrong must not fold them all at once.
    insert(db, *[node(text="Customer Dana Reyes prefers email over phone calls.") for _ in range(10)],
           *[node(text=f"Distinct fact number {i} about project {i * 7}.") for i in range(20)])
    result = run_cycle(instance, op_selection=["consolidate_duplicates"])
    metadata = _step_metadata(result, "consolidate_duplicates")
    assert metadata["archive_allowance"] == 3 and metadata["nodes_archived"] == 3
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL").fetchone()[0] == 3


def _consolidate(instance, **config):
    result = run_cycle(instance, op_selection=["consolidate_duplicates"],
                       run_config=step_run_config({"consolidate_duplicates": config}) if config else None)
    assert result.success
    return _step_metadata(result, "consolidate_duplicates")


@pytest.mark.parametrize(
    ("in_database_up_to", "expected_pass"),
    [(100, "incremental (in database)"), (0, "incremental")],
)
def test_consolidation_costs_what_changed_after_a_complete_pass(db, instance, in_database_up_to, expected_pass):
    insert(db, *[node(text=f"Distinct fact number {i} about project {i * 7}.") for i in range(12)],
           node(text="Customer Dana Reyes prefers email over phone calls."))
    config = {"in_database_search_max_changed": in_database_up_to}
    first = _consolidate(instance, **config)
    assert (first["pass"], first["nodes_compared"]) == ("full", 13)

    # Nothing changed: no vectors are even loaded.
    unchanged = _consolidate(instance, **config)
    assert (unchanged["pass"], unchanged["nodes_compared"]) == ("unchanged", 0)

    # An agent stores a paraphrase of an old memory: only it is compared with the rest, either
    # by pgvector in the database (only the pair's two rows come back) or here in numpy.
    insert(db, node(text="Customer Dana Reyes prefers email to phone calls."))
    incremental = _consolidate(instance, **config)
    assert (incremental["pass"], incremental["focus_nodes"], incremental["pairs_merged"]) == (expected_pass, 1, 1)
    assert incremental["nodes_compared"] == (2 if in_database_up_to else 14)
    kept = db.execute("SELECT pointer_summary FROM memory_nodes WHERE pointer_summary LIKE 'Customer%' AND archived_at IS NULL").fetchone()[0]
    assert kept.count("Customer Dana Reyes") == 1  # said once


def test_a_pass_that_left_pairs_behind_or_new_settings_mean_a_full_pass(db, instance):
    insert(db, node(text="Customer Dana Reyes prefers email over phone calls."),
           node(text="Customer Dana Reyes prefers email to phone calls."),
           node(text="The deploy pipeline runs on Fridays at 16:00 UTC."),
           node(text="The deploy pipeline runs on Fridays at 16:00 UTC!"),
           *[node(text=f"Distinct fact number {i} about project {i * 7}.") for i in range(10)])
    capped = _consolidate(instance, cap=1)
    assert (capped["pairs_merged"], capped["pairs_left_over"]) == (1, 1)
    follow_up = _consolidate(instance, cap=1)
    assert (follow_up["pass"], follow_up["pairs_merged"], follow_up["pairs_left_over"]) == ("full", 1, 0)
    # The keeper took its partner's recalls, which changes nothing it says (content_txid,
    # sql/014): the next pass has nothing new to compare.
    assert _consolidate(instance, cap=1)["pass"] == "unchanged"
    assert _consolidate(instance, cap=1, similarity_threshold=0.5)["pass"] == "full"


@pytest.mark.parametrize("in_database_up_to", [100, 0])
def test_a_zero_vector_written_by_an_agent_never_pairs_with_anything(db, instance, in_database_up_to):
    import numpy as np

    insert(db, *[node(text=f"Distinct fact number {i} about project {i * 7}.") for i in range(5)],
           {**node(text="Broken vector from an agent.", embed=False),
            "embedding": np.zeros(384, dtype=np.float32), "embedding_model": "lexical-ngram-v1/384"})
    config = {"in_database_search_max_changed": in_database_up_to}
    assert _consolidate(instance, **config)["pairs_merged"] == 0
    insert(db, node(text="The user likes tea."))
    incremental = _consolidate(instance, **config)
    assert incremental["pass"].startswith("incremental") and incremental["pairs_merged"] == 0
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL").fetchone()[0] == 0


def test_the_graph_follows_a_merge_an_archive_a_pin_and_a_heat_change(db, instance):
    keeper, absorbed, pinned, hot, archived = insert(
        db,
        node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9, heat=0.2),
        node(text="Customer Dana Reyes prefers email to phone calls.", heat=0.1),
        node(text="The deploy freeze starts on December 18."),
        node(text="Invoices go out on the 5th of each month.", heat=0.3),
        node(text="Ticket 4411 is waiting on the payments team."),
    )
    assert run_cycle(instance).success  # merges the pair and syncs every vertex

    def vertex(node_id):
        return db.execute("SELECT heat, pinned, archived, summary FROM graph_vertices WHERE node_id = %s",
                          (node_id,)).fetchone()

    assert vertex(absorbed)[2] is True and vertex(keeper)[2] is False
    assert vertex(keeper)[3] == fetch_node(db, keeper)["pointer_summary"]
    assert db.execute("SELECT source_id::text, target_id::text, label FROM graph_edges").fetchall() == [
        (absorbed, keeper, "merged_into")]

    # An agent pins one node, warms another and archives a third; the next cycle syncs all three.
    db.execute("UPDATE memory_nodes SET pinned = true WHERE id = %s", (pinned,))
    db.execute("UPDATE memory_nodes SET heat = 0.95 WHERE id = %s", (hot,))
    db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (archived,))
    result = run_cycle(instance)
    assert cycle_row(db, result.run_id)["steps"]["sync_graph"]["vertices_updated"] == 3
    assert vertex(pinned)[1] is True and vertex(hot)[0] == 0.95 and vertex(archived)[2] is True
    # Nothing was deleted: every node still has its vertex, the merge still has its edge.
    assert db.execute("SELECT count(*) FROM graph_vertices").fetchone()[0] == 5
    assert db.execute("SELECT count(*) FROM graph_edges WHERE retracted_at IS NULL").fetchone()[0] == 1

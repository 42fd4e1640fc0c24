"""Every step's work per cycle is bounded, whatever an agent wrote: a huge text is embedded up to
the embedder's input limit and mirrored into the graph clipped; missing vectors, stale marks,
the pairs search and the graph each do at most their cap a cycle, and catch up over the next
cycles (docs/cost.md lists the caps; benchmarks/huge_namespace_cost.py measures a 200,000-node
namespace and two 10 MB memories)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from curation_pipeline.clients.embedders.lexical import LexicalEmbedder
from curation_pipeline.core.steps.graph_sync import VERTEX_SUMMARY_CHARS
from curation_pipeline.defs.job import step_run_config
from curation_pipeline_tests.conftest import NOW, cycle_row, fetch_node, insert, node, run_cycle

pytestmark = pytest.mark.slow

_WORDS = ("invoice renewal webhook roadmap pilot retention export escalation contract audit badge "
          "laptop printer vacation payroll migration firewall backup sprint onboarding keyboard "
          "mentor budget license dashboard ticket survey").split()


def _distinct(n: int, kind: str) -> str:
    """A short memory that shares few words with the others of its kind."""
    words = [_WORDS[(n * k * 7 + k) % len(_WORDS)] for k in (1, 3, 5, 11)]
    return f"{kind} {n * 7919 % 100_003}: {' '.join(words)} for team {n}."


HUGE = " ".join(f"Sentence {n} of a memory an agent wrote far too long." for n in range(6_000))  # ~330k chars


def _ops(**configs) -> dict:
    return step_run_config(configs)


def _steps(db, result) -> dict:
    return cycle_row(db, result.run_id)["steps"]


def test_a_text_beyond_the_embedders_input_limit_is_embedded_up_to_it(db, instance):
    huge = insert(db, node(text=HUGE, embed=False))[0]
    assert run_cycle(instance, op_selection=["revectorize"]).success
    embedder = LexicalEmbedder(384)
    stored = np.asarray(fetch_node(db, huge)["embedding"].to_numpy(), dtype=np.float32)
    expected = embedder.embed([HUGE[:embedder.max_input_chars]])[0]
    assert len(HUGE) > embedder.max_input_chars
    np.testing.assert_allclose(stored, expected, atol=1e-6)
    assert fetch_node(db, huge)["pointer_summary"] == HUGE  # the memory keeps its whole text


def test_a_vertex_mirrors_a_huge_text_clipped(db, instance):
    huge = insert(db, node(text=HUGE))[0]
    assert run_cycle(instance, op_selection=["sync_graph"]).success
    summary = db.execute("SELECT summary FROM graph_vertices WHERE node_id = %s", (huge,)).fetchone()[0]
    assert len(summary) <= VERTEX_SUMMARY_CHARS and HUGE.startswith(summary.rstrip("…"))


def test_missing_vectors_are_embedded_at_most_their_cap_a_cycle(db, instance):
    insert(db, *[node(text=f"Memory number {n} about the renewal.", embed=False) for n in range(25)])
    config = _ops(revectorize={"embed_cap": 10, "batch_size": 4})
    first = _steps(db, run_cycle(instance, run_config=config, op_selection=["revectorize"]))["revectorize"]
    assert (first["embedded"], first["still_missing"]) == (10, 15)
    second = _steps(db, run_cycle(instance, run_config=config, op_selection=["revectorize"]))["revectorize"]
    assert (second["embedded"], second["still_missing"]) == (10, 5)
    # Oldest first: the nodes embedded first are the oldest ones.
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE embedding IS NULL").fetchone()[0] == 5


def test_stale_marks_are_at_most_their_cap_a_cycle_oldest_first(db, instance):
    ids = insert(db, *[node(text=f"Old fact {n}.", last_recalled_at=NOW - timedelta(days=60 + n)) for n in range(25)])
    config = _ops(mark_stale_confidence={"cap": 10})
    counts = _steps(db, run_cycle(instance, run_config=config, op_selection=["mark_stale_confidence"]))
    assert counts["mark_stale_confidence"]["marked_stale"] == 10
    stale = {row[0] for row in db.execute("SELECT id::text FROM memory_nodes WHERE confidence = 'stale'")}
    assert stale == set(ids[15:])  # the 10 seen longest ago


def test_the_graph_catches_up_at_the_backfill_rate_and_then_syncs_what_changed(db, instance):
    db.execute(
        "INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary)"
        " SELECT 'acme', 'support', 'Bulk memory ' || n FROM generate_series(1, 2500) AS n"
    )
    config = _ops(sync_graph={"cap": 100, "backfill_cap": 2000})
    first = _steps(db, run_cycle(instance, run_config=config, op_selection=["sync_graph"]))["sync_graph"]
    assert (first["nodes_considered"], first["remaining"]) == (2000, True)
    second = _steps(db, run_cycle(instance, run_config=config, op_selection=["sync_graph"]))["sync_graph"]
    assert (second["nodes_considered"], second["remaining"]) == (500, False)
    assert db.execute("SELECT count(*) FROM graph_vertices").fetchone()[0] == 2500
    # Caught up: a change is synced by the first batch alone.
    db.execute("UPDATE memory_nodes SET heat = 0.5 WHERE pointer_summary = 'Bulk memory 7'")
    third = _steps(db, run_cycle(instance, run_config=config, op_selection=["sync_graph"]))["sync_graph"]
    assert (third["nodes_considered"], third["remaining"]) == (1, False)


def test_the_pair_search_takes_at_most_its_cap_of_changed_nodes_a_cycle_and_never_falls_back_to_a_full_pass(
        db, instance):
    insert(db, *[node(text=_distinct(n, "Base")) for n in range(200)])
    config = {"in_database_search_max_changed": 10, "search_max_changed": 100, "cap": 20}
    run = lambda: _steps(db, run_cycle(instance, run_config=_ops(consolidate_duplicates=config),  # noqa: E731
                                       op_selection=["consolidate_duplicates"]))["consolidate_duplicates"]
    assert run()["pass"] == "full"
    # 250 changed nodes: 200 distinct ones written first, then 25 exact duplicate pairs.
    insert(db, *[node(text=_distinct(n, "New")) for n in range(200)])
    for n in range(25):
        twin = _distinct(1_000 + n, "Twin")
        insert(db, node(text=twin), node(text=twin))
    twins_archived = lambda: db.execute(  # noqa: E731
        "SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL AND pointer_summary LIKE 'Twin %'"
    ).fetchone()[0]
    cycles, archived = [], []
    for _ in range(4):  # 100 + 100 changed nodes, then the 50 twins, then the twins again
        cycles.append(run())
        archived.append(twins_archived())
    assert all(cycle["pass"] == "incremental" for cycle in cycles), cycles
    assert all(cycle["focus_nodes"] <= 100 for cycle in cycles), cycles
    assert archived == [0, 0, 20, 25]  # the twins come last; the cap of 20 leaves 5 for next cycle
    # The 5 keepers of the last merges took their twins' recalls, which changes nothing they say
    # (content_txid, sql/014): nothing has changed for the pair search.
    assert run()["pass"] == "unchanged"

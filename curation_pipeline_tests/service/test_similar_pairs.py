"""Steps 2 and 6b's pair search streams the namespace from the database in blocks, holding a
bounded part of it, and finds exactly the pairs of the in-memory search over all vectors."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.consolidate import group_of_row
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.core.steps.incremental import PassStart
from curation_pipeline.core.steps.similarity import find_similar_pairs
from curation_pipeline.service import similar_pairs
from curation_pipeline.service.similar_pairs import search_pairs
from curation_pipeline.store import candidates
from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.conftest import insert, node

MODEL = "test-model/384"
SCOPE = Scope("run", "acme", "support", "consolidate_duplicates")
TYPES = ("semantic", "episodic", "procedural")


@pytest.fixture
def namespace(db):
    """240 nodes of three memory types; a third of them near-duplicates (cosine ~0.97) of another
    node, some of another type; a zero vector; a node of another model and an archived one."""
    rng = np.random.default_rng(21)
    vectors = rng.normal(size=(240, 384)).astype(np.float32)
    copies = rng.choice(240, size=80, replace=False)
    vectors[copies] = vectors[rng.choice(240, size=80)] + rng.normal(scale=0.01, size=(80, 384)).astype(np.float32)
    vectors[5] = 0.0
    types = rng.choice(TYPES, size=240)
    rows = [node(embed=False, embedding=vector, embedding_model=MODEL, memory_type=str(kind), text=f"Memory {n}.")
            for n, (vector, kind) in enumerate(zip(vectors, types))]
    rows[7]["embedding_model"] = "another-model/384"
    rows[9]["archived_at"] = rows[9]["created_at"]
    ids = insert(db, *rows)
    return ids


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of ~20 rows and room for ~50 vectors: many blocks, memory types in several chunks
    (each compared with the rest of its type read again), changed nodes in several parts."""
    monkeypatch.setattr(candidates, "STREAM_FETCH_ROWS", 7)
    monkeypatch.setattr(candidates, "STREAM_BLOCK_ROWS", 20)
    monkeypatch.setattr(similar_pairs, "SEARCH_MEMORY_BYTES", 50 * 4 * 384)


def _start(changed=None) -> PassStart:
    return PassStart(changed is not None, frozenset(changed or ()), SyncPosition(), SyncPosition(), {})


def _in_memory(db, *, same_type: bool, threshold: float, changed=None) -> set:
    nodes, vectors = candidates.consolidation_candidates(db, SCOPE, MODEL)
    groups = group_of_row(nodes) if same_type else np.zeros(nodes.height, dtype=np.int64)
    focus = None if changed is None else nodes["id"].is_in(list(changed)).to_numpy()
    found = find_similar_pairs(vectors, groups, threshold=threshold, focus=focus)
    ids = nodes["id"]
    return {tuple(sorted(pair)) for pair in zip(ids.gather(found["i"]), ids.gather(found["j"]))}


def _streamed(db, *, same_type: bool, threshold: float, changed=None):
    with db.transaction():
        search = search_pairs(db, SCOPE, _start(changed), model=MODEL, threshold=threshold,
                              in_database_max_changed=0, same_memory_type=same_type)
    ids = search.nodes["id"]
    pairs = {tuple(sorted(pair)) for pair in zip(ids.gather(search.pairs["i"]), ids.gather(search.pairs["j"]))}
    return search, pairs


@pytest.mark.parametrize("same_type", [True, False])
def test_a_full_pass_over_streamed_blocks_finds_the_in_memory_pairs(db, namespace, small_blocks, same_type):
    search, pairs = _streamed(db, same_type=same_type, threshold=0.92)
    assert pairs == _in_memory(db, same_type=same_type, threshold=0.92)
    assert len(pairs) > 20 and search.how == "full"
    assert search.compared == search.focus_nodes == 238  # not the other model's, not the archived
    # Only the pairs' rows are loaded, each with the columns the planners need, by id.
    assert search.nodes["id"].to_list() == sorted({node_id for pair in pairs for node_id in pair})
    assert search.pairs.select("i", "j").rows() == sorted(search.pairs.select("i", "j").rows())


@pytest.mark.parametrize("same_type", [True, False])
def test_changed_nodes_are_compared_with_the_streamed_namespace(db, namespace, small_blocks, same_type):
    changed = set(namespace[::4])  # 60 changed nodes: more than fit at once, so in parts
    search, pairs = _streamed(db, same_type=same_type, threshold=0.92, changed=changed)
    assert pairs == _in_memory(db, same_type=same_type, threshold=0.92, changed=changed)
    assert len(pairs) > 5 and search.how == "incremental"
    assert search.focus_nodes == len(changed)  # all of them active and of the model
    assert search.compared == 238


def test_a_pair_whose_node_an_agent_rewrote_during_the_search_is_left_for_the_next_pass(
    db, database_url, namespace, small_blocks, monkeypatch
):
    expected = _in_memory(db, same_type=True, threshold=0.92)
    rewritten = min(expected)[0]
    load = candidates.node_rows

    def agent_writes_first(conn, scope, ids):
        # An agent's edit commits after the node's vector was compared, before its row is loaded.
        db.execute("UPDATE memory_nodes SET heat = heat + 1 WHERE id = %s", (rewritten,))
        return load(conn, scope, ids)

    monkeypatch.setattr(candidates, "node_rows", agent_writes_first)
    with open_connection(database_url) as run, run.transaction():
        search = search_pairs(run, SCOPE, _start(), model=MODEL, threshold=0.92, in_database_max_changed=0)
    ids = search.nodes["id"]
    pairs = {tuple(sorted(pair)) for pair in zip(ids.gather(search.pairs["i"]), ids.gather(search.pairs["j"]))}
    assert pairs == {pair for pair in expected if rewritten not in pair}


@pytest.mark.parametrize("changed", [None, "some"])
def test_a_search_that_fails_mid_stream_leaves_no_reader_on_the_connection(
    db, database_url, namespace, small_blocks, monkeypatch, changed
):
    # The search reads one block, then fails (as on a vector it refuses): its read-ahead thread
    # stops and its server-side cursor closes before the step's transaction goes on.
    def fail_after_one_block(focus_or_blocks, *args, **kwargs):
        blocks = args[0] if changed else focus_or_blocks
        next(iter(blocks))
        raise ValueError("refused mid-stream")

    monkeypatch.setattr(similar_pairs, "focus_search" if changed else "full_search", fail_after_one_block)
    start = _start(namespace[:30] if changed else None)
    with open_connection(database_url) as conn, conn.transaction():
        with pytest.raises(ValueError, match="refused mid-stream") as raised:
            search_pairs(conn, SCOPE, start, model=MODEL, threshold=0.9, in_database_max_changed=0)
        # Whoever reports the error (Dagster) holds its traceback, and with it the search's frames.
        assert raised.traceback
        assert not [thread for thread in threading.enumerate() if thread.name == "read-ahead"]
        assert conn.execute("SELECT count(*) FROM pg_cursors").fetchone()[0] == 0

"""Step 4 with the OpenAI-compatible provider, end to end: the job talks to a real HTTP server of
ours on 127.0.0.1 through the real `openai` client."""

from __future__ import annotations

import json
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
from curation_pipeline_tests.support.embeddings_stub import (
    StubEmbeddingsServer,
    embeddings_body,
    faithful,
    vector_for,
)
from curation_pipeline_tests.support.llm_stub import Reply, error

pytestmark = pytest.mark.slow

OPENAI = {"resources": {"embedder": {"config": {"provider": "openai", "model": "text-embedding-3-small"}}}}
NAME = "openai:text-embedding-3-small/384"


@pytest.fixture
def embeddings_server(monkeypatch):
    server = StubEmbeddingsServer()
    monkeypatch.setenv("CURATION_EMBEDDER_BASE_URL", server.url)
    monkeypatch.setenv("CURATION_EMBEDDER_API_KEY", "sk-test-secret")
    monkeypatch.setenv("CURATION_EMBEDDER_BACKOFF_SECS", "0")
    yield server
    server.close()


def test_nodes_are_embedded_through_the_endpoint_in_batches(db, instance, embeddings_server):
    ids = insert(db, *[node(text=f"Memory number {i} of the support team.", embed=False) for i in range(5)])
    config = {**OPENAI, **step_run_config({"revectorize": {"batch_size": 2}})}
    result = run_cycle(instance, run_config=config)
    assert result.success
    counts = cycle_row(db, result.run_id)["steps"]["revectorize"]
    assert counts["embedded"] == 5 and counts["still_missing"] == 0 and counts["embedder"] == NAME
    assert [len(request["body"]["input"]) for request in embeddings_server.requests] == [2, 2, 1]
    assert all(request["body"]["dimensions"] == 384 for request in embeddings_server.requests)
    row = fetch_node(db, ids[3])
    assert row["embedding_model"] == NAME
    expected = vector_for(row["pointer_summary"], 384)
    assert row["embedding"].to_list() == pytest.approx(expected, rel=1e-6)


def test_an_unavailable_endpoint_ends_step_4_early_and_the_run_goes_on(db, instance, embeddings_server):
    embeddings_server.responder = lambda body, number: error(503)
    insert(db, *[node(text=f"Memory {i}.", embed=False) for i in range(3)])
    result = run_cycle(instance, run_config=OPENAI)
    assert result.success
    cycle = cycle_row(db, result.run_id)
    counts = cycle["steps"]["revectorize"]
    assert cycle["status"] == "success"
    assert counts["embedded"] == 0 and counts["still_missing"] == 3
    assert "503" in counts["embedder_unavailable"]
    # The next cycle, with the endpoint back, embeds what was left.
    embeddings_server.responder = faithful
    again = run_cycle(instance, run_config=OPENAI)
    assert cycle_row(db, again.run_id)["steps"]["revectorize"]["embedded"] == 3


def test_a_nan_vector_fails_the_step_naming_the_row_and_writes_nothing_of_its_batch(db, instance, embeddings_server):
    def one_nan(body, number):
        vectors = [vector_for(text, 384) for text in body["input"]]
        vectors[1][7] = float("nan")
        return Reply(body=embeddings_body(vectors))

    embeddings_server.responder = one_nan
    ids = insert(db, *[node(text=f"Memory {i}.", embed=False, created_at=NOW - timedelta(days=3 - i))
                       for i in range(3)])
    result = run_cycle(instance, run_config=OPENAI)
    assert not result.success
    failure = cycle_row(db, result.run_id)["errors"]["revectorize"]
    assert f"node {ids[1]}:" in failure and "row 1 contains NaN" in failure
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE embedding IS NOT NULL").fetchone()[0] == 0


def test_a_wrong_key_fails_the_step_naming_the_variable_not_the_key(db, instance, embeddings_server):
    embeddings_server.responder = lambda body, number: Reply(
        status=401, body=json.dumps({"error": {"message": "Incorrect API key: sk-test-secret"}}).encode())
    insert(db, node(text="Memory.", embed=False))
    result = run_cycle(instance, run_config=OPENAI)
    assert not result.success
    failure = cycle_row(db, result.run_id)["errors"]["revectorize"]
    assert "CURATION_EMBEDDER_API_KEY" in failure and "sk-test-secret" not in failure
    assert len(embeddings_server.requests) == 1  # not retried


def test_a_text_beyond_the_input_limit_is_cut_for_the_vector_only(db, instance, embeddings_server, monkeypatch):
    monkeypatch.setenv("CURATION_EMBEDDER_MAX_INPUT_CHARS", "40")
    long_text = "A pinned memory that is far longer than the model would accept as one input."
    pinned = insert(db, node(text=long_text, embed=False, pinned=True))[0]
    result = run_cycle(instance, run_config=OPENAI)
    assert cycle_row(db, result.run_id)["steps"]["revectorize"]["embedded"] == 1
    assert embeddings_server.requests[0]["body"]["input"] == [long_text[:40]]
    assert fetch_node(db, pinned)["pointer_summary"] == long_text

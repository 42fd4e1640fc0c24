"""OpenAIEmbedder against our stub embeddings server, through the real `openai` client."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from curation_pipeline.clients.embedders.base import Embedder
from curation_pipeline.clients.embedders.openai_api import (
    EmbedderUnavailable,
    OpenAIEmbedder,
)
from curation_pipeline.config.embedder import EmbedderSettings, load_embedder_settings
from curation_pipeline.core.vectors import EmbeddingError
from curation_pipeline_tests.support.embeddings_stub import (
    DEFAULT_WIDTH,
    Reply,
    StubEmbeddingsServer,
    embeddings_body,
    error,
    faithful,
    shuffled,
    vector_for,
)

KEY = "sk-test-secret-1234567890"


@pytest.fixture
def stub():
    server = StubEmbeddingsServer()
    yield server
    server.close()


def _settings(url: str, **overrides) -> EmbedderSettings:
    values = dict(provider="openai", base_url=url, api_key=KEY, model="stub-embedder", dimension=DEFAULT_WIDTH,
                  timeout_secs=1.0, backoff_secs=0.01)
    values.update(overrides)
    return EmbedderSettings(**values)


def _embedder(settings: EmbedderSettings) -> tuple[OpenAIEmbedder, list[float]]:
    waits: list[float] = []
    return OpenAIEmbedder(settings, sleep=waits.append), waits


def _expected(texts: list[str], width: int = DEFAULT_WIDTH) -> np.ndarray:
    return np.asarray([vector_for(text, width) for text in texts], dtype=np.float32)


TEXTS = ["alpha", "beta", "gamma", "delta"]


# --- the happy path ---------------------------------------------------------------------------


@pytest.mark.parametrize("responder", [faithful, shuffled], ids=["in-order", "shuffled"])
def test_one_request_per_call_and_rows_in_input_order(stub, responder):
    stub.responder = responder
    embedder, waits = _embedder(_settings(stub.url))
    assert isinstance(embedder, Embedder) and embedder.name == f"openai:stub-embedder/{DEFAULT_WIDTH}"
    vectors = embedder.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (4, DEFAULT_WIDTH)
    np.testing.assert_array_equal(vectors, _expected(TEXTS))
    [request] = stub.requests
    assert request["path"] == "/v1/embeddings"
    assert request["headers"]["authorization"] == f"Bearer {KEY}"
    assert request["body"] == {"model": "stub-embedder", "input": TEXTS, "encoding_format": "float"}
    assert (embedder.usage.requests, embedder.usage.retries, embedder.usage.failed_calls, waits) == (1, 0, 0, [])
    assert embedder.usage.prompt_tokens == 12
    assert embedder.embed([]).shape == (0, DEFAULT_WIDTH) and len(stub.requests) == 1  # nothing to send


@pytest.mark.parametrize(("model", "send_dimensions", "sent"), [
    ("text-embedding-3-small", None, True),  # documented to accept `dimensions`
    ("text-embedding-ada-002", None, False),  # rejects it
    ("nomic-embed-text", None, False),
    ("nomic-embed-text", True, True),  # the setting wins either way
    ("text-embedding-3-large", False, False),
])
def test_dimensions_is_sent_only_when_it_should_be(stub, model, send_dimensions, sent):
    embedder, _ = _embedder(_settings(stub.url, model=model, send_dimensions=send_dimensions, dimension=DEFAULT_WIDTH))
    embedder.embed(["x"])
    body = stub.requests[0]["body"]
    assert body["model"] == model and body["encoding_format"] == "float"
    assert body.get("dimensions") == (DEFAULT_WIDTH if sent else None)


def test_dimensions_asks_the_server_for_the_store_width(stub):
    embedder, _ = _embedder(_settings(stub.url, model="text-embedding-3-small", dimension=12))
    vectors = embedder.embed(["a", "b"])
    assert vectors.shape == (2, 12) and stub.requests[0]["body"]["dimensions"] == 12


def test_a_bare_string_is_a_caller_bug(stub):
    embedder, _ = _embedder(_settings(stub.url))
    with pytest.raises(TypeError):
        embedder.embed("alpha")
    assert stub.requests == []


# --- retried faults ---------------------------------------------------------------------------


def _then_faithful(fault: Reply, failures: int = 1):
    return lambda body, n: fault if n < failures else faithful(body)


@pytest.mark.parametrize("fault", [
    error(429, {"Retry-After": "2"}),
    error(500), error(503), error(408), error(409),
    Reply(body=b'{"object": "list", "data": [{"object": "embedding", "ind'),  # cut off
    Reply(body=b"<html>gateway</html>"),
    Reply(body=embeddings_body([[1.0] * DEFAULT_WIDTH])),  # one vector for four texts
    Reply(body=embeddings_body([[1.0] * DEFAULT_WIDTH] * 4, order=[0, 1, 1, 3])),  # index 2 missing
], ids=["429", "500", "503", "408", "409", "truncated", "not-json", "short-list", "missing-index"])
def test_transient_faults_are_retried(stub, fault):
    stub.responder = _then_faithful(fault)
    embedder, waits = _embedder(_settings(stub.url))
    np.testing.assert_array_equal(embedder.embed(TEXTS), _expected(TEXTS))
    assert len(stub.requests) == 2 and embedder.usage.requests == 2 and embedder.usage.retries == 1
    assert len(waits) == 1 and embedder.usage.waited_secs == pytest.approx(waits[0])
    if fault.status == 429:
        assert waits == [2.0]  # the server's Retry-After, not our backoff
    else:
        assert 0.01 <= waits[0] <= 0.0125  # backoff_secs with up to 25 % jitter
    assert embedder.usage.failed_calls == 0


def test_a_timeout_is_retried(stub):
    stub.responder = _then_faithful(Reply(body=b"", delay_secs=0.6))
    embedder, waits = _embedder(_settings(stub.url, timeout_secs=0.2))
    np.testing.assert_array_equal(embedder.embed(TEXTS), _expected(TEXTS))
    assert embedder.usage.requests == 2 and len(waits) == 1


def test_a_refused_connection_is_retried_then_unavailable():
    from curation_pipeline_tests.support.llm_stub import unused_port_url

    embedder, waits = _embedder(_settings(unused_port_url(), max_retries=1))
    with pytest.raises(EmbedderUnavailable, match="after 2 attempts: connection error"):
        embedder.embed(TEXTS)
    assert len(waits) == 1


def test_retries_are_bounded_backoff_doubles_and_the_last_error_is_named(stub):
    stub.responder = lambda body, n: error(503)
    embedder, waits = _embedder(_settings(stub.url, max_retries=3))
    with pytest.raises(EmbedderUnavailable, match="after 4 attempts: HTTP 503") as raised:
        embedder.embed(TEXTS)
    assert isinstance(raised.value, EmbeddingError)  # callers catching EmbeddingError still see it
    assert len(stub.requests) == 4 and len(waits) == 3 and waits[0] < waits[1] < waits[2]
    assert (embedder.usage.requests, embedder.usage.retries, embedder.usage.failed_calls) == (4, 3, 1)


def test_a_retry_after_longer_than_the_limit_is_not_waited_for(stub):
    stub.responder = lambda body, n: error(429, {"Retry-After": "3600"})
    embedder, waits = _embedder(_settings(stub.url, max_retry_wait_secs=30))
    with pytest.raises(EmbedderUnavailable, match="asked to wait 3600 s, more than 30 s"):
        embedder.embed(TEXTS)
    assert waits == [] and len(stub.requests) == 1


# --- not retried: configuration errors and model facts -----------------------------------------


@pytest.mark.parametrize(("status", "advice"), [
    (401, "CURATION_EMBEDDER_API_KEY"),
    (403, "CURATION_EMBEDDER_API_KEY"),
    (404, "CURATION_EMBEDDING_MODEL and CURATION_EMBEDDER_BASE_URL"),
    (400, "CURATION_EMBEDDING_MODEL"),
    (422, "CURATION_EMBEDDING_MODEL"),
])
def test_a_configuration_error_is_reported_at_once_without_the_key(stub, status, advice):
    # The body echoes the key, as some servers do for a refused one.
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}", "type": "stub"}}).encode()
    stub.responder = lambda _body, n: Reply(status=status, body=body)
    embedder, waits = _embedder(_settings(stub.url))
    with pytest.raises(EmbeddingError) as raised:
        embedder.embed(TEXTS)
    message = str(raised.value)
    assert not isinstance(raised.value, EmbedderUnavailable)
    assert f"HTTP {status}" in message and advice in message and KEY not in message
    assert KEY not in repr(embedder)
    assert len(stub.requests) == 1 and waits == []


def test_a_missing_key_for_the_openai_api_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    embedder, _ = _embedder(EmbedderSettings(provider="openai"))
    with pytest.raises(EmbeddingError, match="CURATION_EMBEDDER_API_KEY") as raised:
        embedder.embed(["x"])
    assert not isinstance(raised.value, EmbedderUnavailable)


def test_a_dimension_mismatch_names_both_widths_and_is_not_retried(stub):
    embedder, _ = _embedder(_settings(stub.url, dimension=384))  # the stub model is 8 wide
    with pytest.raises(EmbeddingError) as raised:
        embedder.embed(TEXTS)
    message = str(raised.value)
    assert not isinstance(raised.value, EmbedderUnavailable)
    assert "returned 8-dimensional vectors" in message and "vector(384)" in message
    assert "CURATION_EMBEDDING_DIM" in message and "CURATION_EMBEDDER_SEND_DIMENSIONS" in message
    assert len(stub.requests) == 1


@pytest.mark.parametrize(("bad", "problem"), [
    ([math.nan] + [1.0] * (DEFAULT_WIDTH - 1), "NaN"),
    ([0.0] * DEFAULT_WIDTH, "zero vector"),
    ([math.inf] + [1.0] * (DEFAULT_WIDTH - 1), "infinity"),
    ([1e300] + [1.0] * (DEFAULT_WIDTH - 1), "infinity"),  # a float64 beyond float32's range
    ([None] + [1.0] * (DEFAULT_WIDTH - 1), "NaN"),  # a JSON null in a vector
])
def test_a_bad_vector_names_its_row_in_input_order_and_is_not_retried(stub, bad, problem):
    def responder(body, n):
        vectors = [vector_for(text, DEFAULT_WIDTH) for text in body["input"]]
        vectors[2] = bad
        return Reply(body=embeddings_body(vectors, order=[3, 2, 1, 0]))  # row 2 is sent second

    stub.responder = responder
    assert b"NaN" in embeddings_body([[math.nan]])  # what the wire carries
    embedder, _ = _embedder(_settings(stub.url))
    with pytest.raises(EmbeddingError, match=f"row 2 .*{problem}") as raised:
        embedder.embed(TEXTS)
    assert not isinstance(raised.value, EmbedderUnavailable) and len(stub.requests) == 1


# --- per-cycle limits -------------------------------------------------------------------------


def test_the_breaker_opens_after_consecutive_failed_calls_and_a_success_resets_it(stub):
    stub.responder = lambda body, n: faithful(body) if n == 2 else error(500)
    embedder, _ = _embedder(_settings(stub.url, max_retries=0, breaker_failures=2))
    with pytest.raises(EmbedderUnavailable):
        embedder.embed(["a"])  # request 0
    with pytest.raises(EmbedderUnavailable):
        embedder.embed(["b"])  # request 1
    assert embedder.usage.breaker_open and embedder.usage.failed_calls == 2
    with pytest.raises(EmbedderUnavailable, match="circuit breaker open"):
        embedder.embed(["c"])
    assert len(stub.requests) == 2  # nothing sent once open

    # A success in between resets the count.
    stub.requests.clear()
    embedder, _ = _embedder(_settings(stub.url, max_retries=0, breaker_failures=2))
    stub.responder = lambda body, n: faithful(body) if n == 1 else error(500)
    with pytest.raises(EmbedderUnavailable):
        embedder.embed(["a"])
    embedder.embed(["b"])
    with pytest.raises(EmbedderUnavailable, match="HTTP 500"):
        embedder.embed(["c"])
    assert not embedder.usage.breaker_open and embedder.usage.consecutive_failures == 1


def test_a_configuration_error_also_counts_towards_the_breaker(stub):
    stub.responder = lambda body, n: error(401)
    embedder, _ = _embedder(_settings(stub.url, breaker_failures=1))
    with pytest.raises(EmbeddingError, match="HTTP 401"):
        embedder.embed(["a"])
    with pytest.raises(EmbedderUnavailable, match="circuit breaker open"):
        embedder.embed(["a"])
    assert len(stub.requests) == 1


def test_the_call_budget_counts_retries_too(stub):
    stub.responder = lambda body, n: error(500) if n == 1 else faithful(body)
    embedder, _ = _embedder(_settings(stub.url, max_calls=3))
    embedder.embed(["a"])  # request 0
    embedder.embed(["b"])  # requests 1 (500) and 2
    with pytest.raises(EmbedderUnavailable, match=r"call budget used up \(3 of 3"):
        embedder.embed(["c"])
    assert len(stub.requests) == 3 and embedder.usage.requests == 3

    # Running out in the middle of retries names the last error too.
    stub.requests.clear()
    stub.responder = lambda body, n: error(503)
    embedder, _ = _embedder(_settings(stub.url, max_calls=2, max_retries=5))
    with pytest.raises(EmbedderUnavailable, match="call budget used up.*last error: HTTP 503"):
        embedder.embed(["a"])
    assert len(stub.requests) == 2


# --- providers and settings -------------------------------------------------------------------


def test_azure_classic_uses_the_deployment_path_api_version_and_api_key_header(stub):
    settings = EmbedderSettings(provider="azure", base_url=stub.root, api_key=KEY, model="my-embeddings",
                                dimension=DEFAULT_WIDTH, azure_api_version="2024-10-21", timeout_secs=1.0)
    embedder, _ = _embedder(settings)
    assert embedder.name == f"azure:my-embeddings/{DEFAULT_WIDTH}"
    np.testing.assert_array_equal(embedder.embed(TEXTS), _expected(TEXTS))
    [request] = stub.requests
    assert request["path"] == "/openai/deployments/my-embeddings/embeddings?api-version=2024-10-21"
    assert request["headers"]["api-key"] == KEY and "authorization" not in request["headers"]


def test_azure_v1_is_openai_compatible_with_the_api_key_header(stub):
    settings = EmbedderSettings(provider="azure", base_url=f"{stub.root}/openai/v1", api_key=KEY,
                                model="my-embeddings", dimension=DEFAULT_WIDTH, timeout_secs=1.0)
    embedder, _ = _embedder(settings)
    embedder.embed(["x"])
    [request] = stub.requests
    assert request["path"] == "/openai/v1/embeddings" and request["headers"]["api-key"] == KEY
    assert request["body"]["model"] == "my-embeddings"


def test_settings_from_the_environment_reach_the_right_endpoint(stub):
    settings = load_embedder_settings({
        "CURATION_EMBEDDER": "openai",
        "CURATION_EMBEDDER_BASE_URL": f"{stub.url}/embeddings/",  # the full endpoint, as often pasted
        "CURATION_EMBEDDING_MODEL": "nomic-embed-text",
        "CURATION_EMBEDDING_DIM": str(DEFAULT_WIDTH),
    })
    assert settings.base_url == stub.url
    embedder, _ = _embedder(settings)
    np.testing.assert_array_equal(embedder.embed(["x"]), _expected(["x"]))
    [request] = stub.requests
    assert request["path"] == "/v1/embeddings" and "dimensions" not in request["body"]
    # A local server without a key: the SDK gets a placeholder, not an error.
    assert request["headers"]["authorization"] == "Bearer unused"


def test_building_the_embedder_sends_nothing_and_needs_no_key():
    embedder = OpenAIEmbedder(EmbedderSettings(provider="openai", dimension=1536))
    assert embedder.name == "openai:text-embedding-3-small/1536" and embedder.send_dimensions
    with pytest.raises(ValueError, match="lexical"):
        OpenAIEmbedder(EmbedderSettings(provider="lexical"))

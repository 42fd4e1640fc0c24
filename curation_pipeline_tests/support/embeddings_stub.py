"""A real HTTP server of ours on 127.0.0.1 that speaks OpenAI's embeddings API (``POST .../embeddings``).

Same idea as `llm_stub.py`: the real `openai` client talks to it over TCP, and a *responder*
decides each reply from the request body and the request's number (0-based), which is how tests
script faults ("429 first, then vectors") and odd servers (shuffled items, wrong widths, NaN).
Every request is recorded with its path (query string included), headers and body.
"""

from __future__ import annotations

import hashlib
import json

from curation_pipeline_tests.support.http_stub import (
    RecordingServer,
    Reply,
    Responder,
    error,
)

__all__ = ["Reply", "StubEmbeddingsServer", "embeddings_body", "error", "faithful", "shuffled", "vector_for"]

DEFAULT_WIDTH = 8  # the stub model's native width when the request has no `dimensions`


def vector_for(text: str, width: int) -> list[float]:
    """A deterministic, non-zero vector for `text`, so tests can check which row is which."""
    digest = hashlib.sha256(text.encode()).digest()
    return [1.0 + digest[i % len(digest)] / 255.0 for i in range(width)]


def embeddings_body(vectors: list[list[float]], *, order: list[int] | None = None,
                    model: str = "stub-embedder") -> bytes:
    """OpenAI's wire format for `vectors`; `order` lists the indices in the order they are sent.
    `json.dumps` writes float('nan') as `NaN`, which is how a test sends one."""
    order = list(range(len(vectors))) if order is None else order
    data = [{"object": "embedding", "index": i, "embedding": vectors[i]} for i in order]
    tokens = 3 * len(vectors)
    return json.dumps({"object": "list", "data": data, "model": model,
                       "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}).encode()


def width_of(body: dict) -> int:
    return body.get("dimensions") or DEFAULT_WIDTH


def faithful(body: dict, _number: int = 0) -> Reply:
    """What a good server answers: one vector per input, in input order."""
    return Reply(body=embeddings_body([vector_for(text, width_of(body)) for text in body["input"]]))


def shuffled(body: dict, _number: int = 0) -> Reply:
    """A good answer with the items in reverse order (the `index` field still says which is which)."""
    vectors = [vector_for(text, width_of(body)) for text in body["input"]]
    return Reply(body=embeddings_body(vectors, order=list(reversed(range(len(vectors))))))


class StubEmbeddingsServer(RecordingServer):
    def __init__(self, responder: Responder = faithful) -> None:
        super().__init__(responder, "/embeddings")

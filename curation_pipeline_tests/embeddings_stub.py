"""A real HTTP server of ours on 127.0.0.1 that speaks OpenAI's embeddings API (``POST .../embeddings``).

Same idea as `llm_stub.py`: the real `openai` client talks to it over TCP, and a *responder*
decides each reply from the request body and the request's number (0-based), which is how tests
script faults ("429 first, then vectors") and odd servers (shuffled items, wrong widths, NaN).
Every request is recorded with its path (query string included), headers and body.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from curation_pipeline_tests.llm_stub import Reply, error

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


Responder = Callable[[dict, int], Reply]


class StubEmbeddingsServer:
    def __init__(self, responder: Responder = faithful) -> None:
        self.responder = responder
        self.requests: list[dict] = []  # {"path", "headers", "body"} in arrival order
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                with stub._lock:
                    number = len(stub.requests)
                    stub.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                          "body": body})
                if not self.path.split("?")[0].endswith("/embeddings"):
                    reply = error(404)
                else:
                    reply = stub.responder(body, number)
                if reply.delay_secs:
                    time.sleep(reply.delay_secs)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, the default costs 0.5 s a test.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

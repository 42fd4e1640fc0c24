"""A real HTTP server of ours on 127.0.0.1 that records every POST and answers it as a
*responder* decides: the base of the OpenAI-protocol stubs (llm_stub.py, embeddings_stub.py).

The responder gets the request's JSON body and its number (0-based), which is how tests script
faults ("429 first, then an answer"). Requests are recorded with their path (query included),
lower-cased headers and body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_secs: float = 0.0  # sleep before answering (a hang, when longer than the timeout)


def error(status: int, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, headers=headers or {},
                 body=json.dumps({"error": {"message": f"stub error {status}", "type": "stub"}}).encode())


Responder = Callable[[dict, int], Reply]


class RecordingServer:
    """Serves `responder` for POSTs whose path ends with `path_suffix` (others get a 404)."""

    def __init__(self, responder: Responder, path_suffix: str) -> None:
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
                    stub.requests.append({"path": self.path, "body": body,
                                          "headers": {k.lower(): v for k, v in self.headers.items()}})
                if self.path.split("?")[0].endswith(path_suffix):
                    reply = stub.responder(body, number)
                else:
                    reply = error(404)
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

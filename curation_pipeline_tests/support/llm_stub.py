"""A real HTTP server of ours on 127.0.0.1 that speaks the OpenAI Responses API.

The real `openai` client talks to it over TCP, so timeouts, status codes, headers and bodies go
through the same code paths as with a real provider. A *responder* decides each reply from the
request body and the request's number (0-based), which is how the tests script faults
("429 first, then answer") and model behaviours ("drop the date").
"""

from __future__ import annotations

import json
import socket

from curation_pipeline.core.fact_guard import extract_facts
from curation_pipeline.core.prompts import MERGE_FIELD, SUMMARY_FIELD, parse_data_block
from curation_pipeline.core.text import split_sentences, strip_merge_markers
from curation_pipeline_tests.support.http_stub import (
    RecordingServer,
    Reply,
    Responder,
    error,
)

__all__ = ["Reply", "StubResponsesServer", "error", "answer", "faithful", "response_body"]


def response_body(output_text: str, *, input_tokens: int = 120, output_tokens: int = 40,
                  status: str = "completed") -> bytes:
    """The Responses API wire format of an answer holding `output_text`."""
    return json.dumps({
        "id": "resp_stub", "object": "response", "created_at": 0, "status": status,
        "model": "stub-model",
        "output": [{"type": "message", "id": "msg_stub", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": output_text, "annotations": []}]}],
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "total_tokens": input_tokens + output_tokens},
    }).encode()


def answer(field_name: str, text: str, **usage) -> Reply:
    return Reply(body=response_body(json.dumps({field_name: text}), **usage))


def purpose(body: dict) -> str:
    return "merge" if body["text"]["format"]["name"] == "memory_merge" else "summary"


def memory_texts(body: dict) -> list[str]:
    """The memory texts a request carries, read back from its data block."""
    document = parse_data_block(body["input"][0]["content"])
    if "entries" in document:
        return [entry["text"] for entry in document["entries"]]
    return [document["entry"]["text"]]


def faithful_text(body: dict) -> str:
    """What a good model answers: every distinct sentence (merge), or only the sentences that
    carry a fact (summary)."""
    seen, kept = set(), []
    for text in memory_texts(body):
        for sentence in split_sentences(strip_merge_markers(text)):
            has_fact = any(extract_facts(sentence).by_kind[kind] for kind in ("url", "email", "date", "identifier", "number"))
            if sentence.lower() not in seen and (purpose(body) == "merge" or has_fact):
                seen.add(sentence.lower())
                kept.append(sentence)
    return " ".join(kept)


def faithful(body: dict, _number: int = 0) -> Reply:
    field_name = MERGE_FIELD if purpose(body) == "merge" else SUMMARY_FIELD
    return answer(field_name, faithful_text(body))



class StubResponsesServer(RecordingServer):
    def __init__(self, responder: Responder = faithful) -> None:
        super().__init__(responder, "/responses")


def unused_port_url() -> str:
    """A base URL where nothing listens: every connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"

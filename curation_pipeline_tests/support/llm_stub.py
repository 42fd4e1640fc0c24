"""A real HTTP server of ours on 127.0.0.1 that speaks the OpenAI Responses API and Chat
Completions (`POST .../responses`, `POST .../chat/completions`).

The real `openai` client talks to it over TCP, so timeouts, status codes, headers and bodies go
through the same code paths as with a real provider. A *responder* decides each reply from the
request body and the request's number (0-based), which is how the tests script faults
("429 first, then answer") and model behaviours ("drop the date"). A responder returns either a
raw `Reply` or an `Answer` (a model's output text), which the stub puts in the wire format of
the API the request came through, so one script serves both APIs.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass

from curation_pipeline.core.coverage import KeptText, uncovered
from curation_pipeline.core.fact_guard import extract_facts
from curation_pipeline.core.prompts import MERGE_FIELD, SUMMARY_FIELD, VERDICT_FIELD, parse_data_block
from curation_pipeline.core.text import split_sentences, strip_merge_markers
from curation_pipeline_tests.support.http_stub import (
    RecordingServer,
    Reply,
    Responder,
    error,
)

__all__ = ["Answer", "Reply", "StubLLMServer", "StubResponsesServer", "answer", "chat_body", "error", "faithful", "response_body"]

PATHS = {"responses": "/responses", "chat": "/chat/completions"}


@dataclass
class Answer:
    """A model's answer, whatever the API: `status` "completed", or "incomplete" (cut off at
    the output cap: Chat Completions' finish_reason "length")."""

    text: str
    input_tokens: int = 120
    output_tokens: int = 40
    status: str = "completed"
    delay_secs: float = 0.0


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


def chat_body(output_text: str, *, input_tokens: int = 120, output_tokens: int = 40,
              status: str = "completed") -> bytes:
    """The Chat Completions wire format of an answer holding `output_text`."""
    return json.dumps({
        "id": "chatcmpl_stub", "object": "chat.completion", "created": 0, "model": "stub-model",
        "choices": [{"index": 0, "finish_reason": "length" if status == "incomplete" else "stop",
                     "message": {"role": "assistant", "content": output_text}}],
        "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                  "total_tokens": input_tokens + output_tokens},
    }).encode()


def api_of(body: dict) -> str:
    return "chat" if "messages" in body else "responses"


def render(reply: Reply | Answer, body: dict) -> Reply:
    if isinstance(reply, Reply):
        return reply
    wire = chat_body if api_of(body) == "chat" else response_body
    return Reply(body=wire(reply.text, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                           status=reply.status), delay_secs=reply.delay_secs)


def answer(field_name: str, text: str, **usage) -> Answer:
    return Answer(json.dumps({field_name: text}), **usage)


def schema_name(body: dict) -> str:
    if api_of(body) == "chat":
        return body["response_format"]["json_schema"]["name"]
    return body["text"]["format"]["name"]


def purpose(body: dict) -> str:
    return {"memory_merge": "merge", "memory_judgement": "judge"}.get(schema_name(body), "summary")


def user_message(body: dict) -> str:
    messages = body["messages"] if api_of(body) == "chat" else body["input"]
    [user] = [message for message in messages if message["role"] == "user"]
    return user["content"]


def system_text(body: dict) -> str:
    if api_of(body) == "chat":
        return "\n".join(message["content"] for message in body["messages"] if message["role"] == "system")
    return body["instructions"]


def memory_texts(body: dict) -> list[str]:
    """The memory texts a request carries, read back from its data block."""
    document = parse_data_block(user_message(body))
    if "entries" in document:
        return [entry["text"] for entry in document["entries"]]
    return [document["entry"]["text"]]


def faithful_text(body: dict) -> str:
    """What a good model answers: every sentence that says something the ones before it do not
    (merge: each fact once), or only the sentences that carry a fact (summary)."""
    kept: list[str] = []
    for text in memory_texts(body):
        for sentence in split_sentences(strip_merge_markers(text)):
            has_fact = any(extract_facts(sentence).by_kind[kind] for kind in ("url", "email", "date", "identifier", "number"))
            said = bool(kept) and not uncovered([sentence], KeptText.of([" ".join(kept)]))
            if not said and (purpose(body) == "merge" or has_fact):
                kept.append(sentence)
    return " ".join(kept)


def faithful(body: dict, _number: int = 0) -> Answer:
    """A good model's answer. Asked to judge a pair it says "related", which changes no memory
    (tests of the judge script their verdicts)."""
    if purpose(body) == "judge":
        return answer(VERDICT_FIELD, "related", output_tokens=4)
    field_name = MERGE_FIELD if purpose(body) == "merge" else SUMMARY_FIELD
    return answer(field_name, faithful_text(body))


class StubLLMServer(RecordingServer):
    """Serves the APIs in `apis` ("responses", "chat"); any other path gets a 404, as from a
    server that does not implement that API."""

    def __init__(self, responder: Responder = faithful, apis: tuple[str, ...] = ("responses", "chat")) -> None:
        super().__init__(responder, tuple(PATHS[api] for api in apis))

    @property
    def responder(self) -> Responder:
        script = self._script
        return lambda body, number: render(script(body, number), body)

    @responder.setter
    def responder(self, script) -> None:
        self._script = script


StubResponsesServer = StubLLMServer  # its former name, which other tests' support still uses


def unused_port_url() -> str:
    """A base URL where nothing listens: every connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"

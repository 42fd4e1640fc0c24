"""`curation-pipeline mcp --namespace TENANT:NAMESPACE`, driven by the official SDK's own client
over stdio: remember and recall go through the store; an unknown namespace, an empty text or an
oversized one is a tool error with a clear message, and nothing is written."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.slow  # a subprocess per test


def _server(key: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "curation_pipeline.cli.main", "mcp", "--namespace", key, *extra],
        env={**os.environ}, cwd=os.getcwd())


async def _calls(key: str, calls: list[tuple[str, dict]], *extra: str) -> list:
    async with Client(_server(key, *extra)) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert tools == ["recall", "remember"]
        return [await client.call_tool(name, arguments) for name, arguments in calls]


def _text(result) -> str:
    return " ".join(block.text for block in result.content)


def test_remember_then_recall_over_stdio(db):
    remembered, recalled = asyncio.run(_calls("acme:support-bot", [
        ("remember", {"text": "Dana prefers email over phone calls."}),
        ("recall", {"query": "How should I contact Dana? email", "k": 3}),
    ], "--create"))
    assert not remembered.is_error and not recalled.is_error, (_text(remembered), _text(recalled))
    node_id = remembered.structured_content["id"]
    [memory] = recalled.structured_content["memories"]
    assert (memory["id"], memory["text"], memory["recall_count"]) == (node_id, "Dana prefers email over phone calls.", 1)
    assert db.execute("SELECT recall_count FROM memory_access").fetchone()[0] == 1


def test_refused_calls_are_tool_errors_and_write_nothing(db):
    unknown = asyncio.run(_calls("acme:nobody", [("remember", {"text": "A memory."}), ("recall", {"query": "x"})]))
    assert all(result.is_error for result in unknown)
    assert "unknown namespace acme:nobody" in _text(unknown[0]) and "nothing was remembered" in _text(unknown[0])
    empty, oversized = asyncio.run(_calls("acme:support-bot", [
        ("remember", {"text": "   "}), ("remember", {"text": "x" * 20_001})], "--create"))
    assert empty.is_error and "the text is empty" in _text(empty)
    assert oversized.is_error and "20,001 characters long; at most 20,000" in _text(oversized)
    assert db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM namespace_activity WHERE namespace = 'nobody'").fetchone()[0] == 0

"""`curation-pipeline mcp --namespace TENANT:NAMESPACE`: one namespace's memory as a stdio MCP
server (the official `mcp` SDK), with the tools `remember` and `recall`.

Each tool goes through MemoryClient (service/memory_client.py): remember embeds with the
configured embedder and inserts (the namespace's activity clock moves by trigger), recall ranks
current memory, records the accesses and moves the clock. A refused call (unknown namespace,
empty or oversized text, bad k) is a tool error whose message says why; nothing is written.
Standard output carries the protocol: nothing else is printed there.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from curation_pipeline.config.settings import Settings
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.service.memory_client import MemoryClient, MemoryInputError

INSTRUCTIONS = (
    "Long-term memory of one agent namespace ({key}). Call `recall` with a question before you answer from"
    " memory; call `remember` with one self-contained fact, preference or event worth keeping. A curator merges"
    " duplicates, summarizes and marks stale what nobody recalls, and keeps every change undoable."
)


def _iso(moment) -> str | None:
    return moment.isoformat() if moment is not None else None


def build_server(client: MemoryClient) -> MCPServer:
    key = partition_key(client.tenant_id, client.namespace)
    server = MCPServer("curation-pipeline-memory", instructions=INSTRUCTIONS.format(key=key))

    @server.tool(description=f"Store a memory in {key}: one self-contained fact, preference or event. "
                             "Returns the new memory's id.")
    def remember(text: str, memory_type: str = "semantic") -> dict[str, Any]:
        try:
            client.require_namespace()
            node_id = client.remember(text, memory_type=memory_type)
        except MemoryInputError as error:
            raise ToolError(f"nothing was remembered: {error}") from None
        return {"id": node_id, "namespace": key}

    @server.tool(description=f"Recall the memories of {key} closest to a question, best first, with each one's "
                             "confidence and the older memories it superseded.")
    def recall(query: str, k: int = 5) -> dict[str, Any]:
        try:
            client.require_namespace()
            found = client.recall(query, k)
        except MemoryInputError as error:
            raise ToolError(f"nothing was recalled: {error}") from None
        return {"namespace": key, "memories": [
            {"id": memory.id, "text": memory.text, "memory_type": memory.memory_type,
             "confidence": memory.confidence, "similarity": round(memory.similarity, 4),
             "recall_count": memory.recall_count, "last_recalled_at": _iso(memory.last_recalled_at),
             "created_at": _iso(memory.created_at),
             "supersedes": [{"id": older.id, "text": older.text} for older in memory.supersedes]}
            for memory in found]}

    return server


def serve(settings: Settings, tenant_id: str, namespace: str, *, create: bool = False) -> None:
    """Serve the namespace over stdio until the client closes the connection."""
    with MemoryClient(tenant_id, namespace, settings=settings) as client:
        if create:
            client.make_namespace()
        build_server(client).run("stdio")

"""What the CLI's `history` reads: a node's changes, the nodes merged into it, and a text search
that finds a node's id. The CLI reaches the store only through these functions."""

from __future__ import annotations

from dataclasses import dataclass

from curation_pipeline.core.known_namespaces import UnknownNamespaceError
from curation_pipeline.core.partition_keys import parse_partition_key
from curation_pipeline.store import history as store
from curation_pipeline.store.database import open_connection


class EmptySearchError(ValueError):
    """`history --search ''`: a search needs some text (the CLI prints it as one line)."""


@dataclass(frozen=True)
class NodeHistory:
    node_id: str
    revisions: list[dict]
    merged: list[dict]
    now: dict  # the node as it is now (store.history.node_now)
    recall: dict | None = None  # stored recall and recorded accesses (store/history.node_recall)


def node_history(database_url: str, node_id: str) -> NodeHistory | None:
    """The node as it is now, its revisions and the nodes merged into it, or None for an
    unknown node."""
    with open_connection(database_url) as conn:
        now = store.node_now(conn, node_id)
        if now is None:
            return None
        return NodeHistory(node_id, store.node_history(conn, node_id), store.merged_into(conn, node_id), now,
                           store.node_recall(conn, node_id))


def search_nodes(database_url: str, text: str, partition: str | None = None) -> list[dict]:
    """Nodes whose text contains `text`, in one namespace (TENANT:NAMESPACE) or all."""
    if not text.strip():
        raise EmptySearchError("history --search needs some text to look for")
    tenant_id, namespace = parse_partition_key(partition) if partition else (None, None)
    with open_connection(database_url) as conn:
        if partition and not store.namespace_has_nodes(conn, tenant_id, namespace):
            raise UnknownNamespaceError(f"no memory nodes in namespace {partition}")
        return store.search_nodes(conn, text.strip(), tenant_id, namespace)

"""The agents' side of the store: write a memory, recall (sql/016's `recall`), touch the clock.

Plain SQL any agent could send itself: an insert moves the namespace's clock by trigger
(sql/015), recall records the accesses and moves it too.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from pgvector import Vector

RECALL_COLUMNS = ("id", "pointer_summary", "memory_type", "confidence", "similarity", "score",
                  "recall_count", "last_recalled_at", "created_at", "supersedes")


def insert_memory(conn: psycopg.Connection, tenant_id: str, namespace: str, text: str, *,
                  embedding: Sequence[float] | None, model: str | None, memory_type: str) -> str:
    """A new node, as an agent writes it; its id."""
    return conn.execute(
        "INSERT INTO memory_nodes (tenant_id, namespace, memory_type, pointer_summary, embedding, embedding_model)"
        " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id::text",
        (tenant_id, namespace, memory_type, text, None if embedding is None else Vector(list(embedding)), model),
    ).fetchone()[0]


def recall(conn: psycopg.Connection, tenant_id: str, namespace: str, query: Sequence[float], *, k: int,
           memory_types: Sequence[str] | None = None, confidences: Sequence[str] | None = None,
           model: str | None = None, recency_weight: float = 0.0, record: bool = True) -> list[dict]:
    """The k closest current memories (see sql/016), each with what it superseded:
    `supersedes` is a list of {id, text} of the older nodes it replaced. `record=False` records
    no access and moves no clock (an operator's look)."""
    rows = conn.execute(
        "SELECT * FROM recall(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (tenant_id, namespace, Vector(list(query)), k,
         None if memory_types is None else list(memory_types),
         None if confidences is None else list(confidences), model, recency_weight, record),
    ).fetchall()
    found = [dict(zip(RECALL_COLUMNS, row)) for row in rows]
    older = [node_id for row in found for node_id in row["supersedes"]]
    texts = dict(conn.execute(
        "SELECT id, pointer_summary FROM memory_nodes WHERE id = ANY(%s::uuid[])", (older,)
    ).fetchall()) if older else {}
    for row in found:
        row["id"] = str(row["id"])
        row["supersedes"] = [{"id": str(node_id), "text": texts.get(node_id)} for node_id in row["supersedes"]]
    return found


def touch(conn: psycopg.Connection, tenant_id: str, namespace: str) -> None:
    """An interaction with no row: the namespace's clock moves (sql/015)."""
    conn.execute("SELECT note_activity(ARRAY[%s], ARRAY[%s])", (tenant_id, namespace))


def namespace_known(conn: psycopg.Connection, tenant_id: str, namespace: str) -> bool:
    """The namespace holds memory or has its activity row (an operator made it, or an agent wrote)."""
    return conn.execute(
        "SELECT EXISTS (SELECT FROM namespace_activity WHERE tenant_id = %(t)s AND namespace = %(n)s)"
        " OR EXISTS (SELECT FROM memory_nodes WHERE tenant_id = %(t)s AND namespace = %(n)s)",
        {"t": tenant_id, "n": namespace},
    ).fetchone()[0]


def make_namespace(conn: psycopg.Connection, tenant_id: str, namespace: str) -> None:
    """Give the namespace its activity row (no interaction recorded) if it has none."""
    conn.execute("INSERT INTO namespace_activity (tenant_id, namespace) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                 (tenant_id, namespace))

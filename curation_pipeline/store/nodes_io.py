"""Bulk insert and export of memory nodes (import, seed, export).

Inserts go through one COPY in one transaction: either every row lands or none does.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import numpy as np
import psycopg
from pgvector import Vector

from curation_pipeline.core.jsonl_rows import MEMORY_NODE_COLUMNS


class ImportConflictError(ValueError):
    """Rows that are valid on their own but clash with what the store already holds."""


def insert_nodes(conn: psycopg.Connection, rows: Sequence[dict], *, now: datetime | None = None) -> int:
    """Insert normalised rows (see jsonl_format) and register their namespaces; returns the count.

    Call inside a transaction. Ids the file leaves out are generated here so every row has the
    same columns; an id that already exists in the store is refused with the ids named.
    """
    if not rows:
        return 0
    now = now or datetime.now(UTC)
    prepared = [_complete(row, now) for row in rows]
    ids = [row["id"] for row in prepared]
    clashes = conn.execute(
        "SELECT id::text FROM memory_nodes WHERE id = ANY(%s::uuid[]) ORDER BY id LIMIT 10", (ids,)
    ).fetchall()
    if clashes:
        raise ImportConflictError(
            "these ids already exist in the memory store: " + ", ".join(row[0] for row in clashes)
        )
    _check_merge_targets(conn, prepared)
    columns = ", ".join(MEMORY_NODE_COLUMNS)
    with conn.cursor().copy(f"COPY memory_nodes ({columns}) FROM STDIN") as copy:
        for row in prepared:
            copy.write_row([row[column] for column in MEMORY_NODE_COLUMNS])
    _register_namespaces(conn, prepared, now)
    return len(prepared)


def _complete(row: dict, now: datetime) -> dict:
    completed = {column: row.get(column) for column in MEMORY_NODE_COLUMNS}
    completed["id"] = str(row.get("id") or uuid.uuid4())
    if row.get("merged_into") is not None:
        completed["merged_into"] = str(row["merged_into"])
    completed["created_at"] = row.get("created_at") or now
    completed["updated_at"] = row.get("updated_at") or completed["created_at"]
    if row.get("embedding") is not None:
        completed["embedding"] = Vector(np.asarray(row["embedding"], dtype=np.float32))
    return completed


def _check_merge_targets(conn: psycopg.Connection, rows: Sequence[dict]) -> None:
    """merged_into must name a node of the same tenant and namespace, in the file or the store."""
    in_file = {row["id"]: (row["tenant_id"], row["namespace"]) for row in rows}
    targets = {row["merged_into"] for row in rows if row.get("merged_into")}
    stored = dict(
        (node_id, (tenant, namespace))
        for node_id, tenant, namespace in conn.execute(
            "SELECT id::text, tenant_id, namespace FROM memory_nodes WHERE id = ANY(%s::uuid[])",
            (list(targets - set(in_file)),),
        ).fetchall()
    )
    for row in rows:
        target = row.get("merged_into")
        if target is None:
            continue
        home = in_file.get(target) or stored.get(target)
        if home is None:
            raise ImportConflictError(f"node {row['id']} is merged_into {target}, which does not exist")
        if home != (row["tenant_id"], row["namespace"]):
            raise ImportConflictError(
                f"node {row['id']} is merged_into {target}, which belongs to another namespace"
            )


def _register_namespaces(conn: psycopg.Connection, rows: Sequence[dict], now: datetime) -> None:
    """Make sure each namespace has its idle-activity row, with an epoch at least its nodes' and
    the import counted as an interaction."""
    epochs: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row["tenant_id"], row["namespace"])
        epochs[key] = max(epochs.get(key, 0), int(row.get("epoch") or 0))
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace, current_epoch, last_interaction_at)
        SELECT t, n, e, %s FROM unnest(%s::text[], %s::text[], %s::bigint[]) AS p(t, n, e)
        ON CONFLICT (tenant_id, namespace) DO UPDATE
            SET current_epoch = greatest(namespace_activity.current_epoch, EXCLUDED.current_epoch),
                -- New memories are activity: the triggers curate the namespace after an import.
                last_interaction_at = greatest(namespace_activity.last_interaction_at,
                                               EXCLUDED.last_interaction_at)
        """,
        (now, [k[0] for k in epochs], [k[1] for k in epochs], list(epochs.values())),
    )


def upsert_namespace_activity(conn: psycopg.Connection, rows: Sequence[dict]) -> None:
    """Set the epoch and last interaction of namespaces (used by the seed corpus)."""
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace, current_epoch, last_interaction_at)
        SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::timestamptz[])
        ON CONFLICT (tenant_id, namespace) DO UPDATE
            SET current_epoch = EXCLUDED.current_epoch,
                last_interaction_at = EXCLUDED.last_interaction_at
        """,
        (
            [row["tenant_id"] for row in rows], [row["namespace"] for row in rows],
            [row["current_epoch"] for row in rows], [row["last_interaction_at"] for row in rows],
        ),
    )


def iter_nodes(
    conn: psycopg.Connection, *, tenant_id: str | None = None, namespace: str | None = None
) -> Iterator[dict]:
    """Every node (archived ones included), streamed with a server-side cursor."""
    columns = ", ".join(MEMORY_NODE_COLUMNS)
    with conn.cursor(name="export_nodes", binary=True) as cursor:
        cursor.execute(
            f"SELECT {columns} FROM memory_nodes"
            " WHERE (%(t)s::text IS NULL OR tenant_id = %(t)s)"
            " AND (%(n)s::text IS NULL OR namespace = %(n)s)"
            " ORDER BY tenant_id, namespace, created_at, id",
            {"t": tenant_id, "n": namespace},
        )
        for record in cursor:
            row = dict(zip(MEMORY_NODE_COLUMNS, record))
            if row["embedding"] is not None:
                row["embedding"] = row["embedding"].to_list()
            yield row


def list_namespaces(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """Every (tenant, namespace) that has nodes or an activity row."""
    return conn.execute(
        "SELECT tenant_id, namespace FROM memory_nodes"
        " UNION SELECT tenant_id, namespace FROM namespace_activity ORDER BY 1, 2"
    ).fetchall()

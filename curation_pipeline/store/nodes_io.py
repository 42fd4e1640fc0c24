"""Bulk insert and export of memory nodes (import, seed, export).

Inserts go through one COPY in the caller's transaction: either every row lands or none does.
Rows are streamed into the COPY, so a large import never holds the whole file in memory.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from itertools import islice

import numpy as np
import psycopg
from pgvector import Vector

from curation_pipeline.core.import_links import NodeLink
from curation_pipeline.core.jsonl_rows import MEMORY_NODE_COLUMNS
from curation_pipeline.store.writer_mark import mark_curator_write

RowsDone = Callable[[int], None]
"""Called with the number of rows written since the last call (progress reporting)."""

_REPORT_EVERY = 1000
_IDS_PER_QUERY = 50_000


class ImportConflictError(ValueError):
    """Rows that are valid on their own but clash with what the store already holds."""


def insert_nodes(
    conn: psycopg.Connection, rows: Sequence[dict], *, now: datetime | None = None,
    on_rows: RowsDone | None = None,
) -> int:
    """Insert normalised rows (see core/jsonl_rows) and register their namespaces; returns the count.

    Call inside a transaction. Ids the rows leave out are generated here so every row has the
    same columns; an id that already exists in the store is refused with the ids named, and so
    is a ``merged_into`` that names no node of the row's namespace.
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
    return write_nodes(conn, prepared, now=now, on_rows=on_rows)


def write_nodes(
    conn: psycopg.Connection, rows: Iterable[dict], *, now: datetime | None = None,
    on_rows: RowsDone | None = None,
) -> int:
    """COPY already checked rows into memory_nodes, streamed, and register their namespaces.

    Call inside a transaction. One COPY statement: a row may be merged into a row that comes
    later (foreign keys are checked at the end of the statement). An id that an agent inserted
    meanwhile is an ``ImportConflictError`` (the transaction then writes nothing).
    """
    now = now or datetime.now(UTC)
    # The rows keep their epochs and the clocks move once, below (not by the agents' trigger).
    mark_curator_write(conn)
    epochs: dict[tuple[str, str], int] = {}
    count = pending = 0
    columns = ", ".join(MEMORY_NODE_COLUMNS)
    try:
        # Binary COPY: a vector travels as its float32 bytes instead of 384 numbers in text,
        # which made formatting them the import's slowest step.
        with conn.cursor() as cursor, \
                cursor.copy(f"COPY memory_nodes ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([_COLUMN_TYPES[column] for column in MEMORY_NODE_COLUMNS])
            for row in rows:
                completed = _complete(row, now)
                copy.write_row([completed[column] for column in MEMORY_NODE_COLUMNS])
                key = (completed["tenant_id"], completed["namespace"])
                epochs[key] = max(epochs.get(key, 0), int(completed.get("epoch") or 0))
                count += 1
                pending += 1
                if on_rows is not None and pending == _REPORT_EVERY:
                    on_rows(pending)
                    pending = 0
    except psycopg.errors.UniqueViolation as error:
        raise ImportConflictError(
            f"a node with one of these ids was written to the store meanwhile ({error.diag.message_detail}); "
            "nothing was imported: run the import again"
        ) from None
    except psycopg.errors.ForeignKeyViolation as error:
        raise ImportConflictError(
            f"a merge or supersession target is missing from the store ({error.diag.message_detail}); "
            "nothing was imported"
        ) from None
    if on_rows is not None and pending:
        on_rows(pending)
    _register_namespaces(conn, epochs, now)
    return count


_COLUMN_TYPES = {
    "id": "uuid", "tenant_id": "text", "namespace": "text", "memory_type": "text",
    "pointer_summary": "text", "embedding": "vector", "embedding_model": "text",
    "base_utility": "float8", "heat": "float8", "pinned": "bool", "recall_count": "int4",
    "last_recalled_at": "timestamptz", "epoch": "int8", "confidence": "text",
    "archived_at": "timestamptz", "merged_into": "uuid", "created_at": "timestamptz",
    "updated_at": "timestamptz", "superseded_by": "uuid", "valid_until": "timestamptz",
}
_TIMESTAMP_COLUMNS = [column for column, kind in _COLUMN_TYPES.items() if kind == "timestamptz"]


def _complete(row: dict, now: datetime) -> dict:
    """Every column, with the values binary COPY needs: ``uuid.UUID`` ids (generated when
    missing), a float32 ``Vector``, aware timestamps (a naive one is UTC, as the UTC session
    would read it)."""
    completed = {column: row.get(column) for column in MEMORY_NODE_COLUMNS}
    completed["id"] = _as_uuid(row.get("id") or uuid.uuid4())
    for link in ("merged_into", "superseded_by"):
        if row.get(link) is not None:
            completed[link] = _as_uuid(row[link])
    completed["created_at"] = row.get("created_at") or now
    completed["updated_at"] = row.get("updated_at") or completed["created_at"]
    for column in _TIMESTAMP_COLUMNS:
        value = completed[column]
        if value is not None and value.tzinfo is None:
            completed[column] = value.replace(tzinfo=UTC)
    embedding = row.get("embedding")
    if embedding is not None and not isinstance(embedding, Vector):
        completed["embedding"] = Vector(np.asarray(embedding, dtype=np.float32))
    return completed


def _as_uuid(value: uuid.UUID | str) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _check_merge_targets(conn: psycopg.Connection, rows: Sequence[dict]) -> None:
    """merged_into must name a node of the same tenant and namespace, in the rows or the store."""
    in_rows = {row["id"]: (row["tenant_id"], row["namespace"]) for row in rows}
    targets = {row["merged_into"] for row in rows if row.get("merged_into")}
    stored = dict(
        (node_id, (tenant, namespace))
        for node_id, tenant, namespace in conn.execute(
            "SELECT id, tenant_id, namespace FROM memory_nodes WHERE id = ANY(%s::uuid[])",
            (list(targets - set(in_rows)),),
        ).fetchall()
    )
    for row in rows:
        target = row.get("merged_into")
        if target is None:
            continue
        home = in_rows.get(target) or stored.get(target)
        if home is None:
            raise ImportConflictError(f"node {row['id']} is merged_into {target}, which does not exist")
        if home != (row["tenant_id"], row["namespace"]):
            raise ImportConflictError(
                f"node {row['id']} is merged_into {target}, which belongs to another namespace"
            )


IMPORT_LOCK_TIMEOUT = "120s"  # a step's write transaction lasts seconds; beyond this, fail cleanly


def load_links(conn: psycopg.Connection, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, NodeLink]:
    """The stored nodes among ``ids``, plus every node on their keeper chains (what
    ``core/import_links.check_links`` needs to know about the store), each **locked FOR SHARE**
    until the caller's transaction ends: no run can archive, re-point or move a node the
    import checked before the import commits (a run that tries waits for it, then sees the
    imported rows). Locking returns each row as it is after any change committed meanwhile, so
    what is checked is what is locked. Call inside the import's transaction."""
    conn.execute(f"SET LOCAL lock_timeout = '{IMPORT_LOCK_TIMEOUT}'")
    links: dict[uuid.UUID, NodeLink] = {}
    iterator = iter(ids)
    try:
        while chunk := list(islice(iterator, _IDS_PER_QUERY)):
            _lock_chains(conn, chunk, links)
    except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected) as error:
        raise ImportConflictError(
            f"nodes this import merges into are being changed by a curation run ({error.diag.message_primary});"
            " nothing was imported: run it again"
        ) from None
    return links


def _lock_chains(conn: psycopg.Connection, ids: list[uuid.UUID], links: dict[uuid.UUID, NodeLink]) -> None:
    """Lock `ids` and their keeper chains into `links`: the chains are found without locks (one
    recursive query), then locked; a link that changed before the lock was granted leads to
    nodes not yet locked, which the next round locks (usually there is no next round)."""
    wanted = [node_id for node_id in ids if node_id not in links]
    tried: set[uuid.UUID] = set()  # (a target the store does not have is not looked for twice)
    while wanted:
        tried.update(wanted)
        # UNION (not UNION ALL) stops at a node already seen, so even a cycle in the store ends.
        chain = [row[0] for row in conn.execute(
            """
            WITH RECURSIVE chain AS (
                SELECT id, merged_into FROM memory_nodes WHERE id = ANY(%s::uuid[])
                UNION
                SELECT m.id, m.merged_into FROM memory_nodes m JOIN chain c ON m.id = c.merged_into
            )
            SELECT id FROM chain
            """,
            (wanted,),
        )]
        locked = conn.execute(
            "SELECT id, tenant_id, namespace, archived_at IS NOT NULL, merged_into FROM memory_nodes"
            " WHERE id = ANY(%s::uuid[]) ORDER BY id FOR SHARE",
            ([node_id for node_id in chain if node_id not in links],),
        ).fetchall()
        for node_id, tenant_id, namespace, archived, merged_into in locked:
            links[node_id] = NodeLink(node_id, tenant_id, namespace, archived, merged_into)
        wanted = sorted({link.merged_into for link in links.values() if link.merged_into is not None
                         and link.merged_into not in links and link.merged_into not in tried})


def _register_namespaces(
    conn: psycopg.Connection, epochs: dict[tuple[str, str], int], now: datetime
) -> None:
    """Make sure each namespace has its idle-activity row, with an epoch at least its nodes' and
    the import counted as an interaction."""
    if not epochs:
        return
    conn.execute(
        """
        INSERT INTO namespace_activity (tenant_id, namespace, current_epoch, last_interaction_at)
        SELECT t, n, e, %s FROM unnest(%s::text[], %s::text[], %s::bigint[]) AS p(t, n, e)
        ON CONFLICT (tenant_id, namespace) DO UPDATE
            SET current_epoch = greatest(namespace_activity.current_epoch, EXCLUDED.current_epoch),
                -- New memories are activity: the triggers curate the namespace after an import.
                last_interaction_at = greatest(namespace_activity.last_interaction_at,
                                               EXCLUDED.last_interaction_at),
                -- An import into a retired namespace (`namespaces remove`) brings it back.
                retired_at = NULL, retired_xmax = NULL
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


def count_nodes(
    conn: psycopg.Connection, *, tenant_id: str | None = None, namespace: str | None = None
) -> int:
    """How many nodes ``iter_nodes`` yields with the same filter."""
    return conn.execute(
        "SELECT count(*) FROM memory_nodes"
        " WHERE (%(t)s::text IS NULL OR tenant_id = %(t)s)"
        " AND (%(n)s::text IS NULL OR namespace = %(n)s)",
        {"t": tenant_id, "n": namespace},
    ).fetchone()[0]


# What JSON Lines cannot carry of what the store holds: NaN and infinite numbers (JSON has
# neither) and timestamps outside the years 1 to 9999 in UTC, infinity included (ISO 8601 as
# Python and the import read it). Export names each such value (`unexportable`) instead of
# failing on it.
_IN_JSON_RANGE = "{column} IS NULL OR ({column} >= '0001-01-01 00:00:00+00' AND {column} < '10000-01-01 00:00:00+00')"
_FINITE = "{column} NOT IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)"


def _exportable(column: str) -> str:
    """The column as export selects it: NULL when JSON cannot carry its value (named instead)."""
    kind = _COLUMN_TYPES[column]
    if kind == "timestamptz":
        return f"CASE WHEN {_IN_JSON_RANGE.format(column=column)} THEN {column} END"
    if kind == "float8":
        return f"CASE WHEN {_FINITE.format(column=column)} THEN {column} END"
    return column


def _unexportable() -> str:
    """An array naming each value of the row that JSON cannot carry (`created_at is infinity`)."""
    checks = [
        f"CASE WHEN NOT ({(_IN_JSON_RANGE if kind == 'timestamptz' else _FINITE).format(column=column)})"
        f" THEN '{column} is ' || {column}::text END"
        for column, kind in _COLUMN_TYPES.items() if kind in ("timestamptz", "float8")
    ]
    return f"array_remove(ARRAY[{', '.join(checks)}], NULL)"


# The nodes as export writes them: a node's recall is its stored columns plus its recorded
# accesses (sql/016), so the file carries every recall and importing it back (into the stored
# columns) gives the same export.
_WITH_RECALL = (
    "(SELECT " + ", ".join(f"m.{column}" for column in MEMORY_NODE_COLUMNS if column not in ("recall_count", "last_recalled_at"))
    + ", r.recall_count, r.last_recalled_at"
    " FROM memory_nodes m JOIN memory_recall r ON r.id = m.id) AS memory_nodes"
)


def iter_nodes(
    conn: psycopg.Connection, *, tenant_id: str | None = None, namespace: str | None = None
) -> Iterator[dict]:
    """Every node (archived ones included), streamed with a server-side cursor, with its recall
    (stored plus recorded accesses). A row holding a value JSON cannot carry lists it under `unexportable` (that value itself is None)."""
    columns = ", ".join(_exportable(column) for column in MEMORY_NODE_COLUMNS)
    with conn.cursor(name="export_nodes", binary=True) as cursor:
        cursor.execute(
            f"SELECT {columns}, {_unexportable()} FROM {_WITH_RECALL}"
            " WHERE (%(t)s::text IS NULL OR tenant_id = %(t)s)"
            " AND (%(n)s::text IS NULL OR namespace = %(n)s)"
            " ORDER BY tenant_id, namespace, created_at, id",
            {"t": tenant_id, "n": namespace},
        )
        for record in cursor:
            row = dict(zip(MEMORY_NODE_COLUMNS, record))
            row["unexportable"] = list(record[-1])
            if row["embedding"] is not None:
                row["embedding"] = row["embedding"].to_list()
            yield row

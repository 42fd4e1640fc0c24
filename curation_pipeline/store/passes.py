"""The incremental passes' bookkeeping (steps 2 and 6b): their saved state and what changed since.

Decisions are pure (core/steps/incremental.py); this module only reads and writes them. Each step
keeps its state in `namespace_activity` columns named by its prefix (`columns`, from the step's
service module: "consolidate", "associate").
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import psycopg
from psycopg import sql

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.core.steps.incremental import PassStart, PassState, start_pass
from curation_pipeline.store.graph import past_cursor

_PREFIXES = ("consolidate", "associate")  # the migrations made these columns


def _columns(prefix: str) -> dict[str, sql.Identifier]:
    if prefix not in _PREFIXES:
        raise ValueError(f"no pass-state columns {prefix}_* in namespace_activity (known: {', '.join(_PREFIXES)})")
    return {name: sql.Identifier(f"{prefix}_{name}")
            for name in ("txid", "node_id", "pending", "complete", "params")}


def load_pass_state(conn: psycopg.Connection, scope: Scope, columns: str) -> PassState:
    c = _columns(columns)
    row = conn.execute(
        sql.SQL("SELECT {txid}::text::bigint, {node_id}::text, {pending}::text[]::bigint[], {complete}, {params}"
                " FROM namespace_activity WHERE tenant_id = %s AND namespace = %s").format(**c),
        (scope.tenant_id, scope.namespace),
    ).fetchone()
    if row is None:
        return PassState(SyncPosition(), False, None)
    return PassState(SyncPosition(row[0], row[1], tuple(row[2])), row[3], row[4])


def changed_active_ids(
    conn: psycopg.Connection, scope: Scope, position: SyncPosition, limit: int
) -> tuple[list[str], int, list[int], tuple[int, str] | None]:
    """Active nodes with a vector written since `position`, with the snapshot's xmax and running
    transactions (one statement, so all of them come from the same snapshot), and, when more
    than `limit` were written past the position's cursor, the (transaction id, node id) of the
    last one taken: the rest wait for the next pass (the nodes of pending transactions are
    always taken: they are few, and must not hold the cursor back). A node without a vector
    can't be compared yet; getting one is a write, so it shows up here then."""
    row = conn.execute(
        f"""
        WITH snap AS (SELECT pg_current_snapshot() AS s),
        -- A range of memory_nodes_content_changes in (content_txid, id) order from the cursor
        -- that stops after limit + 1 (graph.past_cursor: wherever the cursor stands).
        past_cursor AS (
            SELECT id, content_txid FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s AND {past_cursor(position.node_id, "content_txid")}
              AND archived_at IS NULL AND embedding IS NOT NULL
            ORDER BY memory_nodes.content_txid, memory_nodes.id
            LIMIT %(limit)s + 1
        )
        SELECT (SELECT pg_snapshot_xmax(s)::text::bigint FROM snap),
               (SELECT array(SELECT x::text::bigint FROM pg_snapshot_xip(s) AS x) FROM snap),
               array(SELECT id::text FROM past_cursor ORDER BY content_txid, id),
               array(SELECT content_txid::text::bigint FROM past_cursor ORDER BY content_txid, id),
               array(SELECT id::text FROM memory_nodes
                     WHERE tenant_id = %(t)s AND namespace = %(n)s
                       AND content_txid = ANY(%(pending)s::text[]::xid8[])
                       AND archived_at IS NULL AND embedding IS NOT NULL)
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "txid": str(position.txid), "node": position.node_id,
         "pending": [str(txid) for txid in position.pending], "limit": limit},
    ).fetchone()
    xmax, in_progress, ids, txids, from_pending = row
    capped_at = (txids[limit - 1], ids[limit - 1]) if len(ids) > limit else None
    return sorted(set(ids[:limit]) | set(from_pending)), xmax, list(in_progress), capped_at


def begin_pass(conn: psycopg.Connection, scope: Scope, columns: str, params: Mapping, *,
               max_changed: int) -> PassStart:
    """Read the saved state and what changed since (one snapshot), and decide how to search:
    at most `max_changed` changed nodes this pass (the oldest writes), the rest the next."""
    state = load_pass_state(conn, scope, columns)
    changed, xmax, in_progress, capped_at = changed_active_ids(conn, scope, state.position, max_changed)
    return start_pass(state, params, changed, snapshot_xmax=xmax, in_progress=in_progress, capped_at=capped_at)


def save_pass_state(conn: psycopg.Connection, scope: Scope, columns: str, state: PassState) -> None:
    c = _columns(columns)
    conn.execute(
        sql.SQL("""
        INSERT INTO namespace_activity (tenant_id, namespace, {txid}, {node_id}, {pending}, {complete}, {params})
        VALUES (%s, %s, %s::text::xid8, %s::uuid, %s::text[]::xid8[], %s, %s::jsonb)
        ON CONFLICT (tenant_id, namespace) DO UPDATE
            SET {txid} = EXCLUDED.{txid}, {node_id} = EXCLUDED.{node_id}, {pending} = EXCLUDED.{pending},
                {complete} = EXCLUDED.{complete}, {params} = EXCLUDED.{params}
        """).format(**c),
        (scope.tenant_id, scope.namespace, str(state.position.txid), state.position.node_id,
         [str(txid) for txid in state.position.pending], state.complete,
         json.dumps(None if state.params is None else dict(state.params))),
    )


def chains_checked(conn: psycopg.Connection, scope: Scope) -> bool:
    """Whether step 2 has looked for broken keeper chains in the whole namespace once
    (sql/010); after that it looks only at what was written since its last pass."""
    row = conn.execute(
        "SELECT consolidate_chains_checked FROM namespace_activity WHERE tenant_id = %s AND namespace = %s",
        (scope.tenant_id, scope.namespace),
    ).fetchone()
    return bool(row and row[0])


def mark_chains_checked(conn: psycopg.Connection, scope: Scope) -> None:
    conn.execute(
        "INSERT INTO namespace_activity (tenant_id, namespace, consolidate_chains_checked) VALUES (%s, %s, true)"
        " ON CONFLICT (tenant_id, namespace) DO UPDATE SET consolidate_chains_checked = true",
        (scope.tenant_id, scope.namespace),
    )

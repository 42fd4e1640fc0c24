"""The one way the curator changes a memory node: guarded by row_version, with a revision.

Every update goes through `update_nodes`, a single set-based statement that
  - only touches rows of the step's own tenant and namespace,
  - only touches rows whose row_version is still the one the step loaded (an agent that edited a
    row meanwhile wins; the row is left for the next cycle), and
  - writes the row's previous and new state to node_revisions in the same statement, hence the
    same transaction, so any change can be explained and undone, and
  - marks its transaction as the curator's, so it does not move the activity clocks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from curation_pipeline.core.scope import Scope
from curation_pipeline.store.writer_mark import mark_curator_write


@dataclass(frozen=True)
class PlanColumn:
    """An extra per-row value for the SET clause, available as p.<name> (cast to pg_type)."""

    name: str
    pg_type: str
    values: Sequence


def lock_current_versions(
    conn: psycopg.Connection, scope: Scope, ids: Sequence[str]
) -> dict[str, int]:
    """Lock the given active-or-archived rows of the scope and return their current row_version.

    Holding the row locks until commit means the versions cannot move between this check and the
    writes that follow, which lets a step apply several statements (a merge touches two rows)
    all-or-nothing per planned item.
    """
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT id::text, row_version FROM memory_nodes"
        " WHERE id = ANY(%s::uuid[]) AND tenant_id = %s AND namespace = %s FOR UPDATE",
        (list(ids), scope.tenant_id, scope.namespace),
    ).fetchall()
    return dict(rows)


def update_nodes(
    conn: psycopg.Connection,
    scope: Scope,
    *,
    ids: Sequence[str],
    row_versions: Sequence[int],
    reasons: Sequence[Mapping],
    assignments: str,
    columns: Sequence[PlanColumn] = (),
) -> list[str]:
    """Apply `assignments` (SQL over alias n = the row, p = its plan entry) to the given rows.

    Returns the ids actually changed; the others changed since they were loaded and are skipped.
    `assignments` and the column names and types are the caller's constants; every value (the
    plan arrays, tenant, namespace, run and step) travels as a parameter, never as SQL text, so
    a name like `x%y` or `o'brien` is just data.
    """
    if not ids:
        return []
    mark_curator_write(conn)  # the clocks are the agents' (sql/015)
    names = ["id", "row_version", "reason", *(column.name for column in columns)]
    types = ["uuid", "bigint", "jsonb", *(column.pg_type for column in columns)]
    arrays = [
        list(ids),
        [int(version) for version in row_versions],
        [json.dumps(reason, default=str) for reason in reasons],
        *(list(column.values) for column in columns),
    ]
    params = {f"plan_{index}": values for index, values in enumerate(arrays)}
    params.update(tenant=scope.tenant_id, namespace=scope.namespace, run_id=scope.run_id, step=scope.step)
    unnest_args = sql.SQL(", ").join(
        sql.SQL("{}::{}[]").format(sql.Placeholder(f"plan_{index}"), sql.SQL(pg_type))
        for index, pg_type in enumerate(types)
    )
    statement = sql.SQL(
        """
        WITH plan AS (
            SELECT * FROM unnest({unnest_args}) AS p({names})
        ),
        previous AS (
            SELECT n.* FROM memory_nodes n JOIN plan p ON p.id = n.id
        ),
        changed AS (
            UPDATE memory_nodes n SET {assignments}
            FROM plan p
            WHERE n.id = p.id AND n.row_version = p.row_version
              AND n.tenant_id = {tenant} AND n.namespace = {namespace}
            RETURNING n.*
        )
        INSERT INTO node_revisions (run_id, step, tenant_id, namespace, node_id, before, after, reason)
        SELECT {run_id}, {step}, c.tenant_id, c.namespace, c.id,
               to_jsonb(b) - 'last_txid' - 'content_txid' - 'inserted_at',
               to_jsonb(c) - 'last_txid' - 'content_txid' - 'inserted_at', p.reason
        FROM changed c JOIN previous b ON b.id = c.id JOIN plan p ON p.id = c.id
        RETURNING node_id::text
        """
    ).format(
        unnest_args=unnest_args,
        names=sql.SQL(", ").join(sql.Identifier(name) for name in names),
        assignments=sql.SQL(assignments),
        tenant=sql.Placeholder("tenant"),
        namespace=sql.Placeholder("namespace"),
        run_id=sql.Placeholder("run_id"),
        step=sql.Placeholder("step"),
    )
    return [row[0] for row in conn.execute(statement, params).fetchall()]


def run_changes(conn: psycopg.Connection, run_id: str, step: str | None = None) -> list[dict]:
    """The node revisions a run wrote (optionally one step's), oldest first, with embeddings
    reduced to whether one was there: enough to show and compare, small enough to keep."""
    rows = conn.execute(
        """
        SELECT node_id::text, step, reason,
               (before - 'embedding') || jsonb_build_object('embedding', before->'embedding' <> 'null'),
               (after - 'embedding') || jsonb_build_object('embedding', after->'embedding' <> 'null')
        FROM node_revisions
        WHERE run_id = %s AND (%s::text IS NULL OR step = %s)
        ORDER BY id
        """,
        (run_id, step, step),
    ).fetchall()
    return [
        {"node_id": node_id, "step": step_name, "reason": reason, "before": before, "after": after}
        for node_id, step_name, reason, before, after in rows
    ]


def run_vertices(conn: psycopg.Connection, run_id: str, step: str | None = None) -> list[dict]:
    """The graph vertices a run created or changed (optionally one step's), oldest first;
    `before` is None for a vertex the run created."""
    rows = conn.execute(
        """
        SELECT vertex_id::text, step, before, after FROM graph_revisions
        WHERE run_id = %s AND (%s::text IS NULL OR step = %s) AND kind = 'vertex'
        ORDER BY id
        """,
        (run_id, step, step),
    ).fetchall()
    return [{"node_id": node_id, "step": step_name, "before": before, "after": after}
            for node_id, step_name, before, after in rows]


def run_edges(conn: psycopg.Connection, run_id: str, step: str | None = None) -> list[dict]:
    """The graph edges a run added (optionally one step's), oldest first."""
    rows = conn.execute(
        """
        SELECT after->>'label', after->>'source_id', after->>'target_id', after->'properties', step
        FROM graph_revisions
        WHERE run_id = %s AND (%s::text IS NULL OR step = %s) AND kind = 'edge' AND before IS NULL
        ORDER BY id
        """,
        (run_id, step, step),
    ).fetchall()
    return [{"label": label, "source": source, "target": target, "properties": properties, "step": step_name}
            for label, source, target, properties, step_name in rows]


def run_signals(conn: psycopg.Connection, run_id: str) -> list[dict]:
    """The training signals a run created."""
    rows = conn.execute(
        "SELECT memory_id::text, signal_type, content_snapshot FROM training_signals"
        " WHERE run_id = %s ORDER BY id",
        (run_id,),
    ).fetchall()
    return [{"memory_id": m, "signal_type": t, "content_snapshot": c} for m, t, c in rows]

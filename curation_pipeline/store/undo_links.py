"""The facts core/undo_links.py needs to decide which node restores an undo holds back: where
each node concerned stands now, since when (which revision linked it to its keeper), and
whether a keeper's text is still the one it had before the undone run (or, when the undone
run was an undo that unlinked a node, the one it recorded then). Read inside the undo's
transaction, under the namespace's lease.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import psycopg

from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.core.scope import Scope
from curation_pipeline.core.undo_links import Link, NodeNow


def run_start(conn: psycopg.Connection, scope: Scope, run_id: str) -> int:
    """The undone run's first node revision id in the namespace."""
    return conn.execute(
        "SELECT min(id) FROM node_revisions WHERE run_id = %s AND tenant_id = %s AND namespace = %s",
        (run_id, scope.tenant_id, scope.namespace),
    ).fetchone()[0]


def nodes_now(
    conn: psycopg.Connection, scope: Scope, restored: Mapping[str, Link], start: int
) -> dict[str, NodeNow]:
    """NodeNow of every node the rule looks at: those about to be restored, their keepers
    afterwards, and every node that points at one of them now. A node's state when the run
    started is the `before` of its first revision since (`start`: the run's first revision id in
    the namespace; runs of one namespace never interleave), else the `after` of its last one. A
    node written after that first revision's transaction began (an import, an agent's insert)
    had no state then: that `before` is its state when written."""
    keepers = {link.keeper for link in restored.values() if link.keeper is not None}
    rows = conn.execute(
        """
        WITH concerned AS (
            SELECT id FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s
              AND (id = ANY(%(ids)s::uuid[]) OR merged_into = ANY(%(restored)s::uuid[]))
        )
        SELECT m.id::text, m.archived_at IS NOT NULL, m.merged_into::text,
               pre.state IS NOT NULL, pre.state->>'archived_at' IS NOT NULL, pre.state->>'merged_into',
               m.pointer_summary IS NOT DISTINCT FROM coalesce(pre.state->>'pointer_summary', m.pointer_summary),
               linked.run_id,
               m.inserted_at <= (SELECT created_at FROM node_revisions WHERE id = %(start)s),
               m.pointer_summary
        FROM memory_nodes m
        JOIN concerned USING (id)
        LEFT JOIN LATERAL (
            SELECT coalesce(
                (SELECT r.before FROM node_revisions r
                 WHERE r.node_id = m.id AND r.id >= %(start)s ORDER BY r.id LIMIT 1),
                (SELECT r.after FROM node_revisions r
                 WHERE r.node_id = m.id AND r.id < %(start)s ORDER BY r.id DESC LIMIT 1)) AS state
        ) pre ON true
        -- the run that last pointed the node at its present keeper
        LEFT JOIN LATERAL (
            SELECT r.run_id FROM node_revisions r
            WHERE r.node_id = m.id AND m.archived_at IS NOT NULL
              AND r.after->>'merged_into' = m.merged_into::text
              AND (r.before->>'archived_at' IS NULL
                   OR r.before->>'merged_into' IS DISTINCT FROM r.after->>'merged_into')
            ORDER BY r.id DESC LIMIT 1
        ) linked ON true
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "start": start,
         "ids": sorted(set(restored) | keepers), "restored": sorted(restored)},
    ).fetchall()
    return {
        node_id: NodeNow(
            link=_link(archived, keeper),
            link_before_run=_link(was_archived, was_keeper) if known else None,
            text_as_before_run=text_kept,
            linked_by=linked_by,
            existed_before_run=existed,
            text=text,
        )
        for node_id, archived, keeper, known, was_archived, was_keeper, text_kept, linked_by, existed, text in rows
    }


def _link(archived: bool, keeper: str | None) -> Link:
    return Link(archived, keeper if archived else None)


def elsewhere(conn: psycopg.Connection, scope: Scope, ids: Collection[str]) -> dict[str, str]:
    """The nodes among `ids` that are in another tenant or namespace now -> their partition key."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT id::text, tenant_id, namespace FROM memory_nodes WHERE id = ANY(%s::uuid[])"
        " AND (tenant_id, namespace) <> (%s, %s)",
        (sorted(ids), scope.tenant_id, scope.namespace),
    ).fetchall()
    return {node_id: partition_key(tenant, namespace) for node_id, tenant, namespace in rows}


def text_digests(conn: psycopg.Connection, ids: Collection[str]) -> dict[str, str]:
    """md5 of each node's text now."""
    if not ids:
        return {}
    return dict(conn.execute(
        "SELECT id::text, md5(pointer_summary) FROM memory_nodes WHERE id = ANY(%s::uuid[])", (sorted(ids),)
    ).fetchall())


def keeper_text_kept(conn: psycopg.Connection, run_id: str, keepers: Mapping[str, str]) -> dict[str, bool]:
    """For nodes the undone run (an undo) unlinked from the keeper given: whether that keeper's
    text is still the one the run recorded when it unlinked them. Others are left out."""
    if not keepers:
        return {}
    rows = conn.execute(
        """
        SELECT DISTINCT ON (r.node_id) r.node_id::text, r.reason->>'unlinked_from',
               k.id IS NOT NULL AND md5(k.pointer_summary) = r.reason->>'keeper_text_md5'
        FROM node_revisions r
        LEFT JOIN memory_nodes k ON k.id = (r.reason->>'unlinked_from')::uuid
        WHERE r.run_id = %s AND r.node_id = ANY(%s::uuid[]) AND r.reason ? 'keeper_text_md5'
        ORDER BY r.node_id, r.id
        """,
        (run_id, sorted(keepers)),
    ).fetchall()
    return {node_id: kept for node_id, unlinked_from, kept in rows if keepers.get(node_id) == unlinked_from}

"""Undo a run in one namespace: restore what it changed, from its recorded revisions.

Everything an undo does is itself recorded under the undo's own id (node_revisions,
graph_revisions, signal_revisions), so an undo can be undone like any run. Nothing is deleted:
signals the run created are marked withdrawn and edges it added are marked retracted.
Call inside one transaction, with the namespace's lease held.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import psycopg

from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.core.scope import Scope
from curation_pipeline.core.undo_links import Hold, Link, Restore, held_back
from curation_pipeline.core.undo_outcome import undo_status
from curation_pipeline.core.undo_policy import RECENCY, decide, restore_target, run_effect
from curation_pipeline.store import undo_links
from curation_pipeline.store.graph import reproject_vertices
from curation_pipeline.store.graph_age import follow_step
from curation_pipeline.store.revisions import PlanColumn, update_nodes

UNDO_STEP = "undo"
# The node columns a run can change and an undo restores (never identity or bookkeeping).
NODE_COLUMNS = (
    "memory_type", "pointer_summary", "embedding", "embedding_model", "base_utility", "heat",
    "pinned", "recall_count", "last_recalled_at", "epoch", "confidence", "archived_at",
    "merged_into", "superseded_by", "valid_until",
)
EDGE_COLUMNS = ("retracted_at", "retracted_by")
# Edges that draw a relation between two nodes, which the nodes' columns say holds or not.
RELATION_LABELS = ("merged_into", "supersedes")
SIGNAL_COLUMNS = ("status", "withdrawn_at", "withdrawn_by")


@dataclass
class UndoReport:
    undone_run_id: str
    undo_id: str
    tenant_id: str
    namespace: str
    nodes_restored: list[str] = field(default_factory=list)
    nodes_forced: list[str] = field(default_factory=list)
    forced: list[dict] = field(default_factory=list)  # every row restored over a change since
    held: list[dict] = field(default_factory=list)  # left alone: restoring would strand a merge
    nodes_already_undone: int = 0
    conflicts: list[dict] = field(default_factory=list)  # left alone: what changed since
    moved: list[dict] = field(default_factory=list)  # left alone: moved to another namespace since
    signals_withdrawn: int = 0
    signals_restored: int = 0
    signals_not_withdrawn: int = 0  # consumed already, or a newer pending signal exists
    vertices_restored: int = 0
    edges_retracted: int = 0
    edges_restored: int = 0
    merges_vetoed: int = 0  # undone merges and supersessions step 2 will not make again
    vetoes_lifted: int = 0  # vetoes of an undone undo
    # The namespace's health as the undo left it (service/undo.py; core/health.py, state_health).
    health: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def status(self) -> str:
        """`success`, `partial` or `nothing` (core/undo_outcome.py)."""
        return undo_status(self.as_dict())


def namespaces_changed_by(conn: psycopg.Connection, run_id: str) -> list[tuple[str, str]]:
    """Every (tenant, namespace) in which the run changed something."""
    return conn.execute(
        """
        SELECT tenant_id, namespace FROM node_revisions WHERE run_id = %(r)s
        UNION SELECT tenant_id, namespace FROM graph_revisions WHERE run_id = %(r)s
        UNION SELECT tenant_id, namespace FROM signal_revisions WHERE run_id = %(r)s
        UNION SELECT tenant_id, namespace FROM training_signals WHERE run_id = %(r)s
        ORDER BY 1, 2
        """,
        {"r": run_id},
    ).fetchall()


def runs_starting_with(conn: psycopg.Connection, prefix: str, limit: int = 10) -> list[str]:
    """Up to `limit` ids of the curation runs, previews and undos recorded in the store whose id
    starts with `prefix` (an id the Dagster UI shows cut to 8 characters), sorted."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return [row[0] for row in conn.execute(
        "SELECT DISTINCT run_id FROM activity_log WHERE run_id LIKE %s ORDER BY run_id LIMIT %s",
        (pattern, limit),
    ).fetchall()]


def undo_in_namespace(
    conn: psycopg.Connection, *, run_id: str, undo_id: str, tenant_id: str, namespace: str,
    merge_step: str, force: bool = False, graph_backend: str = "auto",
) -> UndoReport:
    """Undo what run `run_id` changed in the namespace; the merges and supersessions it made
    (revisions of `merge_step`) that are undone are vetoed."""
    report = UndoReport(run_id, undo_id, tenant_id, namespace)
    scope = Scope(run_id=undo_id, tenant_id=tenant_id, namespace=namespace, step=UNDO_STEP)
    _undo_nodes(conn, scope, run_id, force, report)
    _undo_signals(conn, scope, run_id, force, report)
    _undo_vertices(conn, scope, run_id, report)
    _undo_edges(conn, scope, run_id, force, report)
    _update_vetoes(conn, scope, run_id, merge_step, report)
    follow_step(conn, undo_id, UNDO_STEP, tenant_id, namespace, graph_backend)  # the AGE graph, if that is the backend
    if report.status == "nothing":
        return report  # an undo with nothing to do is no undo: no record to list, or to undo
    conn.execute(
        "INSERT INTO activity_log (tenant_id, namespace, action, run_id, metadata)"
        " VALUES (%s, %s, 'curation_undo', %s, %s::jsonb)",
        # Its health is added once the namespace is counted (service/undo.py): none yet.
        (tenant_id, namespace, undo_id, json.dumps({k: v for k, v in report.as_dict().items() if k != "health"})),
    )
    return report


def _later_runs(conn, node_id: str, run_id: str, columns) -> list[str]:
    """The curation runs (or undos) that changed these columns of the node after `run_id` did,
    oldest first; none means someone outside the curator (an agent) changed them."""
    return [row[0] for row in conn.execute(
        """
        SELECT r.run_id FROM node_revisions AS r
        WHERE r.node_id = %(node)s::uuid AND r.run_id <> %(run)s
          AND r.id > (SELECT max(id) FROM node_revisions WHERE node_id = %(node)s::uuid AND run_id = %(run)s)
          AND EXISTS (SELECT 1 FROM unnest(%(columns)s::text[]) AS c(name)
                      WHERE r.before -> c.name IS DISTINCT FROM r.after -> c.name)
        GROUP BY r.run_id ORDER BY min(r.id)
        """,
        {"node": node_id, "run": run_id, "columns": list(columns)},
    ).fetchall()]


def undone_by(conn: psycopg.Connection, run_id: str) -> list[str]:
    """The undos recorded for the run, oldest first."""
    return [row[0] for row in conn.execute(
        "SELECT run_id FROM activity_log WHERE action = 'curation_undo' AND metadata->>'undone_run_id' = %s"
        " GROUP BY run_id ORDER BY min(id)",
        (run_id,),
    ).fetchall()]


def _run_effects(conn, table: str, key: str, scope: Scope, run_id: str, columns, kind: str | None = None):
    """{key: RunEffect} for every row the run changed in `table` (see undo.run_effect).

    A row the run created has no `before` (NULL): it is returned as {key: None}."""
    kind_filter = "AND kind = %(kind)s" if kind else ""
    rows = conn.execute(
        f"""
        SELECT {key}::text, array_agg(before ORDER BY id), array_agg(after ORDER BY id)
        FROM {table}
        WHERE run_id = %(run)s AND tenant_id = %(t)s AND namespace = %(n)s {kind_filter}
        GROUP BY {key}
        """,
        {"run": run_id, "t": scope.tenant_id, "n": scope.namespace, "kind": kind},
    ).fetchall()
    return {
        row_key: None if befores[0] is None else run_effect(list(zip(befores, afters)), columns)
        for row_key, befores, afters in rows
    }


def _undo_nodes(conn, scope: Scope, run_id: str, force: bool, report: UndoReport) -> None:
    changes = _run_effects(conn, "node_revisions", "node_id", scope, run_id, NODE_COLUMNS)
    if not changes:
        return
    current = {
        row[0]: (row[1], row[2])
        for row in conn.execute(
            "SELECT id::text, to_jsonb(m) - 'last_txid' - 'content_txid' - 'inserted_at', row_version FROM memory_nodes m"
            " WHERE id = ANY(%s::uuid[]) ORDER BY id FOR UPDATE",
            (list(changes),),
        ).fetchall()
    }
    # A row an agent moved to another tenant or namespace since is that namespace's now: an undo
    # writes only in the namespace the run curated, even forced. Listed, left alone.
    for node_id in sorted(changes):
        now = current[node_id][0]
        if (now["tenant_id"], now["namespace"]) != (scope.tenant_id, scope.namespace):
            report.moved.append({"kind": "node", "id": node_id,
                                 "moved_to": partition_key(now["tenant_id"], now["namespace"])})
            del changes[node_id]
    restores = {}
    undone = _recency_undone_before(conn, scope, run_id, [
        node_id for node_id, effect in changes.items() if effect.changed and set(effect.changed) <= set(RECENCY)])
    for node_id, effect in sorted(changes.items()):
        decision = decide(effect, current[node_id][0], force=force, undone_before=node_id in undone)
        if decision.action == "already_undone":
            report.nodes_already_undone += 1
        elif decision.action == "conflict":
            report.conflicts.append(
                {"kind": "node", "id": node_id, "changed_since": list(decision.changed_since),
                 "changed_by": _later_runs(conn, node_id, run_id, decision.changed_since)}
            )
        elif decision.action == "restore":
            restores[node_id] = (effect, decision)
    held = _held_back(conn, scope, run_id, restores, current)
    unlinked = _unlinked_keepers(conn, restores, current)
    ids, versions, targets, columns, reasons = [], [], [], [], []
    for node_id, (effect, decision) in restores.items():
        if node_id in held:
            hold = held[node_id]
            report.held.append({"kind": "node", "id": node_id, "reason": hold.reason,
                                "nodes": hold.nodes, "runs": hold.runs,
                                **({"moved_to": hold.moved_to} if hold.moved_to else {})})
            continue
        ids.append(node_id)
        versions.append(current[node_id][1])
        targets.append(json.dumps(restore_target(effect, current[node_id][0])))
        columns.append(json.dumps(list(decision.columns)))
        reasons.append({"undo_of": run_id, "columns": list(decision.columns), "forced": decision.forced,
                        **unlinked.get(node_id, {})})
        if decision.forced:
            report.nodes_forced.append(node_id)
            report.forced.append({"kind": "node", "id": node_id, "changed_since": list(decision.changed_since)})
    assignments = ", ".join(
        f"{column} = CASE WHEN p.columns ? '{column}'"
        f" THEN (jsonb_populate_record(NULL::memory_nodes, p.target)).{column} ELSE n.{column} END"
        for column in NODE_COLUMNS
    )
    report.nodes_restored = update_nodes(
        conn, scope, ids=ids, row_versions=versions, reasons=reasons, assignments=assignments,
        columns=[PlanColumn("target", "jsonb", targets), PlanColumn("columns", "jsonb", columns)],
    )


def _recency_undone_before(conn, scope: Scope, run_id: str, node_ids: list[str]) -> set[str]:
    """Of these nodes (the run changed only their recency, which agents change too), those an
    undo of the run restored last: the latest revision of the node by the run or by an undo in
    its chain (an undo of it, an undo of that undo, ...) is an odd number of undos away."""
    if not node_ids:
        return set()
    rows = conn.execute(
        """
        WITH RECURSIVE chain (run_id, depth) AS (
            SELECT %(run)s::text, 0
            UNION
            SELECT r.run_id, c.depth + 1 FROM node_revisions r JOIN chain c ON r.reason->>'undo_of' = c.run_id
            WHERE r.tenant_id = %(t)s AND r.namespace = %(n)s
        )
        SELECT DISTINCT ON (r.node_id) r.node_id::text, c.depth
        FROM node_revisions r JOIN chain c USING (run_id)
        WHERE r.node_id = ANY(%(ids)s::uuid[])
        ORDER BY r.node_id, r.id DESC
        """,
        {"run": run_id, "t": scope.tenant_id, "n": scope.namespace, "ids": node_ids},
    ).fetchall()
    return {node_id for node_id, depth in rows if depth % 2 == 1}


def _link_after(effect, decision, now: dict) -> Link:
    source = {column: (effect.before if column in decision.columns else now).get(column)
              for column in ("archived_at", "merged_into")}
    archived = source["archived_at"] is not None
    return Link(archived, source["merged_into"] if archived else None)


def _held_back(conn, scope: Scope, run_id: str, restores: dict, current: dict) -> dict[str, Hold]:
    """The restores that would leave a merged node's text in no active node (core/undo_links.py),
    or point a node into another namespace (a keeper or successor moved there since)."""
    if not restores:
        return {}
    links = {node_id: _link_after(effect, decision, current[node_id][0])
             for node_id, (effect, decision) in restores.items()}
    recorded = undo_links.keeper_text_kept(conn, run_id, {
        node_id: link.keeper for node_id, link in links.items() if link.keeper is not None})
    planned = {
        node_id: Restore(
            link=links[node_id],
            relinks=bool({"archived_at", "merged_into"} & set(decision.columns)),
            rewrites_text=("pointer_summary" in decision.columns
                           and effect.before.get("pointer_summary") != current[node_id][0].get("pointer_summary")),
            text=(effect.before if "pointer_summary" in decision.columns else current[node_id][0]).get("pointer_summary"),
            text_changed_since_run=effect.after.get("pointer_summary") != current[node_id][0].get("pointer_summary"),
            keeper_text_kept=recorded.get(node_id),
        )
        for node_id, (effect, decision) in restores.items()
    }
    now = undo_links.nodes_now(conn, scope, links, undo_links.run_start(conn, scope, run_id))
    held = held_back(planned, now)
    # Linking a node to a keeper that moved to another namespace would cross namespaces.
    moved_keepers = undo_links.elsewhere(conn, scope, {
        link.keeper for node_id, link in links.items() if link.keeper is not None and planned[node_id].relinks})
    for node_id, link in links.items():
        if node_id not in held and planned[node_id].relinks and link.keeper in moved_keepers:
            held[node_id] = Hold("keeper_moved", [link.keeper], moved_to=moved_keepers[link.keeper])
    # Likewise superseding a node again by a successor moved to another namespace since (the
    # cycle that took the supersession back because of that move is what such an undo undoes).
    successors = {node_id: effect.before.get("superseded_by") for node_id, (effect, decision) in restores.items()
                  if "superseded_by" in decision.columns and effect.before.get("superseded_by") is not None}
    moved_successors = undo_links.elsewhere(conn, scope, set(successors.values()))
    for node_id, successor in successors.items():
        if node_id not in held and successor in moved_successors:
            held[node_id] = Hold("successor_moved", [successor], moved_to=moved_successors[successor])
    return held


def _unlinked_keepers(conn, restores: dict, current: dict) -> dict[str, dict]:
    """For each node this undo takes out of its keeper: that keeper and a digest of its text now,
    recorded in the node's revision, so that undoing this undo knows whether linking the node
    back would find the keeper's text as it was (core/undo_links.py, keeper_changed)."""
    keepers = {}
    for node_id, (effect, decision) in restores.items():
        now = current[node_id][0]
        keeper = now.get("merged_into") if now.get("archived_at") is not None else None
        if keeper is not None and _link_after(effect, decision, now) != Link(True, keeper):
            keepers[node_id] = keeper
    digests = undo_links.text_digests(conn, set(keepers.values()))
    return {node_id: {"unlinked_from": keeper, "keeper_text_md5": digests[keeper]}
            for node_id, keeper in keepers.items() if keeper in digests}


def _undo_signals(conn, scope: Scope, run_id: str, force: bool, report: UndoReport) -> None:
    # Signals the run created: withdraw the ones still pending (consumed ones are history).
    created = conn.execute(
        "SELECT id, status FROM training_signals WHERE run_id = %s AND tenant_id = %s AND namespace = %s",
        (run_id, scope.tenant_id, scope.namespace),
    ).fetchall()
    pending = [signal_id for signal_id, status in created if status == "pending"]
    report.signals_withdrawn = len(_set_signals(
        conn, scope, pending, [{"status": "withdrawn", "withdrawn_by": scope.run_id}] * len(pending),
        ["pending"] * len(pending), now_for_withdrawn=True,
    ))
    report.signals_not_withdrawn += sum(1 for _, status in created if status == "consumed")
    # Signals whose status the run changed (the run was an undo): put them back.
    changes = _run_effects(conn, "signal_revisions", "signal_id", scope, run_id, SIGNAL_COLUMNS)
    if not changes:
        return
    current = {
        str(row[0]): row[1]
        for row in conn.execute(
            "SELECT id, jsonb_build_object('status', status, 'withdrawn_at', withdrawn_at,"
            " 'withdrawn_by', withdrawn_by) FROM training_signals WHERE id = ANY(%s::bigint[])"
            " ORDER BY id FOR UPDATE",
            ([int(signal_id) for signal_id in changes],),
        ).fetchall()
    }
    restore_ids, restore_to, expected = [], [], []
    for signal_id, effect in sorted(changes.items()):
        decision = decide(effect, current[signal_id], force=force)
        if decision.action == "restore":
            restore_ids.append(int(signal_id))
            restore_to.append(effect.before)
            expected.append(current[signal_id]["status"])
            if decision.forced:
                report.forced.append({"kind": "signal", "id": signal_id,
                                      "changed_since": list(decision.changed_since)})
        elif decision.action == "conflict":
            report.conflicts.append({"kind": "signal", "id": signal_id,
                                     "changed_since": list(decision.changed_since)})
    restored = _set_signals(conn, scope, restore_ids, restore_to, expected)
    report.forced = [row for row in report.forced
                     if row["kind"] != "signal" or int(row["id"]) in restored]
    report.signals_restored = len(restored)
    report.signals_not_withdrawn += len(restore_ids) - len(restored)


def _set_signals(
    conn, scope: Scope, ids: Sequence[int], states: Sequence[dict], expected_status: Sequence[str],
    *, now_for_withdrawn: bool = False,
) -> list[int]:
    """Set signals' status fields, recording each change. Skipped: a signal whose status is no
    longer the one decided on (a consumer took it meanwhile), and one that would become a second
    pending signal for its node (the unique rule for pending signals)."""
    if not ids:
        return []
    rows = conn.execute(
        """
        WITH plan AS (
            SELECT * FROM unnest(%(ids)s::bigint[], %(states)s::jsonb[], %(expected)s::text[])
                AS p(id, state, expected_status)
        ),
        previous AS (
            SELECT s.* FROM training_signals s JOIN plan USING (id)
        ),
        changed AS (
            UPDATE training_signals s
            SET status = p.state->>'status',
                withdrawn_by = p.state->>'withdrawn_by',
                withdrawn_at = CASE WHEN %(stamp)s THEN now()
                                    ELSE (p.state->>'withdrawn_at')::timestamptz END
            FROM plan p
            WHERE s.id = p.id AND s.tenant_id = %(t)s AND s.namespace = %(n)s
              AND s.status = p.expected_status
              AND NOT (p.state->>'status' = 'pending' AND EXISTS (
                  SELECT 1 FROM training_signals o
                  WHERE o.memory_id = s.memory_id AND o.signal_type = s.signal_type
                    AND o.source = s.source AND o.status = 'pending' AND o.id <> s.id))
            RETURNING s.*
        )
        INSERT INTO signal_revisions (run_id, signal_id, tenant_id, namespace, before, after)
        SELECT %(run)s, c.id, c.tenant_id, c.namespace,
               jsonb_build_object('status', b.status, 'withdrawn_at', b.withdrawn_at, 'withdrawn_by', b.withdrawn_by),
               jsonb_build_object('status', c.status, 'withdrawn_at', c.withdrawn_at, 'withdrawn_by', c.withdrawn_by)
        FROM changed c JOIN previous b USING (id)
        RETURNING signal_id
        """,
        {"ids": list(ids), "states": [json.dumps(state) for state in states],
         "expected": list(expected_status), "stamp": now_for_withdrawn, "t": scope.tenant_id, "n": scope.namespace, "run": scope.run_id},
    ).fetchall()
    return [row[0] for row in rows]


def _update_vetoes(conn, scope: Scope, run_id: str, merge_step: str, report: UndoReport) -> None:
    """An undone merge or supersession is vetoed, so the next cycle does not simply make it
    again; vetoes the undone run made are lifted, and those it lifted are in force again."""
    vetoed = conn.execute(
        """
        WITH undone AS (
            SELECT r.tenant_id, r.namespace, r.node_id,
                   coalesce(r.reason->>'keeper_id', r.reason->>'superseded_by')::uuid AS partner
            FROM node_revisions r
            WHERE r.run_id = %(run)s AND r.tenant_id = %(t)s AND r.namespace = %(n)s
              AND r.step = %(merge_step)s AND r.node_id = ANY(%(restored)s::uuid[])
              AND ((r.reason->>'absorbed_id')::uuid = r.node_id OR r.reason ? 'superseded_by')
        )
        INSERT INTO merge_vetoes (tenant_id, namespace, node_a, node_b, created_by)
        SELECT DISTINCT tenant_id, namespace, least(partner, node_id), greatest(partner, node_id), %(undo)s
        FROM undone
        RETURNING id
        """,
        {"undo": scope.run_id, "run": run_id, "t": scope.tenant_id, "n": scope.namespace,
         "restored": report.nodes_restored, "merge_step": merge_step},
    ).fetchall()
    report.merges_vetoed = len(vetoed)
    lifted = conn.execute(
        "UPDATE merge_vetoes SET lifted_by = %s, lifted_at = now()"
        " WHERE created_by = %s AND lifted_by IS NULL AND tenant_id = %s AND namespace = %s RETURNING id",
        (scope.run_id, run_id, scope.tenant_id, scope.namespace),
    ).fetchall()
    relaid = conn.execute(
        "UPDATE merge_vetoes SET lifted_by = NULL, lifted_at = NULL"
        " WHERE lifted_by = %s AND tenant_id = %s AND namespace = %s RETURNING id",
        (run_id, scope.tenant_id, scope.namespace),
    ).fetchall()
    report.vetoes_lifted = len(lifted)
    report.merges_vetoed += len(relaid)


def _undo_vertices(conn, scope: Scope, run_id: str, report: UndoReport) -> None:
    """Vertices mirror nodes: after the nodes are restored, set the vertices the run changed (and
    those of the nodes just restored) to what their nodes are now. Restoring a vertex's old
    content instead could leave it behind its node (a sync that mirrored an agent's edit)."""
    touched = {row[0] for row in conn.execute(
        "SELECT DISTINCT vertex_id::text FROM graph_revisions WHERE run_id = %s AND kind = 'vertex'"
        " AND tenant_id = %s AND namespace = %s",
        (run_id, scope.tenant_id, scope.namespace),
    ).fetchall()}
    touched |= set(report.nodes_restored)
    if touched:
        report.vertices_restored = reproject_vertices(
            conn, scope, sorted(touched), {"undo_of": run_id}
        )


def _undo_edges(conn, scope: Scope, run_id: str, force: bool, report: UndoReport) -> None:
    changes = _run_effects(conn, "graph_revisions", "edge_id", scope, run_id, EDGE_COLUMNS, "edge")
    if not changes:
        return
    current = dict(conn.execute(
        "SELECT id::text, to_jsonb(e) FROM graph_edges e WHERE id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE",
        ([int(edge_id) for edge_id in changes],),
    ).fetchall())
    standing = _standing_relations(conn, list(current.values()))
    apart = _vertices_apart(conn, list(current.values()))
    retract, restore, restore_to = [], [], []
    for edge_id, effect in sorted(changes.items()):
        now = current[edge_id]
        # An edge is one row per two nodes and label: made again in another namespace (both
        # nodes moved there), it is that namespace's now, like a moved node. Listed, left alone.
        if (now["tenant_id"], now["namespace"]) != (scope.tenant_id, scope.namespace):
            report.moved.append({"kind": "edge", "id": edge_id,
                                 "moved_to": partition_key(now["tenant_id"], now["namespace"])})
            continue
        relation = (now["source_id"], now["target_id"], now["label"])
        if effect is None:  # the run added it: retract it, once
            if now.get("retracted_at") is None and relation not in standing:
                retract.append(int(edge_id))
            continue
        decision = decide(effect, now, force=force)
        # A merge or supersession edge follows its relation: it stands exactly while the node is
        # archived into that keeper, or superseded by that successor (one the node undo left
        # alone keeps its edge).
        if now["label"] in RELATION_LABELS and ((effect.before.get("retracted_at") is None) != (relation in standing)):
            continue
        if decision.action == "restore" and effect.before.get("retracted_at") is None and edge_id in apart:
            # A vertex moved to another namespace since (an agent moved its node): a live edge
            # would cross namespaces, which the store refuses. Left alone, and said.
            report.conflicts.append({"kind": "edge", "id": edge_id,
                                     "changed_since": ["a vertex moved to another tenant or namespace"]})
        elif decision.action == "restore":
            restore.append(int(edge_id))
            restore_to.append(effect.before)
            if decision.forced:
                report.forced.append({"kind": "edge", "id": edge_id,
                                      "changed_since": list(decision.changed_since)})
        elif decision.action == "conflict":
            report.conflicts.append({"kind": "edge", "id": edge_id,
                                     "changed_since": list(decision.changed_since)})
    report.edges_retracted = _set_edges(
        conn, scope, run_id, retract, [{"retracted_by": scope.run_id}] * len(retract), stamp=True
    )
    report.edges_restored = _set_edges(conn, scope, run_id, restore, restore_to, stamp=False)


def _vertices_apart(conn, edges: list[dict]) -> set[str]:
    """Ids of the given edges one of whose vertices is now in another tenant or namespace than
    the edge (graph_edges_same_namespace refuses such an edge live)."""
    if not edges:
        return set()
    where = {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT node_id::text, tenant_id, namespace FROM graph_vertices WHERE node_id = ANY(%s::uuid[])",
        (sorted({edge[end] for edge in edges for end in ("source_id", "target_id")}),),
    ).fetchall()}
    return {str(edge["id"]) for edge in edges
            if any(where.get(edge[end]) != (edge["tenant_id"], edge["namespace"]) for end in ("source_id", "target_id"))}


def _standing_relations(conn, edges: list[dict]) -> set[tuple[str, str, str]]:
    """(source, target, label) of the given merge and supersession edges whose relation holds
    now: the node archived into that keeper, the older node superseded by that successor."""
    nodes = sorted({edge[end] for edge in edges if edge["label"] in RELATION_LABELS
                    for end in ("source_id", "target_id")})
    if not nodes:
        return set()
    held = set()
    for node_id, keeper, successor in conn.execute(
        "SELECT id::text, CASE WHEN archived_at IS NOT NULL THEN merged_into::text END, superseded_by::text"
        " FROM memory_nodes WHERE id = ANY(%s::uuid[])", (nodes,),
    ).fetchall():
        if keeper is not None:
            held.add((node_id, keeper, "merged_into"))
        if successor is not None:
            held.add((successor, node_id, "supersedes"))
    return held & {(edge["source_id"], edge["target_id"], edge["label"]) for edge in edges}


def _set_edges(conn, scope: Scope, run_id: str, ids: list[int], states: list[dict], *, stamp: bool) -> int:
    if not ids:
        return 0
    rows = conn.execute(
        """
        WITH plan AS (SELECT * FROM unnest(%(ids)s::bigint[], %(states)s::jsonb[]) AS p(id, state)),
        previous AS (SELECT e.* FROM graph_edges e JOIN plan USING (id)),
        changed AS (
            UPDATE graph_edges e
            SET retracted_by = p.state->>'retracted_by',
                retracted_at = CASE WHEN %(stamp)s THEN now()
                                    ELSE (p.state->>'retracted_at')::timestamptz END
            FROM plan p WHERE e.id = p.id RETURNING e.*
        )
        INSERT INTO graph_revisions (run_id, step, tenant_id, namespace, kind, edge_id, before, after, reason)
        SELECT %(run)s, %(step)s, c.tenant_id, c.namespace, 'edge', c.id, to_jsonb(b), to_jsonb(c),
               %(reason)s::jsonb
        FROM changed c JOIN previous b USING (id)
        RETURNING edge_id
        """,
        {"ids": ids, "states": [json.dumps(state) for state in states], "stamp": stamp,
         "run": scope.run_id, "step": scope.step, "reason": json.dumps({"undo_of": run_id})},
    ).fetchall()
    return len(rows)

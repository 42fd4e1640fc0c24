"""Batched writes that apply each step's plan, inside the step's transaction.

Each function takes the planner's output frame plus the loaded row versions and returns counts.
Rows an agent changed after they were loaded are skipped (counted as `skipped_concurrent`) and
picked up again next cycle.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import polars as pl
import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.store.revisions import (
    PlanColumn,
    lock_current_versions,
    update_nodes,
)


def _versions(frame: pl.DataFrame, ids: Sequence[str]) -> list[int]:
    """The loaded row versions of `ids`, in their order."""
    wanted = pl.DataFrame({"id": list(ids)}, schema={"id": pl.String})
    return wanted.join(frame.select("id", "row_version"), on="id", how="left", maintain_order="left")["row_version"].to_list()


def _llm_reason(row: dict) -> dict:
    """What the LLM pass (llm_rewrite.py) recorded for a planned row: method, model, tokens,
    guard verdict. Absent when the LLM path is off."""
    raw = row.get("llm_reason")
    return json.loads(raw) if raw else {}


def insert_reclassify_signals(
    conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame, loaded: pl.DataFrame
) -> dict:
    """Step 1: one pending `reclassify_pending` signal per planned node, never a duplicate.

    Only for nodes still as loaded: one an agent recalled or edited meanwhile gets no signal
    (and no stale snapshot of its text).
    """
    if plan.is_empty():
        return {"signals_created": 0, "skipped_concurrent": 0}
    created = conn.execute(
        """
        INSERT INTO training_signals
            (memory_id, tenant_id, namespace, signal_type, content_snapshot, source, run_id)
        SELECT m.id, m.tenant_id, m.namespace, 'reclassify_pending', p.snapshot, 'curator', %s
        FROM unnest(%s::uuid[], %s::text[], %s::bigint[]) AS p(id, snapshot, row_version)
        JOIN memory_nodes m ON m.id = p.id AND m.row_version = p.row_version
        WHERE m.tenant_id = %s AND m.namespace = %s AND m.archived_at IS NULL
        ON CONFLICT (memory_id, signal_type, source) WHERE status = 'pending' DO NOTHING
        RETURNING memory_id
        """,
        (
            scope.run_id,
            plan["memory_id"].to_list(),
            plan["content_snapshot"].to_list(),
            _versions(loaded, plan["memory_id"].to_list()),
            scope.tenant_id,
            scope.namespace,
        ),
    ).fetchall()
    return {"signals_created": len(created), "skipped_concurrent": plan.height - len(created)}


def no_merges() -> dict:
    """Step 2's counts when nothing merged."""
    return {"pairs_merged": 0, "nodes_archived": 0, "keepers_rewritten": 0,
            "repointed": 0, "omitted_sentences": 0, "skipped_concurrent": 0}


def apply_merges(
    conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame, loaded: pl.DataFrame
) -> dict:
    """Step 2: rewrite each keeper (embedding cleared) and archive the node merged into it.

    A pair is applied whole or not at all: both rows are locked and must still have the
    versions that were planned on. Archived nodes that pointed at the absorbed node are
    re-pointed at its keeper, so every archived node keeps pointing at an active one.
    """
    counts = no_merges()
    if plan.is_empty():
        return counts
    current = lock_current_versions(
        conn, scope, plan["keeper_id"].to_list() + plan["absorbed_id"].to_list()
    )
    # Both rows must still be at the versions the plan was made from (a locked row can't move).
    still_as_loaded = loaded.select("id", "row_version").join(
        pl.DataFrame(list(current.items()), schema={"id": pl.String, "row_version": pl.Int64}, orient="row"),
        on=["id", "row_version"],
    ).select("id")
    unchanged = plan.join(still_as_loaded, left_on="keeper_id", right_on="id", how="semi").join(
        still_as_loaded, left_on="absorbed_id", right_on="id", how="semi")
    counts["skipped_concurrent"] = plan.height - unchanged.height
    plan = unchanged
    if plan.is_empty():
        return counts

    reasons = [
        {"similarity": row["similarity"], "keeper_id": row["keeper_id"],
         "absorbed_id": row["absorbed_id"], "method": "offline",
         "added_sentences": row["added_sentences"], "omitted_sentences": row["omitted_sentences"],
         **_llm_reason(row)}
        for row in plan.iter_rows(named=True)
    ]
    # Reasons stay Python dicts (rows may carry different keys), filtered alongside the plan.
    rewrite_reasons = [r for r, changed in zip(reasons, plan["keeper_text_changed"]) if changed]
    rewrites = plan.filter(pl.col("keeper_text_changed"))
    keepers = rewrites["keeper_id"].to_list()
    rewritten = update_nodes(
        conn, scope,
        ids=keepers, row_versions=_versions(loaded, keepers), reasons=rewrite_reasons,
        assignments="pointer_summary = p.merged_text, embedding = NULL, embedding_model = NULL",
        columns=[PlanColumn("merged_text", "text", rewrites["merged_text"].to_list())],
    )
    absorbed = plan["absorbed_id"].to_list()
    archived = update_nodes(
        conn, scope,
        ids=absorbed, row_versions=_versions(loaded, absorbed), reasons=reasons,
        assignments="archived_at = now(), merged_into = p.keeper_id",
        columns=[PlanColumn("keeper_id", "uuid", plan["keeper_id"].to_list())],
    )
    # The rows are locked, so every planned write must have landed; anything else is a bug
    # that must roll the whole step back rather than leave half a merge.
    if len(rewritten) != len(keepers) or len(archived) != len(absorbed):
        raise RuntimeError("a locked row changed during a merge; rolling the step back")
    counts["repointed"] = _repoint_merged_into(conn, scope, plan)
    counts.update(
        pairs_merged=plan.height,
        nodes_archived=len(archived),
        keepers_rewritten=len(rewritten),
        omitted_sentences=int(plan["omitted_sentences"].sum()),
    )
    return counts


def _repoint_merged_into(conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame) -> int:
    mapping = dict(zip(plan["absorbed_id"].to_list(), plan["keeper_id"].to_list()))
    rows = conn.execute(
        "SELECT id::text, row_version, merged_into::text FROM memory_nodes"
        " WHERE merged_into = ANY(%s::uuid[]) AND tenant_id = %s AND namespace = %s FOR UPDATE",
        (list(mapping), scope.tenant_id, scope.namespace),
    ).fetchall()
    if not rows:
        return 0
    ids = [row[0] for row in rows]
    new_targets = [mapping[row[2]] for row in rows]
    changed = update_nodes(
        conn, scope,
        ids=ids, row_versions=[row[1] for row in rows],
        reasons=[{"repointed_from": row[2], "repointed_to": mapping[row[2]]} for row in rows],
        assignments="merged_into = p.keeper_id",
        columns=[PlanColumn("keeper_id", "uuid", new_targets)],
    )
    return len(changed)


# A keeper chain longer than this is not followed (a cycle an agent set by hand never ends).
_MAX_CHAIN_HOPS = 1000


def repair_chains(conn: psycopg.Connection, scope: Scope, since: SyncPosition) -> int:
    """Step 2: re-point each archived node whose keeper is itself archived to its keeper chain's
    end, when that end is an active node of the namespace (every hop in it); returns how many.

    Such a node is left by writes the curator did not make: an agent archiving a keeper, an
    import whose rows a run could not see when it re-pointed the nodes merged into what it
    archived. Only nodes written since `since` (the pass's start) and the nodes merged into
    them are looked at, so a namespace where nothing was written reads nothing; a chain with no
    active end in the namespace stays, and the no_orphaned_archives check names it.
    """
    rows = conn.execute(
        """
        WITH RECURSIVE written AS (
            SELECT id FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s AND archived_at IS NOT NULL
              AND last_txid >= %(txid)s::text::xid8
            UNION
            SELECT id FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s AND archived_at IS NOT NULL
              AND last_txid = ANY(%(pending)s::text[]::xid8[])
        ),
        suspects AS (
            SELECT id FROM written
            UNION
            SELECT m.id FROM memory_nodes m JOIN written w ON m.merged_into = w.id
            WHERE m.tenant_id = %(t)s AND m.namespace = %(n)s
        ),
        orphans AS (
            SELECT a.id, a.row_version, a.merged_into FROM memory_nodes a
            JOIN suspects USING (id)
            JOIN memory_nodes k ON k.id = a.merged_into
            WHERE a.archived_at IS NOT NULL AND k.archived_at IS NOT NULL
              AND k.tenant_id = a.tenant_id AND k.namespace = a.namespace
        ),
        chain (start, id, archived, merged_into, hops) AS (
            SELECT o.id, k.id, true, k.merged_into, 1 FROM orphans o JOIN memory_nodes k ON k.id = o.merged_into
            UNION ALL
            SELECT c.start, m.id, m.archived_at IS NOT NULL, m.merged_into, c.hops + 1
            FROM chain c JOIN memory_nodes m ON m.id = c.merged_into
            WHERE c.archived AND c.hops < %(max_hops)s AND m.tenant_id = %(t)s AND m.namespace = %(n)s
        )
        SELECT o.id::text, o.row_version, o.merged_into::text, c.id::text
        FROM orphans o JOIN chain c ON c.start = o.id AND NOT c.archived
        ORDER BY o.id
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "txid": str(since.txid),
         "pending": [str(txid) for txid in since.pending], "max_hops": _MAX_CHAIN_HOPS},
    ).fetchall()
    if not rows:
        return 0
    changed = update_nodes(
        conn, scope,
        ids=[row[0] for row in rows], row_versions=[row[1] for row in rows],
        reasons=[{"repointed_from": old, "repointed_to": end, "repair": "its keeper had been archived"}
                 for _, _, old, end in rows],
        assignments="merged_into = p.keeper_id",
        columns=[PlanColumn("keeper_id", "uuid", [row[3] for row in rows])],
    )
    return len(changed)


def apply_summaries(
    conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame, loaded: pl.DataFrame
) -> dict:
    """Step 3: replace verbose text by its summary; the full text stays in node_revisions."""
    ids = plan["id"].to_list()
    reasons = [
        {"method": "offline", "original_chars": row["original_chars"], **_llm_reason(row)}
        for row in plan.iter_rows(named=True)
    ]
    changed = update_nodes(
        conn, scope,
        ids=ids, row_versions=_versions(loaded, ids), reasons=reasons,
        assignments="pointer_summary = p.summary, embedding = NULL, embedding_model = NULL",
        columns=[PlanColumn("summary", "text", plan["summary"].to_list())],
    )
    return {"summarized": len(changed), "skipped_concurrent": len(ids) - len(changed)}


def store_embeddings(conn: psycopg.Connection, scope: Scope, batch: pl.DataFrame,
                     vectors: np.ndarray, model: str) -> list[str]:
    """Step 4: write freshly computed vectors; a row an agent changed meanwhile is skipped.

    The reason names the model, and for a re-embedding the model whose vector it replaces."""
    previous = batch["embedding_model"].to_list()
    reasons = [{"embedder": model} if batch_row_missing else {"embedder": model, "replaces": old}
               for batch_row_missing, old in zip(batch["missing"].to_list(), previous)]
    ids = batch["id"].to_list()
    return update_nodes(
        conn, scope,
        ids=ids, row_versions=batch["row_version"].to_list(), reasons=reasons,
        assignments="embedding = p.embedding, embedding_model = p.model",
        columns=[
            PlanColumn("embedding", "vector", list(vectors)),
            PlanColumn("model", "text", [model] * len(ids)),
        ],
    )


def mark_stale(conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame, loaded: pl.DataFrame) -> dict:
    """Step 5: confidence := 'stale'."""
    ids = plan["id"].to_list()
    reasons = [{"last_seen_at": seen} for seen in plan["last_seen_at"].to_list()]
    changed = update_nodes(
        conn, scope,
        ids=ids, row_versions=_versions(loaded, ids), reasons=reasons,
        assignments="confidence = 'stale'",
    )
    return {"marked_stale": len(changed), "skipped_concurrent": len(ids) - len(changed)}

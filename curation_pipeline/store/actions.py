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
    """Step 2's counts when nothing merged (or was superseded)."""
    return {"pairs_merged": 0, "nodes_archived": 0, "keepers_rewritten": 0,
            "repointed": 0, "omitted_sentences": 0, "skipped_concurrent": 0, "superseded": 0, "carried_into": 0}


def _still_as_loaded(conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame, loaded: pl.DataFrame,
                     first: str, second: str) -> pl.DataFrame:
    """The plan rows whose two nodes (columns `first`, `second`) are locked and still at the
    versions the plan was made from (a locked row can't move)."""
    current = lock_current_versions(conn, scope, plan[first].to_list() + plan[second].to_list())
    as_loaded = loaded.select("id", "row_version").join(
        pl.DataFrame(list(current.items()), schema={"id": pl.String, "row_version": pl.Int64}, orient="row"),
        on=["id", "row_version"],
    ).select("id")
    return plan.join(as_loaded, left_on=first, right_on="id", how="semi").join(
        as_loaded, left_on=second, right_on="id", how="semi")


def apply_supersessions(conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame, loaded: pl.DataFrame) -> dict:
    """Step 2: mark each older node superseded by the newer one (pair_decisions.SUPERSESSION_SCHEMA).

    The older node stays active and keeps its text; it gets confidence `superseded`, its
    successor and the time it stopped being current (the newer node's `created_at`). The newer
    node is not touched. Both rows must still be as they were compared: an agent's edit of
    either in between leaves the pair for the next cycle.
    """
    if plan.is_empty():
        return {"superseded": 0, "carried_into": 0, "skipped_concurrent": 0}
    unchanged = _still_as_loaded(conn, scope, plan, loaded, "older_id", "newer_id")
    # The successor's text as it was read: the supersession holds while it still says that
    # (core/supersession.still_supersedes, re-checked each cycle).
    texts = dict(zip(loaded["id"].to_list(), loaded["pointer_summary"].to_list())) \
        if "pointer_summary" in loaded.columns else {}
    reasons = [{"similarity": row["similarity"], "superseded_by": row["newer_id"], "method": row["method"],
                "valid_until": row["valid_until"], "changes": json.loads(row["changes"] or "[]"),
                "successor_text": texts.get(row["newer_id"])}
               for row in unchanged.iter_rows(named=True)]
    ids = unchanged["older_id"].to_list()
    changed = update_nodes(
        conn, scope, ids=ids, row_versions=_versions(loaded, ids), reasons=reasons,
        assignments="confidence = 'superseded', superseded_by = p.newer_id, valid_until = p.valid_until",
        columns=[PlanColumn("newer_id", "uuid", unchanged["newer_id"].to_list()),
                 PlanColumn("valid_until", "timestamptz", unchanged["valid_until"].to_list())],
    )
    if len(changed) != len(ids):
        raise RuntimeError("a locked row changed during a supersession; rolling the step back")
    carrying = unchanged.filter(pl.col("carried_text").is_not_null()) if "carried_text" in unchanged.columns \
        else unchanged.clear()
    if carrying.height:
        # The newer memory takes over the older clauses it did not say (core/carry.py): its
        # text changes, so its vector is computed anew by step 4.
        newer_ids = carrying["newer_id"].to_list()
        rewritten = update_nodes(
            conn, scope, ids=newer_ids, row_versions=_versions(loaded, newer_ids),
            reasons=[{"carried_from": row["older_id"], "carried": json.loads(row["carried"] or "[]")}
                     for row in carrying.iter_rows(named=True)],
            assignments="pointer_summary = p.carried_text, embedding = NULL",
            columns=[PlanColumn("carried_text", "text", carrying["carried_text"].to_list())],
        )
        if len(rewritten) != carrying.height:
            raise RuntimeError("a locked row changed during a supersession; rolling the step back")
    return {"superseded": len(changed), "carried_into": carrying.height,
            "skipped_concurrent": plan.height - unchanged.height}


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
    unchanged = _still_as_loaded(conn, scope, plan, loaded, "keeper_id", "absorbed_id")
    counts["skipped_concurrent"] = plan.height - unchanged.height
    pinned = set(loaded.filter(pl.col("pinned").fill_null(True))["id"].to_list()) if "pinned" in loaded.columns else set()
    plan = _with_recency(conn, unchanged, pinned)
    if plan.is_empty():
        return counts

    reasons = [
        {"similarity": row["similarity"], "keeper_id": row["keeper_id"],
         "absorbed_id": row["absorbed_id"], "method": "offline",
         "added_sentences": row["added_sentences"], "omitted_sentences": row["omitted_sentences"],
         **json.loads(row.get("coverage") or "{}"), **_llm_reason(row),
         # A keeper whose text the merge kept has no text change of this run to read it from:
         # its text is said here, so the run's changes table shows every keeper's text.
         **({} if row["keeper_text_changed"] else {"keeper_text": row["merged_text"]})}
        for row in plan.iter_rows(named=True)
    ]
    # The keeper is rewritten when its text changes, and takes the absorbed node's recency (its
    # recalls, its last recall if later): a recent re-statement of an old fact keeps it fresh.
    touched = (pl.col("keeper_text_changed") | (pl.col("recall_count") != pl.col("keeper_recall_count"))
               | pl.col("last_recalled_at").ne_missing(pl.col("keeper_last_recalled_at")))
    # Reasons stay Python dicts (rows may carry different keys), filtered alongside the plan.
    rewrite_reasons = [r for r, keep in zip(reasons, plan.select(touched).to_series()) if keep]
    rewrites = plan.filter(touched)
    keepers = rewrites["keeper_id"].to_list()
    rewritten = update_nodes(
        conn, scope,
        ids=keepers, row_versions=_versions(loaded, keepers), reasons=rewrite_reasons,
        assignments="""pointer_summary = p.merged_text,
            embedding = CASE WHEN p.text_changed THEN NULL ELSE n.embedding END,
            embedding_model = CASE WHEN p.text_changed THEN NULL ELSE n.embedding_model END,
            recall_count = least(p.recall_count, 2147483647), last_recalled_at = p.last_recalled_at""",
        columns=[PlanColumn("merged_text", "text", rewrites["merged_text"].to_list()),
                 PlanColumn("text_changed", "boolean", rewrites["keeper_text_changed"].to_list()),
                 PlanColumn("recall_count", "bigint", rewrites["recall_count"].to_list()),
                 PlanColumn("last_recalled_at", "timestamptz", rewrites["last_recalled_at"].to_list())],
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
    counts["repointed"] = _repoint_merged_into(conn, scope, plan) + _repoint_superseded_by(conn, scope, plan)
    counts.update(
        pairs_merged=plan.height,
        nodes_archived=len(archived),
        keepers_rewritten=int(rewrites["keeper_text_changed"].sum()),
        omitted_sentences=int(plan["omitted_sentences"].sum()),
    )
    return counts


def _with_recency(conn: psycopg.Connection, plan: pl.DataFrame, pinned: set[str]) -> pl.DataFrame:
    """The merge plan with the keeper's recency after the merge: the sum of both nodes'
    recall counts and the later of their last recalls (rows locked by the caller). A pinned
    keeper is not touched at all, its recency included.

    The keeper's stored columns take the absorbed node's whole recall, its recorded accesses
    (sql/016) included; the keeper's own accesses stay recorded beside its stored columns, so
    they are counted once. (An access recorded on the absorbed node while this transaction
    commits stays with the archived node.)"""
    ids = plan["keeper_id"].to_list() + plan["absorbed_id"].to_list()
    rows = conn.execute(
        "SELECT m.id::text, m.recall_count::bigint, m.last_recalled_at, r.recall_count::bigint, r.last_recalled_at"
        " FROM memory_nodes m JOIN memory_recall r ON r.id = m.id WHERE m.id = ANY(%s::uuid[])",
        (ids,),
    ).fetchall()
    moment = pl.Datetime("us", "UTC")
    recency = pl.DataFrame(rows, schema={"id": pl.String, "recalls": pl.Int64, "recalled": moment,
                                         "all_recalls": pl.Int64, "all_recalled": moment}, orient="row")
    keeper = recency.select(keeper_id="id", keeper_recall_count="recalls", keeper_last_recalled_at="recalled")
    absorbed = recency.select(absorbed_id="id", absorbed_recalls="all_recalls", absorbed_recalled="all_recalled")
    keeper_pinned = pl.col("keeper_id").is_in(list(pinned))
    return plan.join(keeper, on="keeper_id", how="left").join(absorbed, on="absorbed_id", how="left").with_columns(
        recall_count=pl.when(keeper_pinned).then(pl.col("keeper_recall_count"))
        .otherwise(pl.col("keeper_recall_count") + pl.col("absorbed_recalls")),
        last_recalled_at=pl.when(keeper_pinned).then(pl.col("keeper_last_recalled_at"))
        .otherwise(pl.max_horizontal("keeper_last_recalled_at", "absorbed_recalled")),
    )


def _repoint_superseded_by(conn: psycopg.Connection, scope: Scope, plan: pl.DataFrame) -> int:
    """Nodes superseded by a node this merge archives are superseded by its keeper now: the
    value that replaced theirs lives on in the keeper's text."""
    mapping = dict(zip(plan["absorbed_id"].to_list(), plan["keeper_id"].to_list()))
    rows = conn.execute(
        "SELECT id::text, row_version, superseded_by::text FROM memory_nodes"
        " WHERE superseded_by = ANY(%s::uuid[]) AND tenant_id = %s AND namespace = %s FOR UPDATE",
        (list(mapping), scope.tenant_id, scope.namespace),
    ).fetchall()
    if not rows:
        return 0
    changed = update_nodes(
        conn, scope,
        ids=[row[0] for row in rows], row_versions=[row[1] for row in rows],
        reasons=[{"superseded_by_from": row[2], "superseded_by_to": mapping[row[2]]} for row in rows],
        assignments="superseded_by = p.keeper_id",
        columns=[PlanColumn("keeper_id", "uuid", [mapping[row[2]] for row in rows])],
    )
    return len(changed)


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

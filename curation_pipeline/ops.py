"""The seven curation steps as thin Dagster ops.

Each op: parse the partition -> open one transaction -> load the candidate frame -> plan (pure,
in `curation_pipeline.steps`) -> apply in batches -> record its counts in the cycle's activity
row, all in that one transaction. The run holds the namespace's lease throughout (see
`MemoryStore`), so no other run curates the namespace meanwhile. Ops hand each other nothing but
ordering (Nothing dependencies): every step reads the fresh state of the database, so re-executing
one failed step alone needs nothing from the failed run.
"""

# No `from __future__ import annotations`: Dagster reads these annotations at definition time.
from collections.abc import Callable, Mapping

import dagster as dg
import psycopg

from curation_pipeline.change_tables import step_markdown
from curation_pipeline.config import (
    AssociateConfig,
    ConsolidateConfig,
    GraphSyncConfig,
    ReclassifyConfig,
    RevectorizeConfig,
    StaleConfidenceConfig,
    SummarizeConfig,
)
from curation_pipeline.embeddings import EmbedderUnavailable, EmbeddingError, validate_vectors
from curation_pipeline.partitions import PARTITION_TAG, parse_partition_key
from curation_pipeline.llm_resource import LLMResource
from curation_pipeline.llm_rewrite import rewrite_merges, rewrite_summaries
from curation_pipeline.resources import EmbedderResource, MemoryStore
from curation_pipeline.steps.associate import association_pairs, candidate_edges, plan_associations
from curation_pipeline.steps.consolidate import archive_allowance, consolidation_pass, select_merges
from curation_pipeline.steps.graph_sync import SyncPosition, plan_graph_sync
from curation_pipeline.steps.reclassify import plan_reclassify
from curation_pipeline.steps.revectorize import check_embedder_fits, embedding_batches, plan_embedding
from curation_pipeline.steps.stale_confidence import plan_stale_confidence
from curation_pipeline.steps.summarize import plan_summaries
from curation_pipeline.store import actions, activity, associations, candidates, graph, graph_age
from curation_pipeline.store.candidates import PassState
from curation_pipeline.store.revisions import Scope, run_changes, run_edges, run_signals

STEP_NAMES = (
    "reclassify_stale",
    "consolidate_duplicates",
    "summarize_verbose",
    "revectorize",
    "mark_stale_confidence",
    "sync_graph",
    "associate_concepts",
    "log_curation_activity",
)


def _scope(context: dg.OpExecutionContext, step: str) -> Scope:
    tenant_id, namespace = parse_partition_key(context.partition_key)
    return Scope(run_id=context.run_id, tenant_id=tenant_id, namespace=namespace, step=step)


def _run_info(run: dg.DagsterRun) -> dict:
    """What the cycle row says about the run: its partition and, for a re-execution, its parent."""
    info = {"partition": run.tags.get(PARTITION_TAG)}
    if run.parent_run_id:
        info.update(parent_run_id=run.parent_run_id, root_run_id=run.root_run_id)
    return info


def run_step(
    context: dg.OpExecutionContext,
    store: MemoryStore,
    step: str,
    work: Callable[[psycopg.Connection, Scope], Mapping],
) -> dict:
    """Run one step's work in its namespace transaction, counts recorded in the same commit.

    A failure rolls the step back whole; `record_failed_step` then notes it in the cycle row.
    """
    scope = _scope(context, step)
    with store.transaction() as conn:
        counts = dict(work(conn, scope))
        activity.record_step_result(conn, scope, counts, _run_info(context.dagster_run))
        changes = step_markdown(
            step, run_changes(conn, scope.run_id, step),
            run_signals(conn, scope.run_id) if step == "reclassify_stale" else (),
            run_edges(conn, scope.run_id, step) if step == "associate_concepts" else (),
        )
    context.add_output_metadata({
        **{key: _metadata_value(value) for key, value in counts.items()},
        "dry_run": store.dry_run,
        "changes": dg.MetadataValue.md(changes),
    })
    context.log.info(f"{step} {scope.tenant_id}/{scope.namespace}: {counts}")
    return counts


@dg.failure_hook(required_resource_keys={"memory_store"})
def record_failed_step(context: dg.HookContext) -> None:
    """Mark the cycle `partial` with the failed step and its error, whatever failed: the step's
    work, its config or a resource. Runs in the run's process right after the op fails."""
    run = context.instance.get_run_by_id(context.run_id)
    tenant_id, namespace = parse_partition_key(run.tags[PARTITION_TAG])
    scope = Scope(run_id=context.run_id, tenant_id=tenant_id, namespace=namespace, step=context.op.name)
    error = context.op_exception
    cause = (error.__cause__ or error) if error is not None else None  # unwrap Dagster's wrapper
    message = f"{type(cause).__name__}: {cause}" if cause is not None else "unknown error"
    try:
        with context.resources.memory_store.connection() as conn, conn.transaction():
            activity.record_step_failure(conn, scope, message, _run_info(run))
    except Exception as secondary:  # the database itself may be what failed
        context.log.error(f"could not record the failure of {scope.step}: {secondary}")


def _follow_in_age(conn, scope: Scope, store: MemoryStore) -> dict:
    """With the AGE graph backend, mirror the step's graph changes into AGE (same transaction)."""
    return graph_age.follow_step(conn, scope.run_id, scope.step, scope.tenant_id, scope.namespace,
                                 store.settings().graph_backend)


def _metadata_value(value):
    return value if isinstance(value, (int, float, str, bool)) else str(value)


@dg.op(out=dg.Out(dg.Nothing), tags={"step": "1"})
def reclassify_stale(
    context: dg.OpExecutionContext, config: ReclassifyConfig, memory_store: MemoryStore
) -> None:
    """Step 1: queue a `reclassify_pending` training signal for never-recalled, long-idle nodes."""

    def work(conn, scope):
        loaded = candidates.reclassify_candidates(conn, scope, config.min_epoch_lag)
        plan = plan_reclassify(loaded, min_epoch_lag=config.min_epoch_lag, cap=config.cap)
        return {"candidates": loaded.height, **actions.insert_reclassify_signals(conn, scope, plan, loaded)}

    run_step(context, memory_store, "reclassify_stale", work)


@dg.op(out=dg.Out(dg.Nothing), tags={"step": "2"})
def consolidate_duplicates(
    context: dg.OpExecutionContext, config: ConsolidateConfig, memory_store: MemoryStore,
    llm: LLMResource, embedder: EmbedderResource,
) -> None:
    """Step 2: merge near-duplicate pairs (cosine > threshold) within a namespace, memory type
    and embedding model (the configured one: other vectors wait for step 4 to re-embed them)."""

    def work(conn, scope):
        # Only the name: building an embedder loads no model, so a broken embedder fails step 4,
        # not this step and everything after it. Vectors of another model are never loaded.
        model = embedder.get().name
        params = {"similarity_threshold": config.similarity_threshold, "model": model}
        start = candidates.start_pass(conn, scope, params)
        incremental, changed = start.incremental, start.changed
        if incremental and not changed:
            candidates.save_pass_state(conn, scope, PassState(start.resume_at, True, params))
            return {"pass": "unchanged", "nodes_compared": 0, "focus_nodes": 0,
                    **actions.no_merges()}
        allowance = archive_allowance(candidates.count_active(conn, scope), config.max_archive_fraction)
        cap = min(config.cap, allowance)
        vetoed = candidates.vetoed_pairs(conn, scope)
        if incremental and len(changed) <= config.in_database_search_max_changed:
            # A few changed nodes: pgvector compares them with the rest where the vectors are,
            # instead of shipping the namespace's vectors here (cost follows the change).
            loaded, pairs = candidates.similar_pairs_in_database(
                conn, scope, sorted(changed), config.similarity_threshold, model=model
            )
            result = select_merges(loaded, pairs, cap=cap, max_chars=config.max_chars, vetoed=vetoed)
            focus_count, how = len(changed), "incremental (in database)"
        else:
            loaded, vectors = candidates.consolidation_candidates(conn, scope, model)
            focus = loaded["id"].is_in(list(changed)).to_numpy() if incremental else None
            result = consolidation_pass(
                loaded, vectors, threshold=config.similarity_threshold, cap=cap,
                max_chars=config.max_chars, focus=focus, vetoed=vetoed,
            )
            focus_count = int(focus.sum()) if focus is not None else loaded.height
            how = "incremental" if incremental else "full"
        # The LLM works between plan and apply, before any row is locked (llm_rewrite.py).
        plan, llm_counts = rewrite_merges(llm.client_for(memory_store.url(), scope), result.plan,
                                          loaded, max_chars=config.max_chars)
        counts = {**actions.apply_merges(conn, scope, plan, loaded), **llm_counts}
        candidates.save_pass_state(conn, scope, PassState(start.resume_at, result.left_over == 0, params))
        return {"pass": how, "nodes_compared": loaded.height, "focus_nodes": focus_count,
                "archive_allowance": allowance, "pairs_left_over": result.left_over, **counts}

    run_step(context, memory_store, "consolidate_duplicates", work)


@dg.op(ins={"after_merges": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing), tags={"step": "3"})
def summarize_verbose(
    context: dg.OpExecutionContext, config: SummarizeConfig, memory_store: MemoryStore,
    llm: LLMResource,
) -> None:
    """Step 3: condense verbose nodes (LLM summary the fact guard accepted; without the LLM path:
    cut at a word boundary). The full text is kept in revisions."""

    def work(conn, scope):
        loaded = candidates.verbose_candidates(conn, scope, config.min_chars)
        plan = plan_summaries(
            loaded, min_chars=config.min_chars, recall_below=config.recall_below,
            cap=config.cap, summary_chars=config.summary_chars,
        )
        client = llm.client_for(memory_store.url(), scope)
        plan, llm_counts = rewrite_summaries(
            client, plan, loaded, max_chars=client.settings.summary_chars if client else config.summary_chars,
        )
        return {"candidates": loaded.height, **actions.apply_summaries(conn, scope, plan, loaded), **llm_counts}

    run_step(context, memory_store, "summarize_verbose", work)


@dg.op(ins={"after_rewrites": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing), tags={"step": "4"})
def revectorize(
    context: dg.OpExecutionContext,
    config: RevectorizeConfig,
    memory_store: MemoryStore,
    embedder: EmbedderResource,
) -> None:
    """Step 4: embed every active node that lacks a vector, and re-embed (capped) nodes whose
    vector another model made; report what is still missing or outdated.

    Each batch is written in its own short transaction and nothing is held while the embedder
    works, so a slow embedder never keeps an agent waiting on a row. A batch is validated (width,
    NaN, infinity, zero) before it is written: a bad vector fails the step and writes nothing of
    its batch. An embedder that can't answer this cycle stops the step early, not the run.
    """

    def work(conn, scope):
        model = embedder.get()
        # Before anything is embedded: the embedder's width must be the column's.
        check_embedder_fits(model.name, model.dimension, memory_store.settings().embedding_dim)
        missing = candidates.missing_embedding_candidates(conn, scope)
        outdated = candidates.outdated_embedding_candidates(conn, scope, model.name, config.reembed_cap)
        todo = plan_embedding(missing, outdated)
        written: set[str] = set()
        attempted, unavailable = 0, None
        for batch in embedding_batches(todo, config.batch_size):
            try:
                vectors = model.embed(batch["pointer_summary"].to_list())
                validate_vectors(vectors, model.dimension, labels=batch["id"].to_list())
            except EmbedderUnavailable as error:
                unavailable = str(error)
                break
            except EmbeddingError as error:
                # The embedder names the row by its place in the batch; the operator needs the node.
                if error.row is None or batch["id"][error.row] in str(error):
                    raise
                raise EmbeddingError(f"node {batch['id'][error.row]}: {error}", row=error.row) from None
            attempted += batch.height
            with memory_store.transaction() as batch_conn:
                written.update(actions.store_embeddings(batch_conn, scope, batch, vectors, model.name))
        was_missing = set(missing["id"].to_list())
        counts = {
            "candidates": missing.height,
            "embedded": len(written & was_missing),
            "reembedded": len(written - was_missing),
            "skipped_concurrent": attempted - len(written),
            "still_missing": candidates.count_missing_embeddings(conn, scope),
            "outdated_remaining": candidates.count_outdated_embeddings(conn, scope, model.name),
            "embedder": model.name,
        }
        if unavailable is not None:
            counts["embedder_unavailable"] = unavailable
        usage = getattr(model, "usage", None)  # a remote embedder's requests and waits
        if usage is not None:
            counts.update(embed_requests=usage.requests, embed_retries=usage.retries,
                          embed_waited_secs=round(usage.waited_secs, 3), embed_tokens=usage.prompt_tokens)
        return counts

    run_step(context, memory_store, "revectorize", work)


@dg.op(out=dg.Out(dg.Nothing), tags={"step": "5"})
def mark_stale_confidence(
    context: dg.OpExecutionContext, config: StaleConfidenceConfig, memory_store: MemoryStore
) -> None:
    """Step 5: confidence := stale for nodes not recalled within the window (never verified ones)."""

    def work(conn, scope):
        loaded = candidates.stale_confidence_candidates(conn, scope, config.stale_after_days)
        plan = plan_stale_confidence(
            loaded, now=candidates.database_now(conn), stale_after_days=config.stale_after_days
        )
        return {"candidates": loaded.height, **actions.mark_stale(conn, scope, plan, loaded)}

    run_step(context, memory_store, "mark_stale_confidence", work)


@dg.op(ins={"after_rewrites": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing), tags={"step": "6"})
def sync_graph(
    context: dg.OpExecutionContext, config: GraphSyncConfig, memory_store: MemoryStore
) -> None:
    """Step 6: upsert graph vertices for every node changed since the last sync (capped)."""

    def work(conn, scope):
        position = graph.load_sync_position(conn, scope)
        after_cursor, from_pending, xmax, in_progress = graph.load_changes(conn, scope, position, config.cap)
        if position.usable_with(xmax) != position:  # ids from another server: start over
            position = SyncPosition()
            after_cursor, from_pending, xmax, in_progress = graph.load_changes(conn, scope, position, config.cap)
        plan = plan_graph_sync(
            after_cursor, from_pending, position=position, snapshot_xmax=xmax,
            in_progress=in_progress, cap=config.cap,
        )
        counts = graph.apply_graph_sync(conn, scope, plan)
        return {**counts, **_follow_in_age(conn, scope, memory_store)}

    run_step(context, memory_store, "sync_graph", work)


@dg.op(ins={"after_sync": dg.In(dg.Nothing), "after_embedding": dg.In(dg.Nothing)},
       out=dg.Out(dg.Nothing), tags={"step": "6b"})
def associate_concepts(
    context: dg.OpExecutionContext, config: AssociateConfig, memory_store: MemoryStore,
    embedder: EmbedderResource,
) -> None:
    """Step 6b: link active nodes that are similar (cosine above the association threshold) but
    that step 2 will not merge, with `shares_concept_with` edges; incremental like step 2.

    Never with the lexical embedder: its similarity is shared words, and an edge between two
    memories that merely use the same words would be noise presented as meaning.
    """

    def work(conn, scope):
        if not embedder.settings().is_semantic:
            return {"skipped": "lexical embedder (its similarity is shared words, not meaning)"}
        model = embedder.get().name
        params = {"threshold": config.threshold, "upper": config.merge_threshold, "model": model}
        start = candidates.start_pass(conn, scope, params)
        if start.incremental and not start.changed:
            candidates.save_pass_state(conn, scope, PassState(start.resume_at, True, params))
            return {"pass": "unchanged", "nodes_compared": 0, "edges_added": 0}
        if start.incremental and len(start.changed) <= config.in_database_search_max_changed:
            loaded, pairs = candidates.similar_pairs_in_database(
                conn, scope, sorted(start.changed), config.threshold, model=model,
                upper=config.merge_threshold, same_memory_type=False,
            )
            how = "incremental (in database)"
        else:
            loaded, vectors = candidates.consolidation_candidates(conn, scope, model)
            focus = loaded["id"].is_in(list(start.changed)).to_numpy() if start.incremental else None
            pairs = association_pairs(loaded, vectors, threshold=config.threshold,
                                      upper=config.merge_threshold, focus=focus,
                                      vetoed=candidates.vetoed_pairs(conn, scope))
            how = "incremental" if start.incremental else "full"
        found = candidate_edges(loaded, pairs)
        plan = plan_associations(found, existing=associations.existing_pairs(conn, scope, found),
                                 cap=config.cap)
        counts = {**associations.add_edges(conn, scope, plan.edges, model),
                  **_follow_in_age(conn, scope, memory_store)}
        if plan.left_over and start.incremental:
            # Capped: the same changed nodes are searched again next cycle (their added edges are
            # found and skipped), so the backlog drains without a full pass of the namespace.
            state = PassState(start.position, True, params)
        else:
            state = PassState(start.resume_at, plan.left_over == 0, params)
        candidates.save_pass_state(conn, scope, state)
        return {"pass": how, "nodes_compared": loaded.height, "pairs_in_band": pairs.height,
                "pairs_left_over": plan.left_over, **counts}

    run_step(context, memory_store, "associate_concepts", work)


@dg.op(
    ins={
        "reclassified": dg.In(dg.Nothing),
        "revectorized": dg.In(dg.Nothing),
        "confidence_marked": dg.In(dg.Nothing),
        "graph_synced": dg.In(dg.Nothing),
        "associated": dg.In(dg.Nothing),
    },
    tags={"step": "7"},
)
def log_curation_activity(context: dg.OpExecutionContext, memory_store: MemoryStore) -> dict:
    """Step 7: close the cycle's activity row and show its counts in the Dagster UI."""
    scope = _scope(context, "log_curation_activity")
    with memory_store.transaction() as conn:
        metadata = activity.close_cycle(conn, scope, _run_info(context.dagster_run))
    context.add_output_metadata(
        {
            "status": metadata["status"],
            "duration_s": float(metadata.get("duration_s") or 0.0),
            "counts": dg.MetadataValue.md(cycle_markdown(metadata)),
        }
    )
    return {"status": metadata["status"]}


def cycle_markdown(metadata: Mapping) -> str:
    """The cycle's per-step counts as a markdown table for the Dagster UI."""
    lines = ["| step | status | counts |", "|---|---|---|"]
    for step in STEP_NAMES[:-1]:
        entry = dict(metadata.get("steps", {}).get(step) or {"status": "not run"})
        status = entry.pop("status")
        details = ", ".join(f"{key}={value}" for key, value in entry.items())
        lines.append(f"| {step} | {status} | {details} |")
    return "\n".join(lines)

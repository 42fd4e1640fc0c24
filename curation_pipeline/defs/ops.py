"""The seven curation steps (and 6b) as thin Dagster ops: each calls one service function.

A step's work is plain Python in `curation_pipeline.service.steps` (load -> plan -> LLM ->
guarded apply); an op adds only what Dagster needs: its config, its resources, and the step's
counts and changes as output metadata. Ops hand each other nothing but ordering (Nothing
dependencies): every step reads the fresh state of the database, so re-executing one failed step
alone needs nothing from the failed run. Step 7 also records the cycle on the `memory_namespace`
asset (defs/assets.py) with its checks (defs/health_checks.py).
"""

# No `from __future__ import annotations`: Dagster reads these annotations at definition time.
from collections.abc import Callable, Mapping

import dagster as dg
from dagster._core.errors import DagsterExecutionInterruptedError

from curation_pipeline.config.op_config import (
    AssociateConfig,
    ConsolidateConfig,
    GraphSyncConfig,
    ReclassifyConfig,
    RevectorizeConfig,
    StaleConfidenceConfig,
    SummarizeConfig,
)
from curation_pipeline.core.partition_keys import display_key
from curation_pipeline.core.render.changes import (
    CYCLE_COLUMNS,
    PREVIEW_NOTE,
    cycle_outcome,
    cycle_rows,
    step_markdown,
)
from curation_pipeline.defs.assets import cycle_metadata
from curation_pipeline.defs.health_checks import CHECK_OUTPUTS, check_results
from curation_pipeline.defs.llm_resource import LLMResource
from curation_pipeline.defs.resources import EmbedderResource, MemoryStore
from curation_pipeline.defs.resources import cycle_run_info as _run_info
from curation_pipeline.defs.run_tags import TRIGGER_TAG, inferred_trigger
from curation_pipeline.service.step_run import (
    StepRun,
    record_interruption,
    record_step_failure,
    run_step,
)
from curation_pipeline.service.steps.associate import (
    associate_concepts as associate_step,
)
from curation_pipeline.service.steps.consolidate import (
    consolidate_duplicates as consolidate_step,
)
from curation_pipeline.service.steps.cycle import close_cycle
from curation_pipeline.service.steps.graph_sync import sync_graph as sync_graph_step
from curation_pipeline.service.steps.reclassify import (
    reclassify_stale as reclassify_step,
)
from curation_pipeline.service.steps.revectorize import revectorize as revectorize_step
from curation_pipeline.service.steps.stale_confidence import (
    mark_stale_confidence as stale_step,
)
from curation_pipeline.service.steps.summarize import (
    summarize_verbose as summarize_step,
)

# Step 7's output that the asset job records as the memory_namespace materialization.
RESULT_OUTPUT = "result"


def label_trigger(context: dg.OpExecutionContext) -> None:
    """Tag a run launched from the UI or by a backfill with its trigger, as the schedule, the
    sensors and the CLI tag theirs, so the Runs list says who started every run. The first step
    to run tags it; the others find the tag in the run's record."""
    trigger = inferred_trigger(context.run.tags)
    if trigger is None:
        return
    try:
        stored = context.instance.get_run_by_id(context.run_id)
        if stored is not None and TRIGGER_TAG not in stored.tags:
            context.instance.add_run_tags(context.run_id, {TRIGGER_TAG: trigger})
    except Exception as error:  # a missing label is not worth failing a step
        context.log.warning(f"could not tag the run with {TRIGGER_TAG}={trigger}: {error}")


def _metadata_value(value):
    return value if isinstance(value, (int, float, str, bool)) else str(value)


def _preview_metadata(dry_run: bool) -> dict:
    return {"dry_run": dry_run, **({"preview": dg.MetadataValue.text(PREVIEW_NOTE)} if dry_run else {})}


def run_op(context: dg.OpExecutionContext, memory_store: MemoryStore,
           work: Callable[[StepRun, dg.Config | None], Mapping],
           config_class: type[dg.Config] | None = None) -> None:
    """Run one step's service function in the run's namespace session; show what it did.

    The op's config is built here (`config_class` from the op's raw config), not by Dagster
    before the op starts, so that a config its rules refuse fails inside this `try` like any
    other cause. A failure is recorded on the cycle here (no failure hook: a hook logs
    HOOK_SKIPPED after every step that succeeds) and raised again as a Dagster `Failure` whose
    description starts with the cause: Dagster would otherwise show only "Error occurred while
    executing op ..." on the event's first line.
    """
    session = run = None
    label_trigger(context)
    try:
        session = memory_store.session()
        run = StepRun(session, session.scope(context.op.name), _run_info(context.dagster_run))
        config = config_class(**context.op_config) if config_class is not None else None
        outcome = run_step(run, lambda step_run: work(step_run, config))
    except Exception as error:
        failure = dg.Failure(description=f"{context.op.name} failed: {type(error).__name__}: {error}")
        failure.__cause__ = error  # what is recorded: the cause, as `raise ... from` would chain it
        _record_failure(context, memory_store, session, failure)
        raise failure from error
    except (DagsterExecutionInterruptedError, KeyboardInterrupt):
        # Canceled mid-step: its transaction rolled back; the cycle says it was interrupted.
        if session is not None and run is not None and not session.dry_run:
            record_interruption(session, context.op.name, run.run_info)
        raise
    context.add_output_metadata({
        **{key: _metadata_value(value) for key, value in outcome.counts.items()},
        **_preview_metadata(session.dry_run),
        "changes": dg.MetadataValue.md(step_markdown(
            outcome.step, outcome.changes, outcome.signals, outcome.edges, outcome.vertices,
            preview=session.dry_run,
        )),
    })
    context.log.info(f"{outcome.step} {display_key(session.tenant_id, session.namespace)}: {outcome.counts}")


def _record_failure(context: dg.OpExecutionContext, memory_store: MemoryStore, session,
                    error: BaseException) -> None:
    """Mark the cycle `partial` with the failed step and its error, whatever failed: the step's
    work, its config, its session or a resource it uses."""
    try:
        record_step_failure(session or memory_store.session(), context.op.name, error,
                            _run_info(context.dagster_run))
    except Exception as secondary:  # the database (or the session itself) may be what failed
        context.log.error(f"could not record the failure of {context.op.name}: {secondary}")


@dg.op(out=dg.Out(dg.Nothing), config_schema=ReclassifyConfig.to_config_schema(), tags={"step": "1"})
def reclassify_stale(context: dg.OpExecutionContext, memory_store: MemoryStore) -> None:
    """Step 1: queue a `reclassify_pending` training signal for never-recalled, long-idle nodes."""
    run_op(context, memory_store, lambda run, config: reclassify_step(run, config), ReclassifyConfig)


@dg.op(out=dg.Out(dg.Nothing), config_schema=ConsolidateConfig.to_config_schema(), tags={"step": "2"})
def consolidate_duplicates(context: dg.OpExecutionContext, memory_store: MemoryStore, llm: LLMResource,
                           embedder: EmbedderResource) -> None:
    """Step 2: supersede memories a newer one updates, merge near-duplicate pairs (cosine >
    threshold) within a namespace, memory type and embedding model; with the LLM on, it judges
    the similar pairs below the threshold and merges the texts where the fact guard accepts."""
    run_op(context, memory_store, lambda run, config: consolidate_step(
        run, config, model=embedder.get().name, llm=llm.client_for(run), semantic=embedder.semantic()),
        ConsolidateConfig)


@dg.op(ins={"after_merges": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing),
       config_schema=SummarizeConfig.to_config_schema(), tags={"step": "3"})
def summarize_verbose(context: dg.OpExecutionContext,
                      memory_store: MemoryStore, llm: LLMResource, embedder: EmbedderResource) -> None:
    """Step 3: condense verbose nodes (an LLM summary the fact guard accepted; without the LLM
    path: cut at a word boundary). The full text is kept in revisions."""
    run_op(context, memory_store, lambda run, config: summarize_step(
        run, config, llm=llm.client_for(run), semantic=embedder.semantic()), SummarizeConfig)


@dg.op(ins={"after_rewrites": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing),
       config_schema=RevectorizeConfig.to_config_schema(), tags={"step": "4"})
def revectorize(context: dg.OpExecutionContext,
                memory_store: MemoryStore, embedder: EmbedderResource) -> None:
    """Step 4: embed active nodes without a vector, re-embed (capped) those of another model."""
    run_op(context, memory_store, lambda run, config: revectorize_step(run, config, embedder=embedder.get()),
           RevectorizeConfig)


@dg.op(out=dg.Out(dg.Nothing), config_schema=StaleConfidenceConfig.to_config_schema(), tags={"step": "5"})
def mark_stale_confidence(context: dg.OpExecutionContext, memory_store: MemoryStore) -> None:
    """Step 5: confidence := stale for nodes not recalled within the window (never verified ones)."""
    run_op(context, memory_store, lambda run, config: stale_step(run, config), StaleConfidenceConfig)


@dg.op(ins={"after_rewrites": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing),
       config_schema=GraphSyncConfig.to_config_schema(), tags={"step": "6"})
def sync_graph(context: dg.OpExecutionContext, memory_store: MemoryStore) -> None:
    """Step 6: upsert graph vertices for every node changed since the last sync (capped)."""
    run_op(context, memory_store, lambda run, config: sync_graph_step(run, config), GraphSyncConfig)


@dg.op(ins={"after_sync": dg.In(dg.Nothing), "after_embedding": dg.In(dg.Nothing)},
       out=dg.Out(dg.Nothing), config_schema=AssociateConfig.to_config_schema(), tags={"step": "6b"})
def associate_concepts(context: dg.OpExecutionContext,
                       memory_store: MemoryStore, embedder: EmbedderResource) -> None:
    """Step 6b: link similar nodes that step 2 will not merge with `shares_concept_with` edges
    (never with the lexical embedder: its similarity is shared words, not meaning)."""
    run_op(context, memory_store, lambda run, config: associate_step(
        run, config, model=embedder.semantic_model_name(), association_model=embedder.get().name),
        AssociateConfig)


@dg.op(
    ins={
        "reclassified": dg.In(dg.Nothing),
        "revectorized": dg.In(dg.Nothing),
        "confidence_marked": dg.In(dg.Nothing),
        "graph_synced": dg.In(dg.Nothing),
        "associated": dg.In(dg.Nothing),
    },
    # The result is the memory_namespace materialization (in the asset job); each check has an
    # output of its own, as Dagster wants for the checks of a graph-backed asset.
    out={RESULT_OUTPUT: dg.Out(dg.Nothing),
         **{output: dg.Out(dg.Nothing, is_required=False) for output in CHECK_OUTPUTS.values()}},
    tags={"step": "7"},
)
def log_curation_activity(context: dg.OpExecutionContext, memory_store: MemoryStore,
                          embedder: EmbedderResource):
    """Step 7: close the cycle's activity row and record it with the namespace's health as the
    memory_namespace materialization, with its checks (not for a preview: it wrote nothing)."""
    label_trigger(context)
    try:
        yield from _close_and_record(context, memory_store, embedder)
    except Exception as error:
        _record_failure(context, memory_store, None, error)  # as run_op does for steps 1 to 6b
        raise


def _close_and_record(context: dg.OpExecutionContext, memory_store: MemoryStore,
                      embedder: EmbedderResource):
    session = memory_store.session()
    report = close_cycle(session, _run_info(context.dagster_run), embedding_model=embedder.get().name)
    cycle = report.cycle
    metadata = {
        "status": cycle.status,
        "outcome": dg.MetadataValue.text(cycle_outcome(cycle)),
        "duration_s": dg.MetadataValue.float(round(float(cycle.duration_s), 2)),
        **_preview_metadata(session.dry_run),
        "counts": dg.MetadataValue.table(
            records=[dg.TableRecord(row) for row in cycle_rows(cycle, context.run_id)],
            schema=dg.TableSchema(columns=[
                dg.TableColumn(name, kind, description=meaning) for name, kind, meaning in CYCLE_COLUMNS
            ]),
        ),
    }
    if session.dry_run:
        yield dg.Output(None, RESULT_OUTPUT, metadata=metadata)
        return
    yield dg.Output(None, RESULT_OUTPUT, metadata={
        **metadata, **cycle_metadata(report.health, cycle_status=cycle.status, run_ids=cycle.run_ids)})
    yield from check_results(report.checks)

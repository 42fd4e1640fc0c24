"""The seven curation steps (and 6b) as thin Dagster ops: each calls one service function.

A step's work is plain Python in `curation_pipeline.service.steps` (load -> plan -> LLM ->
guarded apply), declared by its `StepSpec` (service/steps/registry.py); `step_op` makes its op
from the spec: name, number tag, description, config schema, the Nothing inputs of the steps it
runs after, and the counts and changes as output metadata. `_CLIENTS` says which resources a
step's function takes and how. Ops hand each other nothing but ordering (Nothing
dependencies): every step reads the fresh state of the database, so re-executing one failed step
alone needs nothing from the failed run. Step 7 also records the cycle on the `memory_namespace`
asset (defs/assets.py) with its checks (defs/health_checks.py).
"""

# No `from __future__ import annotations`: Dagster reads these annotations at definition time.
from collections import deque
from collections.abc import Callable, Mapping, Sequence

import dagster as dg
from dagster._core.errors import DagsterExecutionInterruptedError

from curation_pipeline.core.partition_keys import display_key
from curation_pipeline.core.render.changes import (
    CYCLE_COLUMNS,
    PREVIEW_NOTE,
    ChangeTable,
    cycle_outcome,
    cycle_rows,
    history_command,
    step_tables,
)
from curation_pipeline.core.step_spec import StepSpec, sentence
from curation_pipeline.defs.assets import cycle_metadata
from curation_pipeline.defs.health_checks import CHECK_OUTPUTS, check_results
from curation_pipeline.defs.resource_defaults import defaults_bound
from curation_pipeline.defs.resources import EmbedderResource, MemoryStore
from curation_pipeline.defs.resources import cycle_run_info as _run_info
from curation_pipeline.defs.run_tags import trigger_tags
from curation_pipeline.service.step_run import (
    StepRun,
    record_interruption,
    record_step_failure,
    run_step,
)
from curation_pipeline.service.steps import (
    associate,
    consolidate,
    revectorize,
    summarize,
)
from curation_pipeline.service.steps.cycle import close_cycle
from curation_pipeline.service.steps.registry import CLOSING, STEPS

# Step 7's output that the asset job records as the memory_namespace materialization.
RESULT_OUTPUT = "result"


# The latest runs this process has tagged. The jobs use the in-process executor, so every step
# of a run runs here: only its first step writes the tag, not all eight. Bounded: a worker lives
# for many runs.
_LABELLED_RUNS: deque[str] = deque(maxlen=64)


def label_trigger(context: dg.OpExecutionContext) -> None:
    """Tag a run launched from the UI or by a backfill with its trigger, as the schedule, the
    sensors and the CLI tag theirs, so the Runs list says who started every run. The first step
    to run tags it. `context.run` holds the tags the run started with, so only this process's
    own steps could have tagged it since: the memo says, and the run's record is not read
    (~25 ms a read on Dagster's SQLite storage). Adding a tag again would only rewrite it."""
    tags = trigger_tags(context.run.tags)
    if not tags or context.run_id in _LABELLED_RUNS:
        return
    try:
        context.instance.add_run_tags(context.run_id, tags)
        _LABELLED_RUNS.append(context.run_id)
    except Exception as error:  # a missing label is not worth failing a step
        context.log.warning(f"could not tag the run with {tags}: {error}")


def _metadata_value(value):
    return value if isinstance(value, (int, float, str, bool)) else str(value)


def _table(columns: Sequence[tuple[str, str, str]], rows: Sequence[Mapping]) -> dg.TableMetadataValue:
    """Rows under columns (name, Dagster type, meaning): the run page shows them inline."""
    return dg.MetadataValue.table(
        records=[dg.TableRecord(dict(row)) for row in rows],
        schema=dg.TableSchema(columns=[dg.TableColumn(name, kind, description=meaning)
                                       for name, kind, meaning in columns]),
    )


def change_metadata(tables: Mapping[str, ChangeTable]) -> dict:
    """Each of a step's change tables as an inline table ("no changes" when it has no row); past
    MAX_ROWS rows, how many it leaves out and the command that shows them."""
    metadata = {}
    for key, table in tables.items():
        metadata[key] = _table(table.columns, table.shown) if table.rows else dg.MetadataValue.text("no changes")
        if table.not_shown:
            metadata[f"{key}_not_shown"] = dg.MetadataValue.text(
                f"{table.not_shown} more row(s); every change to a node: {history_command('NODE_ID')}")
    return metadata


def _preview_metadata(dry_run: bool) -> dict:
    return {"dry_run": dry_run, **({"preview": dg.MetadataValue.text(PREVIEW_NOTE)} if dry_run else {})}


def run_op(context: dg.OpExecutionContext, memory_store: MemoryStore, spec: StepSpec,
           work: Callable[[StepRun, dg.Config | None], Mapping]) -> None:
    """Run one step's service function in the run's namespace session; show what it did.

    The op's config is built here (`spec.config` from the op's raw config), not by Dagster
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
        run = StepRun(session, session.scope(spec.name), _run_info(context.dagster_run), spec=spec)
        config = spec.config(**(context.op_config or {})) if spec.config is not None else None
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
    # The changes before the counts: the event log shows an output's first entries and hides the
    # rest behind "View full message"; the counts are in the log line above it too.
    context.add_output_metadata({
        **_preview_metadata(session.dry_run),
        **change_metadata(step_tables(spec, outcome.changes, outcome.signals, outcome.edges,
                                       outcome.vertices)),
        **{key: _metadata_value(value) for key, value in outcome.counts.items()},
    })
    context.log.info(f"{spec.label} in {display_key(session.tenant_id, session.namespace)}: "
                     f"{sentence(spec, outcome.record)}")


def _record_failure(context: dg.OpExecutionContext, memory_store: MemoryStore, session,
                    error: BaseException) -> None:
    """Mark the cycle `partial` with the failed step and its error, whatever failed: the step's
    work, its config, its session or a resource it uses."""
    try:
        record_step_failure(session or memory_store.session(), context.op.name, error,
                            _run_info(context.dagster_run))
    except Exception as secondary:  # the database (or the session itself) may be what failed
        context.log.error(f"could not record the failure of {context.op.name}: {secondary}")


# The clients a step's service function takes beyond (run, config), from the op's resources;
# a step not listed takes none and its op needs only the memory store.
_EMBEDDER, _LLM = "embedder", "llm"
_CLIENTS: dict[str, tuple[tuple[str, ...], Callable[[dg.OpExecutionContext, StepRun], dict]]] = {
    consolidate.SPEC.name: ((_LLM, _EMBEDDER), lambda context, run: {
        "model": context.resources.embedder.get().name, "llm": context.resources.llm.client_for(run),
        "semantic": context.resources.embedder.semantic()}),
    summarize.SPEC.name: ((_LLM, _EMBEDDER), lambda context, run: {
        "llm": context.resources.llm.client_for(run), "semantic": context.resources.embedder.semantic()}),
    revectorize.SPEC.name: ((_EMBEDDER,), lambda context, run: {"embedder": context.resources.embedder.get()}),
    associate.SPEC.name: ((_EMBEDDER,), lambda context, run: {
        "model": context.resources.embedder.semantic_model_name(),
        "association_model": context.resources.embedder.get().name}),
}


def after_input(step: str) -> str:
    """The Nothing input by which an op waits for `step`."""
    return f"after_{step}"


def step_op(spec: StepSpec, config_defaults: Mapping[str, object] | None = None) -> dg.OpDefinition:
    """The op of a step: "Step N: ..." described, tagged with its number, configured by its
    config class (its fields defaulting to `config_defaults` where given: the values in force,
    defs/job.py), waiting (Nothing inputs) for the steps it runs after."""
    resources, clients = _CLIENTS.get(spec.name, ((), lambda context, run: {}))
    config = spec.config
    if config is not None and config_defaults:
        config = defaults_bound(config, config_defaults)

    @dg.op(
        name=spec.name,
        description=spec.op_description,
        ins={after_input(step): dg.In(dg.Nothing) for step in spec.after},
        out=dg.Out(dg.Nothing),
        config_schema=config.to_config_schema() if config is not None else None,
        required_resource_keys={"memory_store", *resources},
        tags={"step": spec.number},
    )
    def _step(context: dg.OpExecutionContext) -> None:
        run_op(context, context.resources.memory_store, spec,
               lambda run, config: spec.run(run, config, **clients(context, run)))

    return _step


STEP_OPS: dict[str, dg.OpDefinition] = {spec.name: step_op(spec) for spec in STEPS}


def last_steps(specs) -> list[str]:
    """The steps no other step runs after: step 7 waits for these (and so for all)."""
    waited_for = {name for spec in specs for name in spec.after}
    return [spec.name for spec in specs if spec.name not in waited_for]


def closing_op(specs=STEPS) -> dg.OpDefinition:
    """Step 7's op, waiting for the last steps of `specs`."""
    return dg.op(
        name=CLOSING.name,
        description=CLOSING.op_description,
        ins={after_input(step): dg.In(dg.Nothing) for step in last_steps(specs)},
        # The result is the memory_namespace materialization (in the asset job); each check has an
        # output of its own, as Dagster wants for the checks of a graph-backed asset.
        out={RESULT_OUTPUT: dg.Out(dg.Nothing),
             **{output: dg.Out(dg.Nothing, is_required=False) for output in CHECK_OUTPUTS.values()}},
        required_resource_keys={"memory_store", _EMBEDDER},
        tags={"step": CLOSING.number},
    )(_close_op)


def _close_op(context: dg.OpExecutionContext):
    memory_store, embedder = context.resources.memory_store, context.resources.embedder
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
        "counts": _table(CYCLE_COLUMNS, cycle_rows(cycle, context.run_id, STEPS)),
    }
    if session.dry_run:
        yield dg.Output(None, RESULT_OUTPUT, metadata=metadata)
        return
    yield dg.Output(None, RESULT_OUTPUT, metadata={
        **metadata, **cycle_metadata(report.health, cycle_status=cycle.status, run_ids=cycle.run_ids)})
    yield from check_results(report.checks)

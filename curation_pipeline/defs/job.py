"""The curation cycle as the graph behind the `memory_namespace` asset; `curate_namespace`
materializes it for one partition, and `preview_namespace` runs the same graph as a preview that
writes nothing. The graph is built from the step registry (service/steps/registry.py): each
step's op waits for the steps its spec runs after, and step 7 for the steps nothing waits for.

    1 reclassify ──────────────────────────────────────────────────────┐
    2 consolidate ─> 3 summarize ─┬─> 4 embed ──────┬──────────────────┤
                                  │                 ├─> 6b associate ──┼─> 7 log activity
                                  └─> 6 graph sync ─┴──────────────────┤
    5 stale confidence ────────────────────────────────────────────────┘

Merging may leave long merged text, so summarizing follows it; both clear embeddings, so
revectorizing follows them; the graph mirrors text and archive state, so it syncs after them.
Associations need the fresh vectors and the synced vertices, so they come after both.
Steps 1 and 5 need nothing from the others: if any step fails, the independent ones still run
(Dagster skips only a failed op's dependents), step 7 does not, and the partition's
materialization is recorded as failed.

The graph is named after the asset, so its steps are `memory_namespace.<op>` and their run
config sits under `ops.memory_namespace.ops.<op>` (`step_run_config` builds it), in the asset
job and the preview job alike. The jobs are built by `build_jobs` where the Definitions are
built, with the step settings in force as their default config.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import dagster as dg

from curation_pipeline.config.op_config import step_op_config
from curation_pipeline.config.steps import StepSettings
from curation_pipeline.core.step_spec import StepSpec
from curation_pipeline.defs.assets import (
    DEFINITION_METADATA,
    DESCRIPTION,
    GROUP,
    KINDS,
    MEMORY_NAMESPACE,
    OWNERS,
    TAGS,
)
from curation_pipeline.defs.health_checks import CHECK_OUTPUTS, HEALTH_CHECK_SPECS
from curation_pipeline.defs.ops import RESULT_OUTPUT, after_input, closing_op, last_steps, step_op
from curation_pipeline.defs.partitions import namespace_partitions
from curation_pipeline.defs.previews import PREVIEW_JOB_NAME, PREVIEW_TAGS
from curation_pipeline.service.steps.registry import CLOSING, STEPS

if TYPE_CHECKING:
    from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition

JOB_NAME = "curate_namespace"
CYCLE_GRAPH = MEMORY_NAMESPACE.to_python_identifier()


def step_key(op_name: str) -> str:
    """The Dagster step key of a step op: the op inside the asset's graph."""
    return f"{CYCLE_GRAPH}.{op_name}"


def step_run_config(op_configs: Mapping[str, Mapping]) -> dict:
    """Run config setting some steps' config, `{op name: {setting: value}}`, for either job."""
    return {"ops": {CYCLE_GRAPH: {"ops": {op: {"config": dict(config)} for op, config in op_configs.items()}}}}


# op name -> its config class, for every step that has one (step 7 has none).
STEP_CONFIGS = {spec.name: spec.config for spec in STEPS if spec.config is not None}


def steps_in_force(step_settings: StepSettings) -> dict:
    """The run config of every step with the values of `step_settings`."""
    return step_run_config(step_op_config(step_settings, STEP_CONFIGS))


def with_step_defaults(step_settings: StepSettings, run_config: Mapping | None,
                       ops: Collection[str] | None = None) -> dict:
    """`run_config` completed with `step_settings` for every step value it does not set; for a
    run of a selection of steps (`ops`), the config of the others is left out (Dagster refuses
    config of an op outside the selection of a job with default config).

    The jobs' default config (`build_jobs`) is a partitioned job's config: Dagster uses it
    whole for a run launched without run config (the schedule, the sensors, a backfill, a
    partition picked in the launchpad) and not at all for a run given some; a caller that
    launches with a partial run config (the CLI, the tests) completes it here, so the values
    it does not set are the ones in force, not the declared defaults."""
    merged = _merged(steps_in_force(step_settings), run_config or {})
    if ops is not None:
        steps = merged["ops"][CYCLE_GRAPH]["ops"]
        merged["ops"][CYCLE_GRAPH]["ops"] = {op: config for op, config in steps.items() if op in ops}
    return merged


def _merged(base: Mapping, changes: Mapping) -> dict:
    merged = dict(base)
    for key, value in changes.items():
        both_mappings = isinstance(value, Mapping) and isinstance(base.get(key), Mapping)
        merged[key] = _merged(base[key], value) if both_mappings else value
    return merged


def build_cycle_graph(name: str, specs: Sequence[StepSpec] = STEPS,
                      step_settings: StepSettings | None = None) -> dg.GraphDefinition:
    """The cycle's graph named `name`: an op per step of `specs` (in order; each after the steps
    it names), then step 7, whose result and check outputs are the graph's outputs. With
    `step_settings`, each op's config fields default to its values (else the declared ones)."""
    in_force = (step_op_config(step_settings, {spec.name: spec.config for spec in specs if spec.config is not None})
                if step_settings is not None else {})
    ops = {spec.name: step_op(spec, in_force.get(spec.name)) for spec in specs}
    closing = closing_op(specs)

    # Composed as a hand-written @graph body would be, in registry order.
    @dg.graph(name=name, out={output: dg.GraphOut() for output in (RESULT_OUTPUT, *CHECK_OUTPUTS.values())})
    def cycle():
        done = {}
        for spec in specs:  # the registry lists a step after the steps it runs after
            done[spec.name] = ops[spec.name](**{after_input(step): done[step] for step in spec.after})
        return closing(**{after_input(step): done[step] for step in last_steps(specs)})._asdict()

    return cycle


# The graph with the declared defaults (what the tests of its shape read); the Definitions use
# `build_memory_asset`'s, whose ops default to the values in force.
curation_cycle = build_cycle_graph(CYCLE_GRAPH)

_STEPS = ", ".join(spec.label for spec in (*STEPS, CLOSING))


def build_cycle(step_settings: StepSettings) -> dg.GraphDefinition:
    """The cycle's graph whose steps' config defaults to `step_settings`: the one graph of the
    asset and of the preview job (a repository holds one definition per graph name)."""
    return build_cycle_graph(CYCLE_GRAPH, STEPS, step_settings)


def build_memory_asset(cycle: dg.GraphDefinition) -> dg.AssetsDefinition:
    """The `memory_namespace` asset of `cycle` (`build_cycle`'s: its steps' config defaults to
    the values in force).

    Every job that materializes it runs the same cycle: the Definitions' executor is the
    in-process one (defs/definitions.py), so the implicit asset job the UI's Materialize and an
    asset backfill launch runs all steps in one process under one namespace lease, as
    `curate_namespace` does; and since that job has no default run config, the values in force
    reach its steps as the op config's own defaults."""
    return dg.AssetsDefinition.from_graph(
        cycle,
        keys_by_output_name={RESULT_OUTPUT: MEMORY_NAMESPACE},
        check_specs=HEALTH_CHECK_SPECS,
        partitions_def=namespace_partitions,
        group_name=GROUP,
        descriptions_by_output_name={RESULT_OUTPUT: DESCRIPTION},
        metadata_by_output_name={RESULT_OUTPUT: DEFINITION_METADATA},
        owners_by_output_name={RESULT_OUTPUT: OWNERS},
        tags_by_output_name={RESULT_OUTPUT: {**TAGS, **{f"dagster/kind/{kind}": "" for kind in KINDS}}},
    )


def build_jobs(step_settings: StepSettings, cycle: dg.GraphDefinition | None = None,
               ) -> tuple[UnresolvedAssetJobDefinition, dg.JobDefinition]:
    """`curate_namespace` and `preview_namespace` with `step_settings` bound as their default run
    config: the launchpad shows these values for a partition, and a run launched without run
    config uses them (a partial run config is completed by `with_step_defaults`). Called where
    the Definitions are built (defs/definitions.py), so the values are the ones in force when
    the code location loads, not when this module was first imported."""
    default_config = steps_in_force(step_settings)
    cycle = cycle or build_cycle(step_settings)

    @dg.graph(name="preview_cycle")
    def _preview_cycle():
        cycle()
    # An asset job: Materialize in the UI, backfills, the schedule, the sensors and the CLI all
    # launch it, and it runs the asset's checks with it.
    curate = dg.define_asset_job(
        JOB_NAME,
        selection=dg.AssetSelection.assets(MEMORY_NAMESPACE),
        config=default_config,
        # Steps are short and share one namespace lock: separate processes would only add
        # seconds of start-up per step.
        executor_def=dg.in_process_executor,
        description=(
            "One curation cycle of one namespace (partition TENANT:NAMESPACE), materializing its "
            f"memory_namespace partition: {_STEPS}. Nothing is deleted; every change is recorded "
            "in node_revisions and can be undone (curation-pipeline undo --run RUN_ID)."
        ),
    )
    # The same graph, writing nothing, as an op job of its own: it never materializes the asset
    # and stays off curate_namespace's partition status (defs/previews.py).
    preview = _preview_cycle.to_job(
        name=PREVIEW_JOB_NAME,
        partitions_def=namespace_partitions,
        config=default_config,
        executor_def=dg.in_process_executor,
        tags=PREVIEW_TAGS,
        description=(
            "Preview of one curation cycle of one namespace (partition TENANT:NAMESPACE; "
            f"{_STEPS}): every step plans and shows its changes in one database transaction "
            "that is rolled back. Preview, nothing written: only a curation_preview activity row "
            "is kept."
        ),
    )
    return curate, preview

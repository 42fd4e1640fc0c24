"""The sensors: curate a namespace soon after it goes idle, and discover new namespaces.

`idle_namespace_sensor` reads namespace_activity (only the namespaces with an interaction since
their last curation, through a partial index) and requests a run, ahead of scheduled runs in the
queue, for each that is idle, past the anti-thrash floor and without a run in flight; at most
CURATOR_IDLE_MAX_RUNS_PER_TICK per tick, continuing from a cursor. Its run key names the idle
episode (the last interaction): one run per episode. If that run fails, the sensor does not
retry it (Dagster skips a repeated run key); the schedule's next tick does, since a failed run
does not count as a curation.

`namespace_discovery_sensor` registers every tenant/namespace of the store as a dynamic
partition as soon as it holds memory, like `curation-pipeline namespaces sync`, so an operator
never has to add one by hand.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg

from curation_pipeline.config.triggers import TriggerSettings
from curation_pipeline.core.trigger_policy import plan_idle_runs
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.partitions import (
    PARTITIONS_DEF_NAME,
    namespace_partitions,
    register_partitions,
)
from curation_pipeline.defs.resources import MemoryStore
from curation_pipeline.defs.schedules import DISABLED_MESSAGE
from curation_pipeline.defs.trigger_runs import (
    IDLE_PRIORITY,
    curation_run_request,
    namespaces_with_unfinished_runs,
    partition_key_or_warn,
)
from curation_pipeline.service.namespaces import discover_partition_keys
from curation_pipeline.store.triggers import load_candidates

IDLE_SENSOR_NAME = "idle_namespace_sensor"
DISCOVERY_SENSOR_NAME = "namespace_discovery_sensor"


def build_idle_sensor(settings: TriggerSettings) -> dg.SensorDefinition:
    @dg.sensor(
        name=IDLE_SENSOR_NAME,
        job_name=JOB_NAME,
        minimum_interval_seconds=settings.sensor_interval_secs,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=(
            f"A run (priority {IDLE_PRIORITY}) for each enabled namespace with an interaction "
            f"since its last curation and none for {settings.idle_threshold_secs} s, unless "
            f"curated in the last {settings.idle_floor_secs} s or already queued/running; at "
            f"most {settings.idle_max_runs_per_tick} per tick."
        ),
    )
    def idle_namespace_sensor(context: dg.SensorEvaluationContext, memory_store: MemoryStore):
        if not settings.curation_enabled:
            return dg.SkipReason(DISABLED_MESSAGE)
        now = datetime.now(UTC)
        with memory_store.connection() as conn:
            candidates = load_candidates(
                conn, interacted_before=now - timedelta(seconds=settings.idle_threshold_secs)
            )
        plan = plan_idle_runs(
            candidates, now=now, idle_threshold_secs=settings.idle_threshold_secs,
            idle_floor_secs=settings.idle_floor_secs, cap=settings.idle_max_runs_per_tick,
            cursor=context.cursor,
            in_flight=namespaces_with_unfinished_runs(context.instance) if candidates else (),
        )
        requests = []
        for state in plan.due:
            if (key := partition_key_or_warn(context.log, state.tenant_id, state.namespace)) is None:
                continue
            requests.append(curation_run_request(
                key, state.tenant_id, state.namespace, trigger="idle", reason="idle",
                run_key=f"idle:{key}:{state.last_interaction_at.isoformat()}", priority=IDLE_PRIORITY,
            ))
        if requests:
            register_partitions(context.instance, [request.partition_key for request in requests])
        skipped = ", ".join(f"{count} {reason}" for reason, count in sorted(plan.skipped.items()))
        return dg.SensorResult(
            run_requests=requests,
            cursor=plan.cursor,
            skip_reason=None if requests else f"no idle namespace to curate ({skipped or 'none pending'})",
        )

    return idle_namespace_sensor


def build_discovery_sensor(settings: TriggerSettings) -> dg.SensorDefinition:
    @dg.sensor(
        name=DISCOVERY_SENSOR_NAME,
        # It requests no run, but it adds the partitions curate_namespace runs: naming the job
        # lists it with the schedule and the idle sensor on the asset's Automation panel.
        job_name=JOB_NAME,
        minimum_interval_seconds=max(settings.sensor_interval_secs, 30),
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Registers every namespace of the memory store as a TENANT:NAMESPACE partition of curate_namespace.",
    )
    def namespace_discovery_sensor(context: dg.SensorEvaluationContext, memory_store: MemoryStore):
        keys, problems = discover_partition_keys(memory_store.settings())
        for problem in problems:
            context.log.warning(problem)
        known = set(context.instance.get_dynamic_partitions(PARTITIONS_DEF_NAME))
        new = [key for key in keys if key not in known]
        if not new:
            return dg.SensorResult(skip_reason=f"no new namespace ({len(keys)} known)")
        return dg.SensorResult(dynamic_partitions_requests=[namespace_partitions.build_add_request(new)])

    return namespace_discovery_sensor

"""`curation_schedule`: every CURATOR_INTERVAL_SECS, one run per namespace that has something to do.

`build_schedule_from_partitioned_job` refuses dynamic partitions, so the schedule is written by
hand: it reads the namespaces that may be due (store/triggers.py, through partial indexes),
decides with core/trigger_policy.py, registers any namespace Dagster does not know yet
(Dagster refuses a run request for an unknown partition), and requests one run per namespace.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg

from curation_pipeline.config.triggers import TriggerSettings
from curation_pipeline.core.cron import interval_to_cron
from curation_pipeline.core.trigger_policy import CEILING, plan_scheduled_runs
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.partitions import register_partitions
from curation_pipeline.defs.resources import MemoryStore
from curation_pipeline.defs.trigger_runs import (
    SCHEDULED_PRIORITY,
    curation_run_request,
    namespaces_with_unfinished_runs,
    partition_key_or_warn,
)
from curation_pipeline.store.triggers import load_candidates

SCHEDULE_NAME = "curation_schedule"
DISABLED_MESSAGE = "curation is disabled (CURATOR_ENABLED=false)"


def _waiting_order(run) -> tuple:
    last = run.state.last_curated_at
    return (last is not None, last or datetime.min.replace(tzinfo=UTC), run.state.name)


def build_curation_schedule(settings: TriggerSettings) -> dg.ScheduleDefinition:
    """The schedule for these settings; SettingsError if the interval is not a cron period."""
    cron = interval_to_cron(settings.interval_secs)

    @dg.schedule(
        name=SCHEDULE_NAME,
        cron_schedule=cron,
        execution_timezone="UTC",
        job_name=JOB_NAME,
        default_status=dg.DefaultScheduleStatus.RUNNING,  # it runs itself: nothing to click
        description=(
            f"Every {settings.interval_secs} s ({cron}): one run per enabled namespace with an "
            f"interaction since its last curation, never curated, or not curated for "
            f"{settings.ceiling_secs} s (0 = no ceiling)."
        ),
    )
    def curation_schedule(context: dg.ScheduleEvaluationContext, memory_store: MemoryStore):
        if not settings.curation_enabled:
            return dg.SkipReason(DISABLED_MESSAGE)  # before any IO: disabled costs nothing
        now = context.scheduled_execution_time or datetime.now(UTC)
        overdue_before = now - timedelta(seconds=settings.ceiling_secs) if settings.ceiling_secs else None
        with memory_store.connection() as conn:
            candidates = load_candidates(conn, overdue_before=overdue_before)
        planned = plan_scheduled_runs(
            candidates, now=now, ceiling_secs=settings.ceiling_secs,
            in_flight=namespaces_with_unfinished_runs(context.instance) if candidates else (),
        )
        if len(planned) > settings.schedule_max_runs_per_tick:
            context.log.info(
                f"{len(planned)} namespaces are due; requesting {settings.schedule_max_runs_per_tick} "
                "now (CURATOR_SCHEDULE_MAX_RUNS_PER_TICK), the rest at the next tick"
            )
            # Longest-waiting first (never curated before all), so busy namespaces that are due
            # at every tick cannot starve the others.
            planned = sorted(planned, key=_waiting_order)[: settings.schedule_max_runs_per_tick]
        requests = []
        for run in planned:
            if (key := partition_key_or_warn(context.log, run.state.tenant_id, run.state.namespace)) is None:
                continue
            requests.append(curation_run_request(
                key, run.state.tenant_id, run.state.namespace,
                # A namespace past the ceiling is curated however busy it is: say so in the Runs list.
                trigger=CEILING if run.reason == CEILING else "schedule",
                reason=run.reason, run_key=f"schedule:{key}", priority=SCHEDULED_PRIORITY,
            ))
        if not requests:
            return dg.SkipReason(f"no namespace has anything to do ({len(candidates)} read)")
        register_partitions(context.instance, [request.partition_key for request in requests])
        return requests

    return curation_schedule

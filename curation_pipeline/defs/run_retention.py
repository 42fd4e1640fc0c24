"""Run history stays bounded: Dagster runs older than CURATION_RUN_RETENTION_DAYS are deleted,
every day by `run_retention_schedule` (the daemon) and on demand by `curation-pipeline
prune-runs`; which ones is core/run_retention.py's decision.

A deleted run takes its event log with it (its step events and the `memory_namespace`
materialization it recorded: the asset's event history then spans the retention; the
namespace's health stays in the store's activity log, `curation-pipeline health`). The run's
page answers "No run found: the run with this ID does not exist or has been cleaned up", and
`curation-pipeline undo --run ID` still works: undo reads the store's revisions, not Dagster.
"""

# No `from __future__ import annotations`: Dagster reads the op's annotations at definition time.
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import dagster as dg

from curation_pipeline.config.runs import RunSettings
from curation_pipeline.core.run_retention import ancestors, plan_retention

JOB_NAME = "prune_run_history"
SCHEDULE_NAME = "run_retention_schedule"
FINISHED = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]
# Runs that may still be re-executed (from failure, or once they end).
REEXECUTABLE = [
    dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
BATCH = 500  # runs read per query


@dataclass
class RetentionReport:
    older_than: timedelta
    deleted: list[str] = field(default_factory=list)
    kept_for_reexecution: list[str] = field(default_factory=list)

    def summary(self, *, dry_run: bool = False) -> str:
        verb = "would delete" if dry_run else "deleted"
        days = self.older_than / timedelta(days=1)
        return (f"{verb} {len(self.deleted)} Dagster run(s) older than {days:g} day(s); kept "
                f"{len(self.kept_for_reexecution)} older one(s) that a failure to re-execute still needs")


def prune_run_history(instance: dg.DagsterInstance, *, days: float | None = None,
                      older_than: timedelta | None = None, dry_run: bool = False,
                      now: datetime | None = None) -> RetentionReport:
    """Delete the finished runs that ended more than `days` (or `older_than`) ago, except those
    still needed to re-execute a younger failure."""
    older_than = older_than if older_than is not None else timedelta(days=days)
    cutoff = (now or datetime.now(UTC)) - older_than
    needed = ancestors(_parents_of_open_runs(instance, cutoff), _ParentLookup(instance))
    # All ids first, then the deletions: paging while deleting would lose the page's cursor.
    plan = plan_retention(_old_finished_runs(instance, cutoff), needed)
    if not dry_run:
        for run_id in plan.delete:
            instance.delete_run(run_id)
    return RetentionReport(older_than, list(plan.delete), list(plan.kept_for_reexecution))


def _parents_of_open_runs(instance: dg.DagsterInstance, cutoff: datetime) -> list[str]:
    """The parents of every run that may still be re-executed: younger than the cutoff, or not
    finished whatever its age."""
    parents = []
    for filters in (dg.RunsFilter(statuses=REEXECUTABLE, updated_after=cutoff),
                    dg.RunsFilter(statuses=[s for s in REEXECUTABLE if s not in FINISHED])):
        parents += [record.dagster_run.parent_run_id for record in instance.get_run_records(filters)
                    if record.dagster_run.parent_run_id]
    return parents


class _ParentLookup:
    """parent_of[run_id] for core.ancestors, read from Dagster as the chains are walked."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self._instance = instance

    def get(self, run_id: str, default=None) -> str | None:
        run = self._instance.get_run_by_id(run_id)
        return run.parent_run_id if run is not None else default


def _old_finished_runs(instance: dg.DagsterInstance, cutoff: datetime) -> Iterator[str]:
    """The ids of the finished runs last updated before the cutoff, oldest first, read in pages."""
    cursor = None
    while True:
        records = instance.get_run_records(
            dg.RunsFilter(statuses=FINISHED, updated_before=cutoff), limit=BATCH, cursor=cursor, ascending=True,
        )
        yield from (record.dagster_run.run_id for record in records)
        if len(records) < BATCH:
            return
        cursor = records[-1].dagster_run.run_id


@dg.op(description="Deletes Dagster runs older than CURATION_RUN_RETENTION_DAYS, except those a "
       "younger failure's re-execution needs; memory revisions are never touched.")
def prune_runs(context: dg.OpExecutionContext) -> None:
    # Read when the run executes, not when the code loads: a worker serves many runs.
    days = RunSettings.from_environment().run_retention_days
    if days == 0:
        context.log.info("run retention is off (CURATION_RUN_RETENTION_DAYS=0)")
        return
    report = prune_run_history(context.instance, days=days)
    context.add_output_metadata({"deleted": len(report.deleted), "kept_for_reexecution": len(report.kept_for_reexecution),
                                 "retention_days": days})
    context.log.info(report.summary())


@dg.job(name=JOB_NAME, executor_def=dg.in_process_executor,
        description="Run history stays bounded: deletes Dagster runs older than CURATION_RUN_RETENTION_DAYS.")
def prune_run_history_job():
    prune_runs()


run_retention_schedule = dg.ScheduleDefinition(
    name=SCHEDULE_NAME, job=prune_run_history_job, cron_schedule="17 3 * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every day at 03:17 UTC: delete Dagster runs older than CURATION_RUN_RETENTION_DAYS (0: none).",
)

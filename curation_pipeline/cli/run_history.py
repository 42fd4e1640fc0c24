"""Recent curation, preview and undo runs, for `curation-pipeline runs`.

The activity log knows what each run did in each namespace, including undos made from the
command line, which are no Dagster runs; Dagster knows each run's status and times, including
runs that failed before their first step (a busy namespace) and so wrote no activity row. A
line is one run in one namespace, from both.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import dagster as dg

from curation_pipeline.cli.dagster_home import prepare_dagster_home
from curation_pipeline.config.settings import Settings
from curation_pipeline.core.partition_keys import parse_partition_key, partition_key
from curation_pipeline.core.render.tables import run_counts
from curation_pipeline.core.undo_outcome import undo_status
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.partitions import PARTITION_TAG
from curation_pipeline.defs.previews import PREVIEW_JOB_NAME, is_preview
from curation_pipeline.defs.run_tags import RETRY_NUMBER_TAG
from curation_pipeline.service import inspection
from curation_pipeline.service.inspection import CURATION_ACTION, PREVIEW_ACTION, UNDO_ACTION
from curation_pipeline.service.steps.registry import STEPS

KINDS = {CURATION_ACTION: "curation", PREVIEW_ACTION: "preview", UNDO_ACTION: "undo"}
PARTITIONED_JOBS = (JOB_NAME, PREVIEW_JOB_NAME)


def recent_runs(settings: Settings, *, partition: str | None = None, limit: int = 20) -> list[dict]:
    """The `limit` latest runs (of one partition, or all), newest first, as runs_table rows."""
    tenant_id, namespace = parse_partition_key(partition) if partition else (None, None)
    rows = inspection.recent_runs(settings, tenant_id=tenant_id, namespace=namespace, limit=limit)
    prepare_dagster_home(settings)
    with dg.DagsterInstance.get() as instance:
        records = {r.dagster_run.run_id: r for r in instance.get_run_records(
            dg.RunsFilter(run_ids=[row["run_id"] for row in rows]))} if rows else {}
        for job in PARTITIONED_JOBS:
            tags = {PARTITION_TAG: partition} if partition else {}
            for record in instance.get_run_records(dg.RunsFilter(job_name=job, tags=tags), limit=limit):
                records.setdefault(record.dagster_run.run_id, record)
    lines = [_from_row(row, records.get(row["run_id"])) for row in rows]
    seen = {row["run_id"] for row in rows}
    lines += [_from_record(record) for run_id, record in records.items() if run_id not in seen]
    lines.sort(key=lambda line: line["started_at"].timestamp() if line["started_at"] else 0, reverse=True)
    return lines[:limit]


def _from_row(row: Mapping, record: dg.RunRecord | None) -> dict:
    metadata = row["metadata"] or {}
    started, duration = row["started_at"], metadata.get("duration_s")
    if record is not None and record.start_time:
        started = _timestamp(record.start_time)
        if record.end_time:
            duration = record.end_time - record.start_time
    return {
        "run_id": row["run_id"],
        "partition": partition_key(row["tenant_id"], row["namespace"]),
        "kind": _kind(KINDS[row["action"]], record),
        "status": _status(row["action"], metadata, record),
        "started_at": started,
        "duration_s": round(duration, 1) if duration is not None else None,
        "preview": row["action"] == PREVIEW_ACTION,
        "counts": run_counts(row["action"], metadata, STEPS),
    }


def _from_record(record: dg.RunRecord) -> dict:
    """A Dagster run with no activity row: it never got to a step (or is about to)."""
    run = record.dagster_run
    ended = record.end_time and record.start_time and record.end_time - record.start_time
    return {
        "run_id": run.run_id,
        "partition": run.tags.get(PARTITION_TAG, "-"),
        "kind": _kind("preview" if is_preview(run) else "curation", record),
        "status": run.status.value,
        "started_at": _timestamp(record.start_time or record.create_timestamp.timestamp()),
        "duration_s": round(ended, 1) if ended else None,
        "preview": is_preview(run),
        "counts": "-",
    }


def _kind(kind: str, record: dg.RunRecord | None) -> str:
    """`retry` for a curation run the daemon's run retries launched (its process had died)."""
    if kind == "curation" and record is not None and RETRY_NUMBER_TAG in record.dagster_run.tags:
        return "retry"
    return kind


def _status(action: str, metadata: Mapping, record: dg.RunRecord | None) -> str:
    """An undo's own outcome (PARTIAL when it left rows alone) before its Dagster run's status:
    an undo job that left a row alone still ends SUCCESS in Dagster. Without a Dagster run (an
    undo from the command line, a run whose record was pruned): what the row says."""
    if action == UNDO_ACTION:
        outcome = undo_status(metadata)
        if outcome == "partial" or record is None:
            return outcome.upper()
    if record is not None:
        return record.dagster_run.status.value
    return str(metadata.get("status", "-")).upper()


def _timestamp(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)

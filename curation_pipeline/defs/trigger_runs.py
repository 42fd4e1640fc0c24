"""What the schedule and the idle sensor share on the Dagster side: which namespaces already have
a run queued or in progress, and how a curation run request looks."""

from __future__ import annotations

import dagster as dg

from curation_pipeline.core.partition_keys import InvalidNameError, parse_partition_key, partition_key
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.partitions import PARTITION_TAG
from curation_pipeline.defs.run_tags import (  # noqa: F401  (the schedule and sensors import them from here)
    NAMESPACE_TAG,
    PRIORITY_TAG,
    REASON_TAG,
    TENANT_TAG,
    TRIGGER_TAG,
)

SCHEDULED_PRIORITY = 0
IDLE_PRIORITY = 10  # an idle namespace is the best moment to curate: ahead of routine runs

# Every status of a run that has not finished (queued, starting, running, being canceled).
UNFINISHED_STATUSES = [
    dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING,
]


def namespaces_with_unfinished_runs(instance: dg.DagsterInstance) -> set[tuple[str, str]]:
    """(tenant, namespace) of every curation run not finished yet, however it was launched.

    One query whose size follows the runs in flight, not the number of namespaces.
    """
    names = set()
    for run in instance.get_runs(dg.RunsFilter(job_name=JOB_NAME, statuses=UNFINISHED_STATUSES)):
        try:
            names.add(parse_partition_key(run.tags.get(PARTITION_TAG, "")))
        except InvalidNameError:
            continue  # a run without a (valid) partition curates no namespace
    return names


def curation_run_request(
    key: str, tenant_id: str, namespace: str, *, trigger: str, reason: str, run_key: str, priority: int
) -> dg.RunRequest:
    return dg.RunRequest(
        run_key=run_key,
        partition_key=key,
        tags={
            TENANT_TAG: tenant_id,
            NAMESPACE_TAG: namespace,
            TRIGGER_TAG: trigger,
            REASON_TAG: reason,
            PRIORITY_TAG: str(priority),
        },
    )


def partition_key_or_warn(log, tenant_id: str, namespace: str) -> str | None:
    """The namespace's partition key; None, with a warning in the tick's log, for a name that
    cannot be one (the store accepts names Dagster's partitions do not)."""
    try:
        return partition_key(tenant_id, namespace)
    except InvalidNameError as error:
        log.warning(f"not curating {tenant_id!r}:{namespace!r}: {error}")
        return None

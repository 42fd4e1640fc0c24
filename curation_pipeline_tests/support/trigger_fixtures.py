"""Helpers for the schedule and sensor tests: namespace_activity rows and in-flight runs."""

from __future__ import annotations

from datetime import datetime

import dagster as dg
import psycopg
from dagster._core.remote_origin import (
    RegisteredCodeLocationOrigin,
    RemoteJobOrigin,
    RemoteRepositoryOrigin,
)

from curation_pipeline.cli.launcher import LOCATION_NAME
from curation_pipeline.config.settings import Settings, load_settings
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.definitions import load_defs
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.partitions import PARTITION_TAG, PARTITIONS_DEF_NAME
from curation_pipeline.defs.resources import MemoryStore

UNREACHABLE_STORE = MemoryStore(database_url="postgresql://nobody@127.0.0.1:1/none?connect_timeout=1")


def trigger_settings(**overrides) -> Settings:
    return load_settings().with_changes(**overrides)


def set_activity(
    conn: psycopg.Connection, namespace: str, *, tenant: str = "acme",
    interaction: datetime | None = None, curated: datetime | None = None, enabled: bool = True,
) -> None:
    """A namespace_activity row as the agents' side and a finished curation would leave it.

    With no activity_log row for the run, the curation counts as started when it finished.
    """
    conn.execute(
        """
        INSERT INTO namespace_activity
            (tenant_id, namespace, last_interaction_at, last_curated_at, last_curation_run_id, curation_enabled)
        VALUES (%s, %s, %s, %s, %s, %s)
        ON CONFLICT (tenant_id, namespace) DO UPDATE SET
            last_interaction_at = EXCLUDED.last_interaction_at, last_curated_at = EXCLUDED.last_curated_at,
            last_curation_run_id = EXCLUDED.last_curation_run_id, curation_enabled = EXCLUDED.curation_enabled
        """,
        (tenant, namespace, interaction, curated, "an-earlier-run" if curated else None, enabled),
    )


def queue_run(instance: dg.DagsterInstance, namespace: str, *, tenant: str = "acme",
              status: dg.DagsterRunStatus = dg.DagsterRunStatus.QUEUED) -> dg.DagsterRun:
    """A curation run of the namespace waiting in the queue (or in another state)."""
    key = partition_key(tenant, namespace)
    if not instance.has_dynamic_partition(PARTITIONS_DEF_NAME, key):
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, [key])
    # A queued run must name the code location it came from (as the daemon's runs do).
    origin = RemoteJobOrigin(
        RemoteRepositoryOrigin(RegisteredCodeLocationOrigin(LOCATION_NAME), "__repository__"), JOB_NAME
    )
    return instance.create_run_for_job(
        job_def=load_defs().resolve_job_def(JOB_NAME), tags={PARTITION_TAG: key}, status=status,
        remote_job_origin=origin,
    )


def requested_namespaces(run_requests) -> list[str]:
    return sorted(request.tags["curation/namespace"] for request in run_requests)

"""Run the curation job for namespaces through Dagster, recorded in DAGSTER_HOME.

Used by `curation-pipeline run` and `demo`: register the namespaces as dynamic partitions,
launch one run per partition from the code location (so the UI shows them like its own runs),
wait, and collect each cycle's activity row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import dagster as dg

from curation_pipeline.cli.dagster_home import prepare_dagster_home
from curation_pipeline.cli.launcher import (
    code_location_workspace,
    launch_partition_runs,
    wait_for_runs,
)
from curation_pipeline.config.settings import Settings
from curation_pipeline.core.partition_keys import parse_partition_key
from curation_pipeline.defs.partitions import register_partitions
from curation_pipeline.store import activity
from curation_pipeline.store.database import ensure_database, open_connection

QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
DRY_RUN = {"resources": {"memory_store": {"config": {"dry_run": True}}}}


@dataclass(frozen=True)
class CycleResult:
    partition_key: str
    run_id: str
    run_status: str
    metadata: Mapping | None


def run_partitions(
    settings: Settings,
    keys: Sequence[str],
    *,
    run_config: Mapping | None = None,
    max_parallel: int = 4,
    verbose: bool = False,
    dry_run: bool = False,
) -> list[CycleResult]:
    """Curate each partition once through Dagster and return what every cycle did.

    Unless `verbose`, run processes log only warnings to this terminal; every event is still
    stored in Dagster and shown in the UI.
    """
    if not verbose:
        run_config = {**QUIET_CONSOLE, **(run_config or {})}
    if dry_run:
        run_config = {**(run_config or {}), **DRY_RUN}
    keys = list(dict.fromkeys(keys))  # one run per namespace, even if named twice
    for key in keys:
        parse_partition_key(key)  # a clear error before anything is launched
    prepare_dagster_home(settings)
    results = []
    with dg.DagsterInstance.get() as instance:
        register_partitions(instance, keys)
        with code_location_workspace(instance) as workspace:
            # Each run is a process; launching in waves keeps a large --all from forking hundreds.
            for start in range(0, len(keys), max_parallel):
                wave = list(keys[start : start + max_parallel])
                run_ids = launch_partition_runs(instance, workspace, wave, run_config=run_config)
                statuses = wait_for_runs(instance, run_ids)
                results.extend(
                    _collect(settings, key, run_id, statuses[run_id].value, preview=dry_run)
                    for key, run_id in zip(wave, run_ids)
                )
    return results


def _collect(settings: Settings, key: str, run_id: str, run_status: str, *, preview: bool) -> CycleResult:
    tenant_id, namespace = parse_partition_key(key)
    read = activity.preview_metadata if preview else activity.cycle_metadata
    with open_connection(ensure_database(settings)) as conn:
        metadata = read(conn, run_id, tenant_id, namespace)
    return CycleResult(key, run_id, run_status, metadata)

"""`memory_namespace`: the long-term memory of one tenant/namespace, as a partitioned asset.

The curation job is an op job, so the asset is declared here (an asset spec with the job's
dynamic partitions) and step 7 records each finished cycle on its partition as a
materialization carrying the namespace's health numbers (core/health.py).

Why a materialization and not an observation: a cycle rewrites the namespace's memory (merges,
summaries, vectors), which is what a materialization says, while an observation says something
changed outside Dagster. It also gives the partition its "materialized" status and makes it the
latest event Dagster plots per partition, and the asset checks logged by the same step are
evaluated against it, so the UI shows them as current.
"""

from __future__ import annotations

import dagster as dg

from curation_pipeline.core.health import HEALTH_FIELDS, numeric_metadata
from curation_pipeline.defs.partitions import namespace_partitions

MEMORY_NAMESPACE = dg.AssetKey("memory_namespace")

memory_namespace = dg.AssetSpec(
    MEMORY_NAMESPACE,
    partitions_def=namespace_partitions,
    group_name="curation",
    kinds={"postgres"},
    description=(
        "The long-term memory of one tenant/namespace (memory_nodes in Postgres + pgvector). Every "
        "curation cycle of curate_namespace records a materialization of the namespace's partition "
        "with its health after the cycle: "
        + "; ".join(f"{field.key}: {field.meaning}" for field in HEALTH_FIELDS)
        + ". Plots: the asset's Plots tab; checks: the Checks tab."
    ),
)


def health_materialization(partition_key: str, health: dict, *, cycle_status: str,
                           run_ids: tuple[str, ...]) -> dg.AssetMaterialization:
    """The cycle's materialization of its partition: every health number, plus which runs made
    the cycle (more than one after a re-execution from failure)."""
    return dg.AssetMaterialization(
        asset_key=MEMORY_NAMESPACE,
        partition=partition_key,
        description=f"curation cycle: {cycle_status}",
        metadata={
            **numeric_metadata(health),
            "cycle_status": dg.MetadataValue.text(cycle_status),
            "cycle_runs": dg.MetadataValue.text(", ".join(run_ids)),
        },
    )

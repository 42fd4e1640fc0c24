"""`memory_namespace`: the long-term memory of one tenant/namespace, as a partitioned asset.

The asset itself is graph-backed (defs/job.py): the curation steps are its ops, and step 7's
result output is its materialization, carrying the namespace's health after the cycle
(core/health.py). This module holds what describes it: its key, its description and owners, the
typed metadata of a cycle, and the observation an undo records.

Why a materialization: a cycle rewrites the namespace's memory (merges, summaries, vectors),
which is what a materialization says. An undo is recorded as an observation: it restores rows
outside a cycle, and must not count as a curation of the partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg

from curation_pipeline.core.health import HealthField, health_fields
from curation_pipeline.core.step_spec import StepSpec
from curation_pipeline.service.steps.registry import STEPS

MEMORY_NAMESPACE = dg.AssetKey("memory_namespace")

DESCRIPTION = (
    "The long-term memory of one namespace (partition TENANT:NAMESPACE): memory_nodes in "
    "Postgres with pgvector. "
    "Materializing a partition runs one curation cycle of it (the seven steps of its graph); "
    "nothing is deleted and every change can be undone. What each number of a materialization "
    "means: the `metrics` entry at the end of Metadata."
)
OWNERS = ["team:agent-memory"]
TAGS = {"domain": "agent-memory", "store": "pgvector"}
KINDS = {"postgres", "polars"}
GROUP = "curation"


def metadata_label(field: HealthField) -> str:
    """A share is shown in percent, so its label says so."""
    return f"{field.key} (%)" if field.unit == "share" else field.key


def _metrics_markdown(specs: Sequence[StepSpec] = STEPS) -> str:
    rows = "\n".join(f"| `{metadata_label(f)}` | {f.meaning} |" for f in health_fields(specs))
    return ("Every materialization (one curation cycle) records these numbers; Metadata -> Plots "
            "draws each one.\n\n| metadata key | meaning |\n|---|---|\n"
            f"{rows}\n| `cycle_status` | success, or partial with the failed step |\n"
            "| `cycle_runs` | the runs that made the cycle (more than one after a re-execution) |")


DEFINITION_METADATA = {"metrics": dg.MetadataValue.md(_metrics_markdown())}


def _typed(field: HealthField, value) -> dg.MetadataValue:
    if field.unit == "share":
        return dg.MetadataValue.float(round(100.0 * float(value), 1))
    if field.unit == "seconds":
        return dg.MetadataValue.float(round(float(value), 2))
    return dg.MetadataValue.int(int(value))


def health_metadata(health: Mapping, specs: Sequence[StepSpec] = STEPS) -> dict[str, dg.MetadataValue]:
    """The health record as typed Dagster metadata; a rate that has no data this cycle is left
    out rather than plotted as 0 (which would read as "every answer rejected")."""
    return {metadata_label(f): _typed(f, health[f.key]) for f in health_fields(specs)
            if health.get(f.key) is not None}


def cycle_metadata(health: Mapping, *, cycle_status: str, run_ids: tuple[str, ...]) -> dict:
    """The cycle's materialization metadata: every health number, plus which runs made the cycle."""
    return {
        **health_metadata(health),
        "cycle_status": dg.MetadataValue.text(cycle_status),
        "cycle_runs": dg.MetadataValue.text(", ".join(run_ids)),
    }


def undo_observation(partition_key: str, *, undone_run_id: str, status: str, restored: int,
                     left_alone: int, health: Mapping | None = None) -> dg.AssetObservation:
    """What an undo restored, on the partition's history (an observation: not a cycle), with the
    namespace's health as the undo left it (`health`), under the same keys as a cycle's, so the
    asset's plots follow the namespace through the undo."""
    return dg.AssetObservation(
        asset_key=MEMORY_NAMESPACE,
        partition=partition_key,
        description=f"undo of run {undone_run_id}: {status}",
        metadata={
            "undone_run": dg.MetadataValue.dagster_run(undone_run_id),
            "undo_status": dg.MetadataValue.text(status),
            "rows_restored": dg.MetadataValue.int(restored),
            "rows_left_alone": dg.MetadataValue.int(left_alone),
            **health_metadata(health or {}),
        },
    )

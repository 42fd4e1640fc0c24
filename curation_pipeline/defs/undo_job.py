"""`undo_curation_run`: undo a run from the Dagster UI (launchpad config: the run id).

Not partitioned: a run id already says which namespaces it touched; `namespace` narrows it.
"""

# No `from __future__ import annotations`: Dagster reads these annotations at definition time.
import dagster as dg
from pydantic import Field

from curation_pipeline.core.partition_keys import InvalidNameError, partition_key
from curation_pipeline.core.render.tables import undo_table
from curation_pipeline.core.render.undo import forced_lines, left_alone_lines
from curation_pipeline.defs.assets import undo_observation
from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
from curation_pipeline.defs.resources import MemoryStore
from curation_pipeline.service.undo import undo_run


class UndoConfig(dg.Config):
    run_id: str = Field(description="the curation run (or undo) to undo")
    namespace: str | None = Field(None, description="only this partition key TENANT:NAMESPACE")
    force: bool = Field(False, description="also restore rows changed since by someone else (a restore "
                                           "that would leave a merged node's text in no active node is "
                                           "still held back)")


@dg.op
def undo_run_op(context: dg.OpExecutionContext, config: UndoConfig, memory_store: MemoryStore) -> None:
    """Restore every row the run changed; rows changed since are listed and left (unless force),
    and so are rows whose restore would leave a merged node's text in no active node."""
    reports = undo_run(
        memory_store.url(), config.run_id, partition_key=config.namespace, force=config.force,
        undo_id=context.run_id, lock_timeout_s=memory_store.lock_timeout_s,
    )
    conflicts = [conflict for report in reports for conflict in report.conflicts]
    context.add_output_metadata({
        "undone_run_id": config.run_id,
        # success, partial (rows left alone: the run itself still succeeds) or nothing (no record)
        "status": ", ".join(sorted({report.status for report in reports})),
        "summary": dg.MetadataValue.md(f"```\n{undo_table(reports)}\n```"),
        "conflicts": dg.MetadataValue.json(conflicts),
        "forced": dg.MetadataValue.json([row for report in reports for row in report.forced]),
        "held": dg.MetadataValue.json([row for report in reports for row in report.held]),
        "moved": dg.MetadataValue.json([row for report in reports for row in report.moved]),
        # Every report whole: what `curation-pipeline undo` prints after launching this job.
        "reports": dg.MetadataValue.json([report.as_dict() for report in reports]),
    })
    for line in forced_lines(reports):
        context.log.info(line)
    for line in left_alone_lines(reports):
        context.log.warning(line)
    _observe_restored(context, reports)


def _observe_restored(context: dg.OpExecutionContext, reports) -> None:
    """Each namespace the undo restored rows in gets an observation on its memory_namespace
    partition, so the asset's history shows the undo next to the cycles (a namespace whose
    partition was retired, or whose names cannot be a partition key, has no partition to show it)."""
    for report in reports:
        if report.status == "nothing":
            continue
        try:
            key = partition_key(report.tenant_id, report.namespace)
        except InvalidNameError:
            continue
        if not context.instance.has_dynamic_partition(PARTITIONS_DEF_NAME, key):
            continue
        context.log_event(undo_observation(
            key, undone_run_id=report.undone_run_id, status=report.status,
            restored=len(report.nodes_restored),
            left_alone=len(report.conflicts) + len(report.held) + len(report.moved),
            health=report.health,
        ))


@dg.job(executor_def=dg.in_process_executor, description="Undo a curation run (or an undo).")
def undo_curation_run():
    undo_run_op()

"""The `curate_namespace` job: the seven steps (and 6b) wired by what each needs to run after;
`preview_namespace` runs the same graph as a preview that writes nothing.

    reclassify_stale ────────────────────────────────────────────────────────────────────┐
    consolidate_duplicates ─> summarize_verbose ─┬─> revectorize ─┬──────────────────────┤
                                                 │                ├─> associate_concepts ┼─> log_curation_activity
                                                 └─> sync_graph ──┴──────────────────────┤
    mark_stale_confidence ───────────────────────────────────────────────────────────────┘

Merging may leave long merged text, so summarizing follows it; both clear embeddings, so
revectorizing follows them; the graph mirrors text and archive state, so it syncs after them.
Associations need the fresh vectors and the synced vertices, so they come after both.
Steps 1 and 5 need nothing from the others: if any step fails, the independent ones still run
(Dagster skips only a failed op's dependents), and the cycle row records the failure.
"""

from __future__ import annotations

import dagster as dg

from curation_pipeline.defs.ops import (
    associate_concepts,
    consolidate_duplicates,
    log_curation_activity,
    mark_stale_confidence,
    reclassify_stale,
    revectorize,
    summarize_verbose,
    sync_graph,
)
from curation_pipeline.defs.partitions import namespace_partitions
from curation_pipeline.defs.previews import PREVIEW_JOB_NAME, PREVIEW_TAGS

JOB_NAME = "curate_namespace"


@dg.graph
def curation_cycle():
    merged = consolidate_duplicates()
    summarized = summarize_verbose(after_merges=merged)
    embedded = revectorize(after_rewrites=summarized)
    synced = sync_graph(after_rewrites=summarized)
    log_curation_activity(
        reclassified=reclassify_stale(),
        revectorized=embedded,
        confidence_marked=mark_stale_confidence(),
        graph_synced=synced,
        associated=associate_concepts(after_sync=synced, after_embedding=embedded),
    )


_STEPS = ("1 reclassify_stale, 2 consolidate_duplicates, 3 summarize_verbose, 4 revectorize, "
          "5 mark_stale_confidence, 6 sync_graph, 6b associate_concepts, 7 log_curation_activity")

curate_namespace = curation_cycle.to_job(
    name=JOB_NAME,
    partitions_def=namespace_partitions,
    # Steps are short and share one namespace lock: separate processes would only add seconds
    # of start-up per step.
    executor_def=dg.in_process_executor,
    description=(
        f"One curation cycle of one tenant/namespace: {_STEPS}. Nothing is deleted; every change "
        "is recorded in node_revisions and can be undone (curation-pipeline undo --run RUN_ID). "
        "Each finished cycle records the namespace's health on the memory_namespace asset."
    ),
)

# The same graph, writing nothing: a job of its own keeps previews off curate_namespace's
# partition status and off the memory_namespace asset (defs/previews.py).
preview_namespace = curation_cycle.to_job(
    name=PREVIEW_JOB_NAME,
    partitions_def=namespace_partitions,
    executor_def=dg.in_process_executor,
    tags=PREVIEW_TAGS,
    description=(
        f"Preview of one curation cycle of one tenant/namespace ({_STEPS}): every step plans and "
        "shows its changes in one database transaction that is rolled back. Preview, nothing "
        "written: only a curation_preview activity row is kept."
    ),
)

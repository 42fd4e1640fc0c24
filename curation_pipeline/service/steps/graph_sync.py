"""Step 6, `sync_graph`: upsert graph vertices for every node changed since the last sync
(capped; planning and the cursor: core/steps/graph_sync.py).

In steady state one batch of at most `cap` nodes (the reference's 100). While more wait (a bulk
load, a namespace never synced), the step goes on in batches of `BACKFILL_BATCH`, each its own
transaction, up to `backfill_cap` nodes a cycle: the graph of a 200,000-node namespace catches
up in ten cycles, not two thousand, and no transaction holds more than one batch.
"""

from __future__ import annotations

from dataclasses import dataclass

from curation_pipeline.config.op_config import GraphSyncConfig
from curation_pipeline.core.step_spec import GRAPH, GraphMirrorCounts, StepSpec, SummaryColumn, count
from curation_pipeline.core.steps.graph_sync import SyncPosition, plan_graph_sync
from curation_pipeline.service.graph_mirror import follow_in_graph_backend
from curation_pipeline.service.step_run import StepRun
from curation_pipeline.service.steps import summarize
from curation_pipeline.store import graph

BACKFILL_BATCH = 1_000

_SUMMED = ("nodes_considered", "vertices_created", "vertices_updated", "vertices_archived", "edges_created")


def sync_graph(run: StepRun, config) -> dict:
    def batch(conn, cap: int) -> dict:
        position = graph.load_sync_position(conn, run.scope)
        after_cursor, from_pending, xmax, in_progress = graph.load_changes(conn, run.scope, position, cap)
        if position.usable_with(xmax) != position:  # ids from another server: start over
            position = SyncPosition()
            after_cursor, from_pending, xmax, in_progress = graph.load_changes(conn, run.scope, position, cap)
        plan = plan_graph_sync(after_cursor, from_pending, position=position, snapshot_xmax=xmax,
                               in_progress=in_progress, cap=cap)
        return {**graph.apply_graph_sync(conn, run.scope, plan), **follow_in_graph_backend(conn, run)}

    totals: dict = {}
    cap, batches = config.cap, 0
    while True:
        with run.transaction() as conn:
            counts = batch(conn, cap)
            batches += 1
            totals = _add(totals, counts)
            budget = config.backfill_cap - totals["nodes_considered"]
            catching_up = counts["remaining"] and config.cap > 0 and budget > 0
            if not catching_up:
                totals = {**totals, "batches": batches}
                run.finish(conn, totals)
                return totals
        cap = min(BACKFILL_BATCH, budget)


def _add(totals: dict, counts: dict) -> dict:
    """This batch's counts added to the earlier batches' (the rest are the last batch's)."""
    return {**totals, **counts, **{key: totals.get(key, 0) + counts.get(key, 0) for key in _SUMMED if key in counts}}


@dataclass(frozen=True, kw_only=True)
class GraphSyncCounts(GraphMirrorCounts):
    nodes_considered: int | None = count("nodes written since the last sync that were synced")
    vertices_created: int | None = count("graph vertices created")
    vertices_updated: int | None = count("graph vertices updated")
    vertices_archived: int | None = count("graph vertices newly archived")
    edges_created: int | None = count("graph edges created (merges, supersessions)")
    remaining: int | None = count("changed nodes left for the next cycle by the caps")
    batches: int | None = count("transactions the sync took (more than one while catching up)")


SPEC = StepSpec(
    name="sync_graph",
    number="6",
    description="upsert graph vertices for every node changed since the last sync (capped).",
    counts=GraphSyncCounts,
    config=GraphSyncConfig,
    after=(summarize.SPEC.name,),
    summary=(SummaryColumn("graph", ("nodes_considered",)),),
    count_order=("nodes_considered", "vertices_created", "vertices_updated", "vertices_archived",
                 "edges_created", "remaining"),
    # The sync sees every node written since the previous sync, by anyone: none found and none
    # left means nothing in the namespace changed.
    changes_namespace=("nodes_considered", "remaining"),
    changes_view=GRAPH,
    run=sync_graph,
)

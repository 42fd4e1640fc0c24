"""Step 6, `sync_graph`: upsert graph vertices for every node changed since the last sync
(capped; planning and the cursor: core/steps/graph_sync.py)."""

from __future__ import annotations

from curation_pipeline.core.steps.graph_sync import SyncPosition, plan_graph_sync
from curation_pipeline.service.graph_mirror import follow_in_graph_backend
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.store import graph


def sync_graph(run: StepRun, config) -> dict:
    def work(conn, _):
        position = graph.load_sync_position(conn, run.scope)
        after_cursor, from_pending, xmax, in_progress = graph.load_changes(conn, run.scope, position, config.cap)
        if position.usable_with(xmax) != position:  # ids from another server: start over
            position = SyncPosition()
            after_cursor, from_pending, xmax, in_progress = graph.load_changes(conn, run.scope, position, config.cap)
        plan = plan_graph_sync(after_cursor, from_pending, position=position, snapshot_xmax=xmax,
                               in_progress=in_progress, cap=config.cap)
        return {**graph.apply_graph_sync(conn, run.scope, plan), **follow_in_graph_backend(conn, run)}

    return run_phases(run, lambda conn: None, work)

"""Step 1, `reclassify_stale`: a `reclassify_pending` training signal for never-recalled,
long-idle nodes (planning: core/steps/reclassify.py)."""

from __future__ import annotations

from curation_pipeline.core.steps.reclassify import plan_reclassify
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.store import actions, candidates


def reclassify_stale(run: StepRun, config) -> dict:
    def load(conn):
        loaded = candidates.reclassify_candidates(conn, run.scope, config.min_epoch_lag, limit=config.cap)
        return loaded, plan_reclassify(loaded, min_epoch_lag=config.min_epoch_lag, cap=config.cap)

    def apply(conn, planned):
        loaded, plan = planned
        return {"candidates": loaded.height,
                **actions.insert_reclassify_signals(conn, run.scope, plan, loaded)}

    return run_phases(run, load, apply)

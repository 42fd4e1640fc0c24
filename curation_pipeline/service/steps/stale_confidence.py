"""Step 5, `mark_stale_confidence`: confidence := stale for nodes not recalled within the window
(never verified ones; planning: core/steps/stale_confidence.py)."""

from __future__ import annotations

from curation_pipeline.core.steps.stale_confidence import plan_stale_confidence
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.store import actions, candidates


def mark_stale_confidence(run: StepRun, config) -> dict:
    def load(conn):
        loaded = candidates.stale_confidence_candidates(conn, run.scope, config.stale_after_days, config.cap)
        plan = plan_stale_confidence(loaded, now=candidates.database_now(conn),
                                     stale_after_days=config.stale_after_days)
        return loaded, plan

    def apply(conn, planned):
        loaded, plan = planned
        return {"candidates": loaded.height, **actions.mark_stale(conn, run.scope, plan, loaded)}

    return run_phases(run, load, apply)

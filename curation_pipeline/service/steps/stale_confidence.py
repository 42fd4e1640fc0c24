"""Step 5, `mark_stale_confidence`: confidence := stale for nodes not recalled within the window
(never verified ones; planning: core/steps/stale_confidence.py)."""

from __future__ import annotations

from dataclasses import dataclass

from curation_pipeline.config.op_config import StaleConfidenceConfig
from curation_pipeline.core.step_spec import STALE, HealthCount, StepCounts, StepSpec, SummaryColumn, count
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


@dataclass(frozen=True, kw_only=True)
class StaleConfidenceCounts(StepCounts):
    marked_stale: int | None = count("nodes whose confidence became stale")
    candidates: int | None = count("never-verified nodes not recalled within the window")
    skipped_concurrent: int | None = count("planned nodes an agent changed meanwhile (left alone)")


SPEC = StepSpec(
    name="mark_stale_confidence",
    number="5",
    description="confidence := stale for nodes not recalled within the window (never verified ones).",
    counts=StaleConfidenceCounts,
    config=StaleConfidenceConfig,
    summary=(SummaryColumn("stale", ("marked_stale",)),),
    count_order=("marked_stale", "candidates", "skipped_concurrent"),
    health=(HealthCount("marked_stale", ("marked_stale",)),),
    changes_namespace=("marked_stale",),
    changes_view=STALE,
    run=mark_stale_confidence,
)

"""Step 1, `reclassify_stale`: a `reclassify_pending` training signal for never-recalled,
long-idle nodes (planning: core/steps/reclassify.py)."""

from __future__ import annotations

from dataclasses import dataclass

from curation_pipeline.config.op_config import ReclassifyConfig
from curation_pipeline.core.step_spec import SIGNALS, StepCounts, StepSpec, SummaryColumn, count
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


@dataclass(frozen=True, kw_only=True)
class ReclassifyCounts(StepCounts):
    signals_created: int | None = count("reclassify_pending signals queued")
    candidates: int | None = count("never-recalled, long-idle nodes considered")
    skipped_concurrent: int | None = count("planned nodes an agent changed meanwhile (left alone)")


SPEC = StepSpec(
    name="reclassify_stale",
    number="1",
    description="queue a `reclassify_pending` training signal for never-recalled, long-idle nodes.",
    counts=ReclassifyCounts,
    config=ReclassifyConfig,
    summary=(SummaryColumn("signals", ("signals_created",)),),
    count_order=("signals_created", "candidates", "skipped_concurrent"),
    changes_view=SIGNALS,
    records_signals=True,
    run=reclassify_stale,
)

"""A curation cycle as the runs that made it: one run, or a run and its re-executions.

"Re-execute from failure" starts a new run that skips the steps its parent finished, and each run
keeps its own cycle row. The cycle an operator asks about is their union: every step taken from
the last run that ran it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# The steps of a cycle in the order an operator reads them (step 7 closes it and is not listed).
CYCLE_STEPS = (
    "reclassify_stale",
    "consolidate_duplicates",
    "summarize_verbose",
    "revectorize",
    "mark_stale_confidence",
    "sync_graph",
    "associate_concepts",
)
STEP_NUMBERS = dict(zip(CYCLE_STEPS, ("1", "2", "3", "4", "5", "6", "6b")))

NOT_RUN = "not run"


@dataclass(frozen=True)
class StepResult:
    """One step's last attempt in the cycle: its status, the run that made it and its counts."""

    step: str
    status: str  # succeeded, failed or "not run"
    run_id: str | None = None
    counts: Mapping = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class Cycle:
    status: str  # success, partial (a step's last attempt failed) or running (not closed yet)
    run_ids: tuple[str, ...]  # oldest first; the last one closed the cycle
    steps: Mapping[str, StepResult]  # every step of CYCLE_STEPS, in that order
    duration_s: float  # time spent in the runs themselves, not the wait between them

    @property
    def run_id(self) -> str:
        return self.run_ids[-1]

    @property
    def reexecuted(self) -> bool:
        return len(self.run_ids) > 1

    def counts(self, step: str) -> Mapping:
        """The step's counts, empty if it did not succeed."""
        result = self.steps[step]
        return result.counts if result.status == "succeeded" else {}

    def errors(self) -> dict[str, str]:
        return {s.step: s.error or "" for s in self.steps.values() if s.status == "failed"}


def combine_cycles(rows: Sequence[Mapping]) -> Cycle:
    """The cycle made by `rows`, the cycle rows of one root run and its re-executions, oldest first."""
    if not rows:
        raise ValueError("a cycle needs at least one run's row")
    steps = {step: StepResult(step, NOT_RUN) for step in CYCLE_STEPS}
    for row in rows:
        for step, entry in (row.get("steps") or {}).items():
            if step not in steps:
                continue
            entry = dict(entry)
            status = entry.pop("status", "succeeded")
            error = entry.pop("error", None)
            steps[step] = StepResult(step, status, row.get("run_id"), entry, error)
    failed = any(result.status == "failed" for result in steps.values())
    last_status = rows[-1].get("status", "running")
    return Cycle(
        status="partial" if failed else ("running" if last_status == "running" else "success"),
        run_ids=tuple(row.get("run_id") for row in rows),
        steps=steps,
        duration_s=round(sum(float(row.get("duration_s") or 0.0) for row in rows), 3),
    )

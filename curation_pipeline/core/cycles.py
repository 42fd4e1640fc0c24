"""A curation cycle as the runs that made it: one run, or a run and its re-executions.

"Re-execute from failure" starts a new run that skips the steps its parent finished, and each run
keeps its own cycle row. The cycle an operator asks about is their union: every step taken from
the last run that ran it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from curation_pipeline.core.step_spec import StepCounts, StepSpec

NOT_RUN = "not run"


@dataclass(frozen=True)
class StepResult:
    """One step's last attempt in the cycle: its status, the run that made it and its counts."""

    step: str
    status: str  # succeeded, failed or "not run"
    run_id: str | None = None
    counts: StepCounts = field(default_factory=StepCounts)  # the step's record, read from the row
    error: str | None = None


@dataclass(frozen=True)
class Cycle:
    status: str  # success, partial (a step's last attempt failed) or running (not closed yet)
    run_ids: tuple[str, ...]  # oldest first; the last one closed the cycle
    steps: Mapping[str, StepResult]  # every step of the registry, in its order (step 7 closes it)
    duration_s: float  # time spent in the runs themselves, not the wait between them

    @property
    def run_id(self) -> str:
        return self.run_ids[-1]

    @property
    def reexecuted(self) -> bool:
        return len(self.run_ids) > 1

    def counts(self, step: str) -> StepCounts:
        """The step's counts, none reported if it did not succeed."""
        result = self.steps[step]
        return result.counts if result.status == "succeeded" else type(result.counts)()

    def errors(self) -> dict[str, str]:
        return {s.step: s.error or "" for s in self.steps.values() if s.status == "failed"}


def combine_cycles(rows: Sequence[Mapping], specs: Sequence[StepSpec]) -> Cycle:
    """The cycle made by `rows`, the cycle rows of one root run and its re-executions, oldest
    first, over the steps `specs` (the registry's, in order)."""
    if not rows:
        raise ValueError("a cycle needs at least one run's row")
    by_name = {spec.name: spec for spec in specs}
    steps = {spec.name: StepResult(spec.name, NOT_RUN, counts=spec.counts()) for spec in specs}
    for row in rows:
        for step, entry in (row.get("steps") or {}).items():
            if step not in steps:
                continue
            entry = dict(entry)
            status = entry.pop("status", "succeeded")
            error = entry.pop("error", None)
            steps[step] = StepResult(step, status, row.get("run_id"), by_name[step].read(entry), error)
    failed = any(result.status == "failed" for result in steps.values())
    last_status = rows[-1].get("status", "running")
    return Cycle(
        status="partial" if failed else ("running" if last_status == "running" else "success"),
        run_ids=tuple(row.get("run_id") for row in rows),
        steps=steps,
        duration_s=round(sum(float(row.get("duration_s") or 0.0) for row in rows), 3),
    )

"""The curation steps, in the order an operator reads them: the one list everything per step
derives from (core/step_spec.py). Adding a step is a service module with its `SPEC` and one
entry here.

Step 7 (`CLOSING`, service/steps/cycle.py) closes the cycle after every step no other step runs
after; it records no counts of its own.
"""

from __future__ import annotations

from curation_pipeline.core.step_spec import StepSpec, by_name, check_registry
from curation_pipeline.service.steps import (
    associate,
    consolidate,
    cycle,
    graph_sync,
    reclassify,
    revectorize,
    stale_confidence,
    summarize,
)

STEPS: tuple[StepSpec, ...] = (
    reclassify.SPEC,
    consolidate.SPEC,
    summarize.SPEC,
    revectorize.SPEC,
    stale_confidence.SPEC,
    graph_sync.SPEC,
    associate.SPEC,
)
CLOSING: StepSpec = cycle.SPEC
check_registry(STEPS)


def spec(name: str) -> StepSpec:
    """The step named `name` (an op name, a cycle row's step key)."""
    found = by_name((*STEPS, CLOSING)).get(name)
    if found is None:
        raise KeyError(f"no curation step {name!r} (steps: {', '.join(s.name for s in (*STEPS, CLOSING))})")
    return found

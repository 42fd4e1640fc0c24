"""The five health checks of a namespace after a cycle, as pure rules.

Each check passes or fails with a one-line reason an operator can act on; Dagster shows them as
asset checks on the `memory_namespace` partition (red when failed), and the cycle's activity row
keeps them too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from curation_pipeline.core.steps.consolidate import archive_allowance


@dataclass(frozen=True)
class CheckRule:
    name: str
    description: str


ARCHIVE_CAP = CheckRule(
    "archiving_within_cap",
    "The cycle archived no more nodes than its cap: CURATOR_MAX_ARCHIVE_FRACTION of the active "
    "nodes, at least one.",
)
NO_ORPHANS = CheckRule(
    "no_orphaned_archives",
    "Every archived node that was merged points at a keeper that is active and in the same "
    "tenant and namespace.",
)
BACKLOG_NOT_GROWING = CheckRule(
    "embedding_backlog_not_growing",
    "After the cycle, no more active nodes lack a vector of the configured embedder than after "
    "the previous cycle.",
)
LLM_ACCEPTANCE = CheckRule(
    "llm_acceptance_above_floor",
    "With the LLM on, at least CURATOR_LLM_MIN_ACCEPTANCE_RATE of its answers passed the fact guard.",
)
SUPERSESSIONS_HOLD = CheckRule(
    "supersessions_hold",
    "Every superseded memory's successor is an active node of the same tenant and namespace that "
    "still says the newer value (step 2 puts back any other: an agent edited, moved or archived "
    "the successor).",
)
CHECK_RULES = (ARCHIVE_CAP, NO_ORPHANS, BACKLOG_NOT_GROWING, LLM_ACCEPTANCE, SUPERSESSIONS_HOLD)


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    passed: bool
    description: str  # why, in one line
    metadata: Mapping = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "description": self.description,
                "metadata": dict(self.metadata)}


@dataclass(frozen=True)
class CheckInputs:
    """What the checks look at, besides the cycle's health record."""

    archived_by_cycle: int  # nodes the cycle's merges archived (from their revisions)
    recorded_allowance: int | None  # step 2's archive allowance, if it ran
    max_archive_fraction: float
    orphan_count: int
    orphan_examples: Sequence[str]  # a few archived node ids whose keeper is not right
    previous_backlog: int | None  # after the previous cycle; None for the first one
    llm_on: bool
    llm_min_acceptance_rate: float
    invalid_supersessions: int = 0  # superseded memories whose successor no longer holds
    invalid_supersession_examples: Sequence[str] = ()  # a few of their ids


def archive_within_cap(health: Mapping, inputs: CheckInputs) -> CheckOutcome:
    archived = inputs.archived_by_cycle
    cap = inputs.recorded_allowance
    if cap is None:  # step 2 did not record it: the cap of the namespace before the cycle
        cap = archive_allowance(int(health["active_nodes"]) + archived, inputs.max_archive_fraction)
    passed = archived <= cap
    verdict = "within" if passed else "above"
    return CheckOutcome(ARCHIVE_CAP.name, passed,
                        f"archived {archived} node(s), {verdict} the cap of {cap}",
                        {"archived": archived, "cap": cap})


def no_orphans(inputs: CheckInputs) -> CheckOutcome:
    count = inputs.orphan_count
    if not count:
        return CheckOutcome(NO_ORPHANS.name, True, "every archived node's keeper is active in this namespace",
                            {"orphans": 0})
    shown = ", ".join(inputs.orphan_examples)
    more = f" and {count - len(inputs.orphan_examples)} more" if count > len(inputs.orphan_examples) else ""
    return CheckOutcome(
        NO_ORPHANS.name, False,
        f"{count} archived node(s) point at a keeper that is archived, missing or in another "
        f"namespace: {shown}{more}",
        {"orphans": count},
    )


def backlog_not_growing(health: Mapping, inputs: CheckInputs) -> CheckOutcome:
    backlog, previous = int(health["embedding_backlog"]), inputs.previous_backlog
    if previous is None:
        return CheckOutcome(BACKLOG_NOT_GROWING.name, True,
                            f"first recorded cycle: {backlog} node(s) without a current vector",
                            {"backlog": backlog})
    passed = backlog <= previous
    change = "grew" if not passed else ("shrank" if backlog < previous else "stayed")
    return CheckOutcome(
        BACKLOG_NOT_GROWING.name, passed,
        f"embedding backlog {change}: {previous} -> {backlog} node(s) without a current vector",
        {"backlog": backlog, "previous_backlog": previous},
    )


def llm_acceptance(health: Mapping, inputs: CheckInputs) -> CheckOutcome:
    floor, rate = inputs.llm_min_acceptance_rate, health.get("llm_acceptance_rate")
    if not inputs.llm_on:
        return CheckOutcome(LLM_ACCEPTANCE.name, True, "the LLM path is off", {"floor": floor})
    if rate is None:
        return CheckOutcome(LLM_ACCEPTANCE.name, True, "the LLM judged no answer this cycle",
                            {"floor": floor})
    passed = rate >= floor
    verdict = "at or above" if passed else "below"
    return CheckOutcome(LLM_ACCEPTANCE.name, passed,
                        f"{rate:.0%} of the LLM's answers accepted, {verdict} the floor of {floor:.0%}",
                        {"acceptance_rate": rate, "floor": floor})


def supersessions_hold(inputs: CheckInputs) -> CheckOutcome:
    count = inputs.invalid_supersessions
    if not count:
        return CheckOutcome(SUPERSESSIONS_HOLD.name, True,
                            "every superseded memory's successor still says the newer value", {"invalid": 0})
    shown = ", ".join(inputs.invalid_supersession_examples)
    more = (f" and {count - len(inputs.invalid_supersession_examples)} more"
            if count > len(inputs.invalid_supersession_examples) else "")
    return CheckOutcome(
        SUPERSESSIONS_HOLD.name, False,
        f"{count} superseded memory(ies) hidden from current_memory by a successor that was edited, "
        f"moved out of the namespace or archived: {shown}{more} (the next cycle's step 2 puts them back)",
        {"invalid": count},
    )


def evaluate_checks(health: Mapping, inputs: CheckInputs) -> list[CheckOutcome]:
    """Every check, in the order of CHECK_RULES."""
    return [
        archive_within_cap(health, inputs),
        no_orphans(inputs),
        backlog_not_growing(health, inputs),
        llm_acceptance(health, inputs),
        supersessions_hold(inputs),
    ]

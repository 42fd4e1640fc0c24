"""A namespace's health after a cycle: the numbers an operator follows from cycle to cycle.

`cycle_health` turns the store's counts after the cycle (a snapshot) and the cycle's own step
counts into one ordered record. The same record is kept in the cycle's activity row, recorded
on the `memory_namespace` asset in Dagster (which plots it) and printed by `curation-pipeline
health`, so the three always agree. The numbers taken from the steps' counts are declared by the
steps themselves (`StepSpec.health`, `StepSpec.uses_llm`); the functions here take the specs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from curation_pipeline.core.cycles import Cycle
from curation_pipeline.core.step_spec import StepSpec


@dataclass(frozen=True)
class HealthField:
    key: str  # the metadata label in Dagster and the key in the activity row
    title: str  # the CLI column
    meaning: str
    unit: str = "count"  # count, share (0 to 1) or seconds: how Dagster shows and plots it


HEALTH_FIELDS = (
    HealthField("active_nodes", "active", "active memory nodes after the cycle"),
    HealthField("archived_nodes", "archived", "archived memory nodes after the cycle"),
    HealthField("pinned_nodes", "pinned", "pinned active memory nodes after the cycle"),
    HealthField("merged", "merged", "duplicate pairs merged this cycle (step 2)"),
    HealthField("superseded", "superseded", "memories marked superseded by a newer one this cycle (step 2)"),
    HealthField("superseded_nodes", "supers.", "active memories superseded by a newer one (not in current_memory)"),
    HealthField("judged", "judged", "similar pairs the LLM judged this cycle (step 2)"),
    HealthField("summarized", "summarized", "nodes summarized this cycle (step 3)"),
    HealthField("re_embedded", "embedded", "vectors computed this cycle, missing or of another model (step 4)"),
    HealthField("marked_stale", "stale", "nodes whose confidence became stale this cycle (step 5)"),
    HealthField("stale_share", "stale%", "share of active nodes whose confidence is stale", "share"),
    HealthField("embedding_backlog", "backlog", "active nodes without a vector of the configured model"),
    HealthField("duplicate_pairs_left", "dup.left", "duplicate pairs found but left to the next cycle by the caps"),
    HealthField("association_edges", "edges", "live shares_concept_with edges in the namespace"),
    HealthField("llm_calls", "llm", "LLM requests this cycle (steps 2 and 3)"),
    HealthField("llm_acceptance_rate", "accepted", "share of the LLM's answers the fact guard accepted",
                "share"),
    HealthField("llm_tokens", "tokens", "LLM input and output tokens this cycle"),
    HealthField("duration_s", "secs", "time the cycle's runs spent curating", "seconds"),
)
HEALTH_KEYS = tuple(f.key for f in HEALTH_FIELDS)


def health_fields(specs: Sequence[StepSpec]) -> tuple[HealthField, ...]:
    """HEALTH_FIELDS, then the numbers a step declares that they do not list (a new step's)."""
    extra = tuple(HealthField(h.key, h.title or h.key, h.meaning or f"{h.key} this cycle (step {spec.number})")
                  for spec in specs for h in spec.health if h.key not in HEALTH_KEYS)
    return HEALTH_FIELDS + extra


@dataclass(frozen=True)
class Snapshot:
    """The namespace's state in the store right after the cycle (store/health.py reads it)."""

    active_nodes: int
    archived_nodes: int
    pinned_nodes: int
    stale_nodes: int  # active ones
    embedding_backlog: int  # of `embedding_model`
    association_edges: int
    superseded_nodes: int = 0  # active ones
    orphans: int = 0  # archived nodes whose keeper is archived, gone or elsewhere
    orphan_examples: tuple[str, ...] = ()
    embedding_model: str = ""
    # Superseded memories whose successor no longer holds (missing, moved, archived, edited).
    invalid_supersessions: int = 0
    invalid_supersession_examples: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {**asdict(self), "orphan_examples": list(self.orphan_examples),
                "invalid_supersession_examples": list(self.invalid_supersession_examples)}

    @classmethod
    def from_dict(cls, values: Mapping) -> Snapshot:
        return cls(**{**values, "orphan_examples": tuple(values.get("orphan_examples") or ()),
                      "invalid_supersession_examples": tuple(values.get("invalid_supersession_examples") or ())})


def namespace_unchanged(cycle: Cycle, specs: Sequence[StepSpec]) -> bool:
    """Nothing in the namespace changed since the previous cycle, as far as this cycle can tell:
    no step changed a node or an edge, and the graph sync (which sees every node written since
    the previous sync, by anyone) found none and left none for later (each step names the counts
    that say so: `StepSpec.changes_namespace`). Then the previous cycle's snapshot still holds,
    and a cycle where nothing changed reads nothing to take its health."""
    for spec in specs:
        if not spec.changes_namespace:
            continue
        result = cycle.steps[spec.name]
        if result.status != "succeeded" or any(result.counts.value(key) for key in spec.changes_namespace):
            return False
    return True


def _llm_specs(specs: Sequence[StepSpec]) -> list[StepSpec]:
    return [spec for spec in specs if spec.uses_llm]


def _sum(cycle: Cycle, specs: Sequence[StepSpec], *keys: str) -> int:
    return sum(cycle.counts(spec.name).total(*keys) for spec in specs)


def llm_was_on(cycle: Cycle, specs: Sequence[StepSpec]) -> bool:
    """The LLM path was on in the cycle: a step that can use it reported its LLM counts."""
    return any(cycle.counts(spec.name).reported("llm_requests") for spec in _llm_specs(specs))


def acceptance_rate(cycle: Cycle, specs: Sequence[StepSpec]) -> float | None:
    """Accepted answers over judged ones (accepted + rejected); None when none was judged."""
    llm = _llm_specs(specs)
    accepted = _sum(cycle, llm, "llm_accepted")
    judged = accepted + _sum(cycle, llm, "llm_rejected")
    return round(accepted / judged, 4) if judged else None


def _store_numbers(snapshot: Snapshot) -> dict:
    """What the store holds of the namespace, cycle or undo alike."""
    active = snapshot.active_nodes
    return {
        "active_nodes": active,
        "archived_nodes": snapshot.archived_nodes,
        "pinned_nodes": snapshot.pinned_nodes,
        "superseded_nodes": snapshot.superseded_nodes,
        "stale_share": round(snapshot.stale_nodes / active, 4) if active else 0.0,
        "embedding_backlog": snapshot.embedding_backlog,
        "association_edges": snapshot.association_edges,
    }


def cycle_health(snapshot: Snapshot, cycle: Cycle, specs: Sequence[StepSpec]) -> dict:
    """The health record, keyed and ordered as `health_fields(specs)`; a rate without data is None."""
    llm = _llm_specs(specs)
    values = {
        **_store_numbers(snapshot),
        "llm_calls": _sum(cycle, llm, "llm_requests"),
        "llm_acceptance_rate": acceptance_rate(cycle, specs),
        "llm_tokens": _sum(cycle, llm, "llm_input_tokens", "llm_output_tokens"),
        "duration_s": cycle.duration_s,
    }
    for spec in specs:
        for number in spec.health:
            values[number.key] = values.get(number.key, 0) + cycle.counts(spec.name).total(*number.counts)
    return {f.key: values.get(f.key, 0) for f in health_fields(specs)}


# What a cycle measures of its own work, which a state reached by other means (an undo) has none
# of: a rate or a duration of no work is unknown, not 0 (0 would plot as "every answer rejected").
_NO_WORK = ("llm_acceptance_rate", "duration_s", "duplicate_pairs_left")


def state_health(snapshot: Snapshot, specs: Sequence[StepSpec]) -> dict:
    """The health record of the namespace as an undo left it: the store's numbers from
    `snapshot`, no curation work (counts 0, rates and durations unknown: None). Keyed and
    ordered as `cycle_health`'s, so `health`, the asset and the plots read it the same way."""
    values = _store_numbers(snapshot)
    return {f.key: None if f.key in _NO_WORK else values.get(f.key, 0) for f in health_fields(specs)}

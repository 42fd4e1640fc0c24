"""A namespace's health after a cycle: the numbers an operator follows from cycle to cycle.

`cycle_health` turns the store's counts after the cycle (a snapshot) and the cycle's own step
counts into one ordered record. The same record is kept in the cycle's activity row, recorded
on the `memory_namespace` asset in Dagster (which plots it) and printed by `curation-pipeline
health`, so the three always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from curation_pipeline.core.cycles import Cycle

LLM_STEPS = ("consolidate_duplicates", "summarize_verbose")


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

    def as_dict(self) -> dict:
        return {**asdict(self), "orphan_examples": list(self.orphan_examples)}

    @classmethod
    def from_dict(cls, values: Mapping) -> Snapshot:
        return cls(**{**values, "orphan_examples": tuple(values.get("orphan_examples") or ())})


# What steps 2 to 6b report when they changed nothing in the namespace.
_UNCHANGED_COUNTS = {
    "consolidate_duplicates": ("pairs_merged", "nodes_archived", "keepers_rewritten", "repointed", "superseded"),
    "summarize_verbose": ("summarized",),
    "revectorize": ("embedded", "reembedded"),
    "mark_stale_confidence": ("marked_stale",),
    "sync_graph": ("nodes_considered",),
    "associate_concepts": ("edges_added", "vertices_created"),
}


def namespace_unchanged(cycle: Cycle) -> bool:
    """Nothing in the namespace changed since the previous cycle, as far as this cycle can tell:
    no step changed a node or an edge, and the graph sync (which sees every node written since
    the previous sync, by anyone) found none and left none for later. Then the previous cycle's
    snapshot still holds, and a cycle where nothing changed reads nothing to take its health."""
    for step, keys in _UNCHANGED_COUNTS.items():
        result = cycle.steps[step]
        if result.status != "succeeded" or any(result.counts.get(key) for key in keys):
            return False
    return not cycle.counts("sync_graph").get("remaining")


def _sum(cycle: Cycle, steps: tuple[str, ...], *keys: str) -> int:
    return sum(int(cycle.counts(step).get(key) or 0) for step in steps for key in keys)


def llm_was_on(cycle: Cycle) -> bool:
    """The LLM path was on in the cycle: a step that can use it reported its LLM counts."""
    return any("llm_requests" in cycle.counts(step) for step in LLM_STEPS)


def acceptance_rate(cycle: Cycle) -> float | None:
    """Accepted answers over judged ones (accepted + rejected); None when none was judged."""
    accepted = _sum(cycle, LLM_STEPS, "llm_accepted")
    judged = accepted + _sum(cycle, LLM_STEPS, "llm_rejected")
    return round(accepted / judged, 4) if judged else None


def cycle_health(snapshot: Snapshot, cycle: Cycle) -> dict:
    """The health record, keyed and ordered as HEALTH_FIELDS; a rate without data is None."""
    active = snapshot.active_nodes
    values = {
        "active_nodes": active,
        "archived_nodes": snapshot.archived_nodes,
        "pinned_nodes": snapshot.pinned_nodes,
        "merged": _sum(cycle, ("consolidate_duplicates",), "pairs_merged"),
        "superseded": _sum(cycle, ("consolidate_duplicates",), "superseded"),
        "superseded_nodes": snapshot.superseded_nodes,
        "judged": _sum(cycle, ("consolidate_duplicates",), "judged"),
        "summarized": _sum(cycle, ("summarize_verbose",), "summarized"),
        "re_embedded": _sum(cycle, ("revectorize",), "embedded", "reembedded"),
        "marked_stale": _sum(cycle, ("mark_stale_confidence",), "marked_stale"),
        "stale_share": round(snapshot.stale_nodes / active, 4) if active else 0.0,
        "embedding_backlog": snapshot.embedding_backlog,
        "duplicate_pairs_left": _sum(cycle, ("consolidate_duplicates",), "pairs_left_over"),
        "association_edges": snapshot.association_edges,
        "llm_calls": _sum(cycle, LLM_STEPS, "llm_requests"),
        "llm_acceptance_rate": acceptance_rate(cycle),
        "llm_tokens": _sum(cycle, LLM_STEPS, "llm_input_tokens", "llm_output_tokens"),
        "duration_s": cycle.duration_s,
    }
    return {key: values[key] for key in HEALTH_KEYS}


def numeric_metadata(health: Mapping) -> dict[str, int | float]:
    """The record's numbers, for Dagster to plot; a rate that has no data this cycle is left
    out rather than plotted as 0 (which would read as "every answer rejected")."""
    return {key: health[key] for key in HEALTH_KEYS if health.get(key) is not None}

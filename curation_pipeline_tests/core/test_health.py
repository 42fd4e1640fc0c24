"""The health record of a namespace after a cycle, and the five checks on it."""

from __future__ import annotations

import pytest

from curation_pipeline.core.cycles import combine_cycles
from curation_pipeline.core.health import (
    HEALTH_KEYS,
    Snapshot,
    cycle_health,
)
from curation_pipeline.core.health_checks import (
    CHECK_RULES,
    CheckInputs,
    evaluate_checks,
)
from curation_pipeline.service.steps.registry import STEPS

SNAPSHOT = Snapshot(active_nodes=40, archived_nodes=6, pinned_nodes=2, stale_nodes=10,
                    embedding_backlog=3, association_edges=7)


def _cycle(**steps):
    return combine_cycles([{"run_id": "r", "status": "success", "duration_s": 4.5,
                            "steps": {step: {"status": "succeeded", **counts} for step, counts in steps.items()}}], STEPS)


LLM_CYCLE = _cycle(
    consolidate_duplicates={"pairs_merged": 3, "pairs_left_over": 2, "archive_allowance": 4,
                            "llm_requests": 3, "llm_accepted": 2, "llm_rejected": 1,
                            "llm_input_tokens": 300, "llm_output_tokens": 60},
    summarize_verbose={"summarized": 1, "llm_requests": 2, "llm_accepted": 0, "llm_rejected": 1,
                       "llm_input_tokens": 100, "llm_output_tokens": 20},
    revectorize={"embedded": 5, "reembedded": 2},
    mark_stale_confidence={"marked_stale": 4},
)


def test_the_health_record_reads_the_store_and_the_cycle_in_a_fixed_order():
    health = cycle_health(SNAPSHOT, LLM_CYCLE, STEPS)
    assert tuple(health) == HEALTH_KEYS
    assert health == {
        "active_nodes": 40, "archived_nodes": 6, "pinned_nodes": 2, "merged": 3, "superseded": 0,
        "superseded_nodes": 0, "judged": 0, "summarized": 1,
        "re_embedded": 7, "marked_stale": 4, "stale_share": 0.25, "embedding_backlog": 3,
        "duplicate_pairs_left": 2, "association_edges": 7, "llm_calls": 5,
        "llm_acceptance_rate": 0.5, "llm_tokens": 480, "duration_s": 4.5,
    }


def test_without_judged_answers_there_is_no_rate_to_plot():
    health = cycle_health(Snapshot(0, 0, 0, 0, 0, 0), _cycle(revectorize={"embedded": 0}), STEPS)
    assert health["llm_acceptance_rate"] is None and health["stale_share"] == 0.0


def _inputs(**changes) -> CheckInputs:
    values = {"archived_by_cycle": 3, "recorded_allowance": 4, "max_archive_fraction": 0.1,
              "orphan_count": 0, "orphan_examples": [], "previous_backlog": 5, "llm_on": True,
              "llm_min_acceptance_rate": 0.5}
    return CheckInputs(**{**values, **changes})


def _outcomes(health, inputs) -> dict:
    outcomes = evaluate_checks(health, inputs)
    assert [o.name for o in outcomes] == [rule.name for rule in CHECK_RULES]
    return {o.name: o for o in outcomes}


def test_a_healthy_cycle_passes_every_check():
    outcomes = _outcomes(cycle_health(SNAPSHOT, LLM_CYCLE, STEPS), _inputs())
    assert all(o.passed for o in outcomes.values()), outcomes
    assert outcomes["embedding_backlog_not_growing"].description == (
        "embedding backlog shrank: 5 -> 3 node(s) without a current vector")


@pytest.mark.parametrize(
    ("check", "changes", "reason"),
    [
        ("archiving_within_cap", {"archived_by_cycle": 5}, "archived 5 node(s), above the cap of 4"),
        # Step 2 recorded no allowance: the cap of the namespace before the cycle (45 nodes).
        ("archiving_within_cap", {"archived_by_cycle": 5, "recorded_allowance": None},
         "archived 5 node(s), above the cap of 4"),
        ("no_orphaned_archives", {"orphan_count": 7, "orphan_examples": ["a", "b"]},
         "7 archived node(s) point at a keeper that is archived, missing or in another namespace: a, b and 5 more"),
        ("embedding_backlog_not_growing", {"previous_backlog": 2}, "embedding backlog grew: 2 -> 3"),
        ("llm_acceptance_above_floor", {"llm_min_acceptance_rate": 0.6},
         "50% of the LLM's answers accepted, below the floor of 60%"),
        ("supersessions_hold", {"invalid_supersessions": 3, "invalid_supersession_examples": ["older-1"]},
         "3 superseded memory(ies) hidden from current_memory by a successor that was edited, moved out of "
         "the namespace or archived: older-1 and 2 more"),
    ],
)
def test_each_check_fails_saying_why(check, changes, reason):
    outcomes = _outcomes(cycle_health(SNAPSHOT, LLM_CYCLE, STEPS), _inputs(**changes))
    assert not outcomes[check].passed
    assert reason in outcomes[check].description
    assert all(o.passed for name, o in outcomes.items() if name != check)


def test_the_llm_check_passes_when_the_llm_is_off_or_judged_nothing():
    health = cycle_health(SNAPSHOT, LLM_CYCLE, STEPS)
    off = _outcomes(health, _inputs(llm_on=False, llm_min_acceptance_rate=1.0))["llm_acceptance_above_floor"]
    assert off.passed and off.description == "the LLM path is off"
    quiet = _outcomes({**health, "llm_acceptance_rate": None}, _inputs(llm_min_acceptance_rate=1.0))
    assert quiet["llm_acceptance_above_floor"].passed


def test_the_first_cycle_has_no_backlog_to_compare_with():
    outcome = _outcomes(cycle_health(SNAPSHOT, LLM_CYCLE, STEPS), _inputs(previous_backlog=None))["embedding_backlog_not_growing"]
    assert outcome.passed and "first recorded cycle" in outcome.description


UNCHANGED = {
    "reclassify_stale": {"signals_created": 0}, "consolidate_duplicates": {"pass": "unchanged", "pairs_merged": 0},
    "summarize_verbose": {"summarized": 0}, "revectorize": {"embedded": 0, "reembedded": 0},
    "mark_stale_confidence": {"marked_stale": 0}, "sync_graph": {"nodes_considered": 0, "remaining": False},
    "associate_concepts": {"skipped": "lexical embedder"},
}


@pytest.mark.parametrize(
    ("change", "unchanged"),
    [
        ({}, True),
        ({"sync_graph": {"nodes_considered": 2, "remaining": False}}, False),  # someone wrote nodes
        ({"sync_graph": {"nodes_considered": 0, "remaining": True}}, False),  # a capped sync
        ({"mark_stale_confidence": {"marked_stale": 1}}, False),  # may have run after the sync
        ({"associate_concepts": {"edges_added": 3}}, False),
        ({"revectorize": {"status": "failed", "error": "x"}}, False),
    ],
)
def test_a_cycle_knows_when_nothing_changed_since_the_previous_one(change, unchanged):
    from curation_pipeline.core.health import namespace_unchanged

    steps = {**UNCHANGED, **change}
    cycle = combine_cycles([{"run_id": "r", "status": "success", "steps": {
        step: {"status": "succeeded", **counts} for step, counts in steps.items()}}], STEPS)
    assert namespace_unchanged(cycle, STEPS) is unchanged
    without_sync = combine_cycles([{"run_id": "r", "status": "success", "steps": {
        step: {"status": "succeeded", **counts} for step, counts in steps.items() if step != "sync_graph"}}], STEPS)
    assert namespace_unchanged(without_sync, STEPS) is False  # not run: nothing is known

"""A cycle made of a run and its re-executions: each step from the last run that ran it."""

from __future__ import annotations

from curation_pipeline.core.cycles import combine_cycles
from curation_pipeline.service.steps.registry import STEPS

CYCLE_STEPS = [spec.name for spec in STEPS]


def _row(run_id: str, status: str, steps: dict, duration: float = 1.0, **extra) -> dict:
    return {"run_id": run_id, "status": status, "steps": steps, "duration_s": duration, **extra}


def test_a_reexecution_takes_the_steps_its_parent_finished_and_redoes_the_failed_one():
    parent = _row("parent", "partial", {
        "consolidate_duplicates": {"status": "succeeded", "pairs_merged": 2},
        "revectorize": {"status": "failed", "error": "RaiseException: refused"},
        "sync_graph": {"status": "succeeded", "nodes_considered": 5},
    }, duration=2.5)
    child = _row("child", "success", {"revectorize": {"status": "succeeded", "embedded": 3}},
                 duration=1.25, parent_run_id="parent", root_run_id="parent")

    cycle = combine_cycles([parent, child], STEPS)

    assert cycle.status == "success" and cycle.reexecuted
    assert cycle.run_ids == ("parent", "child") and cycle.run_id == "child"
    assert [(s.step, s.status, s.run_id) for s in cycle.steps.values()] == [
        (step, {"consolidate_duplicates": "succeeded", "revectorize": "succeeded",
                "sync_graph": "succeeded"}.get(step, "not run"),
         {"consolidate_duplicates": "parent", "revectorize": "child", "sync_graph": "parent"}.get(step))
        for step in CYCLE_STEPS
    ]
    assert cycle.counts("revectorize").as_dict() == {"embedded": 3}
    assert cycle.counts("consolidate_duplicates").as_dict() == {"pairs_merged": 2}
    assert cycle.errors() == {} and cycle.duration_s == 3.75


def test_a_step_whose_last_attempt_failed_leaves_the_cycle_partial_with_its_error():
    cycle = combine_cycles([_row("only", "partial", {
        "revectorize": {"status": "failed", "error": "RaiseException: refused"},
    })], STEPS)
    assert cycle.status == "partial" and not cycle.reexecuted
    assert cycle.errors() == {"revectorize": "RaiseException: refused"}
    assert cycle.counts("revectorize").as_dict() == {}


def test_a_cycle_not_closed_yet_is_running():
    assert combine_cycles([_row("only", "running", {})], STEPS).status == "running"

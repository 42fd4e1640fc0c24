"""Which old Dagster runs may be deleted (defs/run_retention.py does the reading and deleting).

A finished run older than the retention goes, unless a run that may still be re-executed needs
it: a failed or canceled run younger than the retention, or one still in flight, is re-executed
from its parent's record (the steps that already succeeded, their outputs), which may in turn
point to its own parent: every ancestor of such a run stays, however old. Memory revisions
live in the store, not in Dagster, and are never touched: undo works on any run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class RetentionPlan:
    delete: tuple[str, ...]
    kept_for_reexecution: tuple[str, ...]


def ancestors(parents_of_open_runs: Iterable[str | None], parent_of: Mapping[str, str | None]) -> set[str]:
    """Every run on the parent chains that start at these parents (a chain ends at a root, or at
    a run that is gone already)."""
    found: set[str] = set()
    stack = [parent for parent in parents_of_open_runs if parent]
    while stack:
        run_id = stack.pop()
        if run_id in found:
            continue
        found.add(run_id)
        parent = parent_of.get(run_id)
        if parent:
            stack.append(parent)
    return found


def plan_retention(old_finished: Iterable[str], needed: set[str]) -> RetentionPlan:
    """Split the old finished runs into those to delete and those a re-execution still needs."""
    old = list(dict.fromkeys(old_finished))
    return RetentionPlan(
        delete=tuple(run_id for run_id in old if run_id not in needed),
        kept_for_reexecution=tuple(run_id for run_id in old if run_id in needed),
    )

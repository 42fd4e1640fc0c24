"""Deciding what undoing a run means for one row, from the run's recorded revisions.

For every row a run changed we know its state before the run's first change (`before`) and
after its last (`after`). Only the columns the run actually changed matter: an agent that
recalled a node (recall_count) after we summarized it has not touched the text, so the summary
can still be undone. Per row:

- the run changed nothing               -> nothing to do
- those columns are back at `before`    -> already undone (undoing twice is a no-op)
- those columns still equal `after`     -> restore them to `before`
- anything else                         -> someone changed them since: a conflict, left alone
                                           unless forced
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Action = Literal["restore", "already_undone", "conflict", "unchanged"]


@dataclass(frozen=True)
class RowDecision:
    action: Action
    columns: tuple[str, ...]  # the columns the run changed
    forced: bool = False


def decide(
    before: Mapping, after: Mapping, current: Mapping, columns: Sequence[str], *, force: bool = False
) -> RowDecision:
    changed = tuple(column for column in columns if before.get(column) != after.get(column))
    if not changed:
        return RowDecision("unchanged", changed)
    if all(current.get(column) == before.get(column) for column in changed):
        return RowDecision("already_undone", changed)
    if all(current.get(column) == after.get(column) for column in changed):
        return RowDecision("restore", changed)
    if force:
        return RowDecision("restore", changed, forced=True)
    return RowDecision("conflict", changed)


def differing_columns(current: Mapping, expected: Mapping, columns: Sequence[str]) -> list[str]:
    """Columns whose current value is not the expected one (to tell an operator what moved)."""
    return [column for column in columns if current.get(column) != expected.get(column)]

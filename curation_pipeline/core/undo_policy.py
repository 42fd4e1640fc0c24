"""Deciding what undoing a run means for one row, from the run's recorded revisions.

A run may change a row several times (step 2 rewrites a keeper, step 4 re-embeds it). Only the
columns the run itself changed matter: an agent that recalled a node (recall_count) after we
summarized it has not touched the text, so the summary can still be undone, and the recall is
kept. Per row:

- the run changed nothing                  -> nothing to do
- those columns are back at their state
  before the run                           -> already undone (undoing twice is a no-op)
- those columns still equal what the run
  left, and nobody changed them between
  two of the run's own changes             -> restore them to their state before the run
- anything else                            -> someone changed them: a conflict, left alone
                                              unless forced

A restore decided here may still be held back, so that no merged text is left in no active
node (undo_links.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Action = Literal["restore", "already_undone", "conflict", "unchanged"]


@dataclass(frozen=True)
class RunEffect:
    """What one run did to one row, from its revisions (oldest first)."""

    before: Mapping  # the row before the run's first change
    after: Mapping  # the row after the run's last change
    changed: tuple[str, ...]  # columns some revision of the run changed
    interleaved: tuple[str, ...]  # of those, columns someone else changed between two revisions


@dataclass(frozen=True)
class RowDecision:
    action: Action
    columns: tuple[str, ...]  # the columns the run changed
    forced: bool = False
    changed_since: tuple[str, ...] = ()  # conflict or forced: which of them someone else changed


def run_effect(revisions: Sequence[tuple[Mapping, Mapping]], columns: Sequence[str]) -> RunEffect:
    changed = tuple(
        column for column in columns
        if any(before.get(column) != after.get(column) for before, after in revisions)
    )
    interleaved = tuple(
        column for column in changed
        if any(revisions[k][0].get(column) != revisions[k - 1][1].get(column)
               for k in range(1, len(revisions)))
    )
    return RunEffect(revisions[0][0], revisions[-1][1], changed, interleaved)


def decide(effect: RunEffect, current: Mapping, *, force: bool = False) -> RowDecision:
    changed = effect.changed
    if not changed:
        return RowDecision("unchanged", changed)
    if all(current.get(column) == effect.before.get(column) for column in changed):
        return RowDecision("already_undone", changed)
    moved = tuple(column for column in changed if current.get(column) != effect.after.get(column))
    disputed = tuple(dict.fromkeys(effect.interleaved + moved))
    if not disputed:
        return RowDecision("restore", changed)
    if force:
        return RowDecision("restore", changed, forced=True, changed_since=disputed)
    return RowDecision("conflict", changed, changed_since=disputed)

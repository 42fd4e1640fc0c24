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

Recency (`recall_count`, `last_recalled_at`) is the agents' and moves on every recall: a merge
adds the absorbed node's recalls to its keeper, and an agent that recalls the keeper afterwards
must not make the merge impossible to undo. So recency never makes a conflict: an undo takes
back what the run added and keeps what agents added since (`restore_target`). A row whose only
change by the run was its recency cannot tell by its values whether it was undone already, so
the caller says (`undone_before`, from the undo revisions).

A restore decided here may still be held back, so that no merged text is left in no active
node (undo_links.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Action = Literal["restore", "already_undone", "conflict", "unchanged"]
RECENCY = ("recall_count", "last_recalled_at")
# Columns that hold one value between them: a vector means nothing without the name of the model
# that made it (steps 2 and 4 compare only vectors of the configured model). A run that changed
# one of them changed the value, so an undo restores them together or not at all. Without this, a
# forced undo of a re-embedding that kept the model (vector changed, model the same) over an
# agent's edit that cleared both would write the vector back beside the agent's NULL model.
#
# The same holds for where a node stands: archived into a keeper is both `archived_at` and
# `merged_into` (the table checks that a keeper comes with an archive time). A later merge that
# moves an archived node on to its keeper's keeper changes only `merged_into`; a forced undo of
# it over an undo that made the node active since must write the link back whole, not the old
# keeper beside an empty `archived_at` (seed 936560 of the soak).
TOGETHER = (("embedding", "embedding_model"), ("archived_at", "merged_into"))


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
    touched = {
        column for column in columns
        if any(before.get(column) != after.get(column) for before, after in revisions)
    }
    for group in TOGETHER:
        if touched.intersection(group):
            touched.update(group)
    changed = tuple(column for column in columns if column in touched)
    interleaved = tuple(
        column for column in changed
        if any(revisions[k][0].get(column) != revisions[k - 1][1].get(column)
               for k in range(1, len(revisions)))
    )
    return RunEffect(revisions[0][0], revisions[-1][1], changed, interleaved)


def decide(effect: RunEffect, current: Mapping, *, force: bool = False,
           undone_before: bool = False) -> RowDecision:
    """What undoing the run does to the row now `current`. `undone_before`: an undo of this run
    already restored the row (only asked of rows whose only change was their recency)."""
    changed = effect.changed
    if not changed:
        return RowDecision("unchanged", changed)
    owned = tuple(column for column in changed if column not in RECENCY)
    if not owned:
        undone = undone_before or all(current.get(column) == effect.before.get(column) for column in changed)
        return RowDecision("already_undone" if undone else "restore", changed)
    if all(current.get(column) == effect.before.get(column) for column in owned):
        return RowDecision("already_undone", changed)
    moved = tuple(column for column in owned if current.get(column) != effect.after.get(column))
    interleaved = tuple(column for column in effect.interleaved if column not in RECENCY)
    disputed = tuple(dict.fromkeys(interleaved + moved))
    if not disputed:
        return RowDecision("restore", changed)
    if force:
        return RowDecision("restore", changed, forced=True, changed_since=disputed)
    return RowDecision("conflict", changed, changed_since=disputed)


def restore_target(effect: RunEffect, current: Mapping) -> dict:
    """The row a restore writes (its `changed` columns are taken from it): the row before the
    run, with the recency agents added since kept: the recalls since the run on top of the
    count before it, and a recall since the run as the last one."""
    target = dict(effect.before)
    if "recall_count" in effect.changed:
        since = (current.get("recall_count") or 0) - (effect.after.get("recall_count") or 0)
        if since > 0:
            target["recall_count"] = (effect.before.get("recall_count") or 0) + since
    if "last_recalled_at" in effect.changed and current.get("last_recalled_at") != effect.after.get("last_recalled_at"):
        target["last_recalled_at"] = current.get("last_recalled_at")
    return target

"""Which restores an undo must hold back so that no merged text is left in no active node.

The invariant an undo keeps: **an archived node's content is in its active keeper, or the node
is active again.** A run keeps it by writing both halves of a merge in one transaction (the
keeper's new text, the absorbed node's `merged_into`). An undo restores rows one by one, and a
row may be left alone (changed since) or forced back over later changes; then the two halves
can come apart. Each way is held back here:

- **merged since**: the undo puts a keeper's text back to what it was before the run, but a
  node points at it now that did not point at it then (a later run merged it in, or the run
  itself did and that half is left alone), or whose text changed since. Its text would be in
  no active node. The keeper is held back; undo the later run first.
- **written into since**: likewise, for a node written into the keeper, archived, after the
  run started (an import, an agent): unless the keeper's text from before the run says every
  clause of it (by words, as a merge judges it), the keeper held it only by what the run added.
  No later run to undo first: the keeper stays as the run left it.
- **merged into since**: the undo puts a node's text back to what it was before the run, but
  the node was merged into a keeper since (it is archived now, and its keeper took in the text
  the run left, e.g. a summary). Its old text would be in no active node. The node is held
  back; undo the later run first.
- **keeper changed**: the undo (an undo of an undo) archives a node into a keeper again, but
  the keeper's text is not put back to the text that held it, and is not that text any more
  (an undo records the keeper's text when it takes a node out of it, so this is known exactly;
  else the keeper's recorded history decides). The node is held back and stays active.
- **node changed**: the undo archives a node again whose own text changed after the undone run
  took it out of its keeper (an agent edited it): its keeper never held that text. Held back.
- **keeper archived**: after the undo a node would point at a keeper that is itself archived
  (a chain that ends nowhere it can be read). The row that would create the pointer is held back.
- **keeper moved**: the undo would archive a node into a keeper an agent moved to another
  namespace since (the store finds those: undo_links.elsewhere). Held back: no link crosses
  namespaces.

A held-back row is left exactly as it is, like a conflict; holding one back can make another
unsafe, so the rule runs to a fixpoint. Pure logic: the store gathers the facts (undo.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from curation_pipeline.core.coverage import KeptText, uncovered

Reason = str  # "merged_since" | "written_into_since" | "merged_into_since" | "keeper_changed"
#                | "node_changed" | "keeper_archived"
#                | "keeper_moved" | "successor_moved" (the last two found by the store)


@dataclass(frozen=True)
class Link:
    """Where a node stands: active, or archived into `keeper`."""

    archived: bool
    keeper: str | None = None


@dataclass(frozen=True)
class NodeNow:
    """A node as it is now, and as it was when the undone run started (from the revisions;
    a node no revision mentions is taken to be as it was)."""

    link: Link
    # None: the same as now. For a node written since the run started: its link when written.
    link_before_run: Link | None = None
    text_as_before_run: bool = True  # its text now is the one it had before the undone run
    existed_before_run: bool = True  # False: written into the store after the undone run started
    text: str | None = None  # its text now
    linked_by: str | None = None  # the run that last pointed it at its keeper (for messages)


@dataclass(frozen=True)
class Restore:
    """What the undo is about to do to a node."""

    link: Link  # its link afterwards
    relinks: bool  # its link is put back to what it was before the run
    rewrites_text: bool  # its text is put back to what it was before the run
    text: str | None = None  # its text afterwards
    # Its text now differs from what the undone run left (someone edited it since).
    text_changed_since_run: bool = False
    # Relinking to a keeper that the undone run (an undo) took it out of: whether the keeper's
    # text is still the one it had then (None: not recorded, NodeNow.text_as_before_run decides).
    keeper_text_kept: bool | None = None


@dataclass
class Hold:
    """A restore held back, and why."""

    reason: Reason
    nodes: list[str] = field(default_factory=list)  # the nodes it would strand (or its keeper)
    runs: list[str] = field(default_factory=list)  # merged_since: the runs that merged them in
    moved_to: str | None = None  # keeper_moved: the partition key the keeper is in now


def held_back(restores: Mapping[str, Restore], now: Mapping[str, NodeNow]) -> dict[str, Hold]:
    """The restores to leave undone, by node id. `now` covers every node in `restores`, their
    keepers afterwards and every node pointing at one of them now."""
    held: dict[str, Hold] = {}
    while True:
        found = _unsafe({node_id: r for node_id, r in restores.items() if node_id not in held}, now)
        if not found:
            return held
        held.update(found)


def _unsafe(restores: Mapping[str, Restore], now: Mapping[str, NodeNow]) -> dict[str, Hold]:
    def link(node_id: str) -> Link:
        return restores[node_id].link if node_id in restores else now[node_id].link

    def relinked(node_id: str) -> bool:
        """Its link afterwards is not the one it has now."""
        restore = restores.get(node_id)
        return restore is not None and restore.relinks and restore.link != now[node_id].link

    def held_by_keeper_before_run(node_id: str, keeper: str) -> bool:
        """The keeper's text from before the run held this node as it will be afterwards."""
        restore = restores.get(node_id)
        if restore is not None and restore.relinks:
            return True  # linked back to its state from before the run (its text: node_changed)
        state = now[node_id]
        if not state.existed_before_run:
            # Written since (an import, an agent): held only if the keeper's text afterwards
            # says every clause of it, by words, as a merge judges what its keeper says.
            keeper_after = restores[keeper].text if keeper in restores and restores[keeper].rewrites_text \
                else now[keeper].text
            return _says_all(keeper_after, state.text)
        before = state.link if state.link_before_run is None else state.link_before_run
        text_as_before = state.text_as_before_run or (restore is not None and restore.rewrites_text)
        return before == Link(True, keeper) and text_as_before

    found: dict[str, Hold] = {}

    def hold(node_id: str, reason: Reason, other: str, run: str | None = None) -> None:
        entry = found.setdefault(node_id, Hold(reason))
        if other not in entry.nodes:
            entry.nodes.append(other)
        if run is not None and run not in entry.runs:
            entry.runs.append(run)

    for node_id in sorted(set(restores) | {n for n, state in now.items() if state.link.keeper in restores}):
        if node_id not in now:
            continue
        after = link(node_id)
        keeper = after.keeper
        if not after.archived or keeper is None or keeper not in now:
            continue
        restore = restores.get(node_id)
        if (restore is not None and restore.rewrites_text and not relinked(node_id)
                and not held_by_keeper_before_run(node_id, keeper)):
            hold(node_id, "merged_into_since", keeper, now[node_id].linked_by)
        elif relinked(node_id) and not restore.rewrites_text and restore.text_changed_since_run:
            hold(node_id, "node_changed", keeper)
        elif link(keeper).archived:
            if relinked(node_id):
                hold(node_id, "keeper_archived", keeper)
            elif keeper in restores:
                hold(keeper, "keeper_archived", node_id)
        elif keeper in restores and restores[keeper].rewrites_text:
            if not held_by_keeper_before_run(node_id, keeper):
                if _written_into(now[node_id], keeper):
                    hold(keeper, "written_into_since", node_id)  # no later run to undo first
                else:
                    hold(keeper, "merged_since", node_id, now[node_id].linked_by)
        elif relinked(node_id) and not _keeper_text_kept(restore, now[keeper]):
            hold(node_id, "keeper_changed", keeper)
    return found


def _written_into(state: NodeNow, keeper: str) -> bool:
    """The node came into the store after the run started, archived into `keeper` (an import):
    undoing the runs that moved it since brings it back there."""
    written = state.link if state.link_before_run is None else state.link_before_run
    return not state.existed_before_run and written == Link(True, keeper)


def _keeper_text_kept(restore: Restore, keeper: NodeNow) -> bool:
    return keeper.text_as_before_run if restore.keeper_text_kept is None else restore.keeper_text_kept


def _says_all(keeper_text: str | None, text: str | None) -> bool:
    """`keeper_text` says every clause of `text` (core/coverage.py, by words)."""
    if not keeper_text or not text:
        return False
    return not uncovered([text], KeptText.of([keeper_text]), lexical_only=True)

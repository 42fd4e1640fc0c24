"""When steps 2 and 6b may search only what changed, and where their next pass starts. Pure.

Both steps look for pairs of similar active nodes. After a complete pass (nothing left over its
cap) with the same settings, a pair can only be new if one of its nodes was written since: so
the next pass compares just those changed nodes with the namespace. Anything else (the first
pass, a capped pass, a new threshold or model, a position from another server) means a full pass.
The position is a transaction-id cursor, like step 6's (see `graph_sync.SyncPosition`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from curation_pipeline.core.steps.graph_sync import SyncPosition


@dataclass(frozen=True)
class PassState:
    """Where an incremental pass last left off (stored per namespace, see sql/004 and sql/007)."""

    position: SyncPosition
    complete: bool  # it left nothing behind (no pair over its cap)
    params: Mapping | None  # the settings it ran with: other settings mean a full pass


@dataclass(frozen=True)
class PassStart:
    """How a pass begins: over everything, or over what changed."""

    incremental: bool  # the last pass left nothing behind with the same params
    changed: frozenset[str]  # active nodes with a vector written since the last pass
    resume_at: SyncPosition  # where the next pass starts if this one completes
    position: SyncPosition  # where this pass started
    params: Mapping

    @property
    def nothing_changed(self) -> bool:
        return self.incremental and not self.changed

    def finished(self, *, complete: bool) -> PassState:
        """The state to save after a pass that left nothing (complete) or something behind."""
        return PassState(self.resume_at, complete, dict(self.params))

    def searched_again(self) -> PassState:
        """The state after a capped incremental pass that should search the same changed nodes
        again next cycle (their pairs found this time are recognised then), instead of falling
        back to a full pass of the namespace."""
        return PassState(self.position, True, dict(self.params))


def start_pass(state: PassState, params: Mapping, changed: Collection[str], *,
               snapshot_xmax: int, in_progress: Collection[int],
               capped_at: tuple[int, str] | None = None) -> PassStart:
    """Decide how a pass starts from the saved state and what one database snapshot shows:
    `changed` (nodes written since `state.position`), its xmax and its running transactions.

    `capped_at` (transaction id, node id): more nodes were written than one pass searches, and
    this is the last one taken; an incremental pass then resumes right after it (the nodes
    written later are searched by the next passes, and a pair of two of them is found when the
    first is). A full pass searches everything, so it resumes at the snapshot's end regardless."""
    incremental = (state.complete and state.params == params
                   and state.position.usable_with(snapshot_xmax) == state.position)
    if incremental and capped_at is not None:
        txid, node_id = capped_at
        resume_at = SyncPosition(txid, node_id, tuple(sorted(t for t in in_progress if t < txid)))
    else:
        resume_at = SyncPosition(snapshot_xmax, None, tuple(sorted(t for t in in_progress if t < snapshot_xmax)))
    return PassStart(incremental, frozenset(changed), resume_at, state.position, dict(params))

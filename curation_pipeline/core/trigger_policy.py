"""When a namespace gets curated without anyone asking: pure decisions, no IO, no Dagster.

The store (store/triggers.py) hands over the namespaces that *may* be due, read through partial
indexes; these functions decide which are, and why, so the rules can be read and tested here:

- activity: an interaction (namespace_activity.last_interaction_at, written by the agents' side
  and by imports) after the last successful curation *started*. A curation only covers what was
  committed when it ran, so an interaction during a run still counts as new.
- never curated: a namespace the job has not yet curated successfully (its first curation).
- ceiling: no successful curation for `ceiling_secs` (0 = no ceiling), so a busy namespace that
  never goes idle is still curated.

The schedule curates every namespace with a reason. The idle sensor curates a namespace with
activity that has had no interaction for `idle_threshold_secs`, unless it was curated less than
`idle_floor_secs` ago or already has a run queued or in progress, at most `cap` per tick, going
round the namespaces from a cursor so that none waits behind others forever.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

NEVER_CURATED = "never_curated"
ACTIVITY = "activity"
CEILING = "ceiling"


@dataclass(frozen=True)
class NamespaceState:
    """One namespace_activity row, as the triggers see it."""

    tenant_id: str
    namespace: str
    last_interaction_at: datetime | None
    last_curation_started_at: datetime | None
    last_curated_at: datetime | None

    @property
    def name(self) -> tuple[str, str]:
        return (self.tenant_id, self.namespace)


def has_activity_since_curation(state: NamespaceState) -> bool:
    if state.last_interaction_at is None:
        return False
    return state.last_curation_started_at is None or state.last_interaction_at > state.last_curation_started_at


def scheduled_reason(state: NamespaceState, *, now: datetime, ceiling_secs: int) -> str | None:
    """Why the schedule should curate this namespace now, or None if nothing happened."""
    if has_activity_since_curation(state):
        return ACTIVITY
    if state.last_curated_at is None:
        return NEVER_CURATED
    if ceiling_secs > 0 and state.last_curated_at <= now - timedelta(seconds=ceiling_secs):
        return CEILING
    return None


def idle_skip_reason(
    state: NamespaceState, *, now: datetime, idle_threshold_secs: int, idle_floor_secs: int
) -> str | None:
    """None if the idle sensor should curate this namespace now, else why not."""
    if not has_activity_since_curation(state):
        return "no activity since the last curation"
    if state.last_interaction_at > now - timedelta(seconds=idle_threshold_secs):
        return "not idle yet"
    if state.last_curated_at is not None and state.last_curated_at > now - timedelta(seconds=idle_floor_secs):
        return "curated less than the floor ago"
    return None


@dataclass(frozen=True)
class ScheduledRun:
    state: NamespaceState
    reason: str


def plan_scheduled_runs(
    states: Iterable[NamespaceState], *, now: datetime, ceiling_secs: int,
    in_flight: Collection[tuple[str, str]] = (),
) -> list[ScheduledRun]:
    """One run per namespace with a reason and no run already queued or in progress."""
    planned = []
    for state in sorted(states, key=lambda s: s.name):
        reason = scheduled_reason(state, now=now, ceiling_secs=ceiling_secs)
        if reason is not None and state.name not in in_flight:
            planned.append(ScheduledRun(state, reason))
    return planned


@dataclass(frozen=True)
class IdlePlan:
    due: list[NamespaceState]
    cursor: str | None  # where the next tick starts (encode_cursor); unchanged if nothing was due
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> how many namespaces


def encode_cursor(name: tuple[str, str]) -> str:
    return json.dumps({"after": list(name)})


def decode_cursor(cursor: str | None) -> tuple[str, str] | None:
    """The (tenant, namespace) the previous tick ended at; a cursor we can't read starts over."""
    try:
        tenant_id, namespace = json.loads(cursor)["after"]
        return (str(tenant_id), str(namespace))
    except (TypeError, ValueError, KeyError):
        return None


def plan_idle_runs(
    states: Iterable[NamespaceState], *, now: datetime, idle_threshold_secs: int,
    idle_floor_secs: int, cap: int, cursor: str | None = None,
    in_flight: Collection[tuple[str, str]] = (),
) -> IdlePlan:
    """The namespaces the idle sensor curates this tick, and the cursor for the next one.

    Eligible namespaces are taken in (tenant, namespace) order starting after the cursor and
    wrapping around, so with more due than `cap` every one gets its turn within a few ticks.
    """
    skipped: dict[str, int] = {}
    eligible = []
    for state in states:
        reason = idle_skip_reason(
            state, now=now, idle_threshold_secs=idle_threshold_secs, idle_floor_secs=idle_floor_secs
        )
        if reason is None and state.name in in_flight:
            reason = "a run is already queued or in progress"
        if reason is None:
            eligible.append(state)
        else:
            skipped[reason] = skipped.get(reason, 0) + 1
    after = decode_cursor(cursor)
    ordered = _round_robin(sorted(eligible, key=lambda s: s.name), after)
    due = ordered[:cap]
    if len(ordered) > cap:
        skipped["over the per-tick cap"] = len(ordered) - cap
    next_cursor = encode_cursor(due[-1].name) if due else cursor
    return IdlePlan(due=due, cursor=next_cursor, skipped=skipped)


def _round_robin(ordered: Sequence[NamespaceState], after: tuple[str, str] | None) -> list[NamespaceState]:
    if after is None:
        return list(ordered)
    split = next((i for i, state in enumerate(ordered) if state.name > after), len(ordered))
    return list(ordered[split:]) + list(ordered[:split])

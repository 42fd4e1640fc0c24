"""Step 7, `log_curation_activity`: close the cycle's activity row (status and duration; only a
cycle without failed steps marks the namespace curated) and take the namespace's health.

The cycle is the run's own row combined with the rows of the runs it re-executes (core/cycles.py);
its health record and checks (core/health.py, core/health_checks.py) are kept in the closing row,
in the same transaction, and returned for Dagster to show. Like every step, it costs what
changed: when the cycle changed nothing and found nothing changed, the previous cycle's snapshot
of the namespace is kept instead of counting the namespace again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import psycopg

from curation_pipeline.core.cycles import Cycle, combine_cycles
from curation_pipeline.core.health import (
    Snapshot,
    cycle_health,
    llm_was_on,
    namespace_unchanged,
)
from curation_pipeline.core.health_checks import (
    CheckInputs,
    CheckOutcome,
    evaluate_checks,
)
from curation_pipeline.core.scope import Scope
from curation_pipeline.core.step_spec import StepCounts, StepSpec
from curation_pipeline.core.supersession import still_supersedes
from curation_pipeline.service.session import NamespaceSession
from curation_pipeline.service.steps import consolidate
from curation_pipeline.store import activity, health, supersessions

SPEC = StepSpec(
    name="log_curation_activity",
    number="7",
    description=("close the cycle's activity row and record it with the namespace's health as the "
                 "memory_namespace materialization, with its checks (not for a preview: it wrote nothing)."),
    counts=StepCounts,  # it records the cycle's health, not counts of its own
)
STEP = SPEC.name


def _steps() -> Sequence[StepSpec]:
    # The registry lists this module's SPEC too, so it is read when a cycle closes, not at import.
    from curation_pipeline.service.steps.registry import STEPS
    return STEPS


@dataclass(frozen=True)
class CycleReport:
    row: dict  # this run's cycle row, closed
    cycle: Cycle  # the run combined with the runs it re-executes
    health: dict  # ordered as core.health.health_fields(STEPS)
    checks: list[CheckOutcome]


def close_cycle(session: NamespaceSession, run_info: Mapping, *, embedding_model: str) -> CycleReport:
    scope = session.scope(STEP)
    with session.transaction() as conn:
        row = activity.close_cycle(conn, scope, run_info)
        root = run_info.get("root_run_id")
        rows = activity.cycle_rows(conn, root, session.tenant_id, session.namespace) if root else [row]
        cycle = combine_cycles(rows, _steps())
        previous = health.previous_cycle(conn, scope, cycle.run_ids)
        state = _state_after(conn, scope, cycle, previous, embedding_model)
        record = cycle_health(state, cycle, _steps())
        checks = evaluate_checks(record, _check_inputs(conn, session, scope, cycle, state, previous))
        activity.record_health(conn, scope, health=record, checks=[check.as_dict() for check in checks],
                               cycle={"status": cycle.status, "run_ids": list(cycle.run_ids)},
                               snapshot=state.as_dict())
    return CycleReport(row, cycle, record, checks)


def _state_after(conn: psycopg.Connection, scope: Scope, cycle: Cycle, previous: Mapping | None,
                 embedding_model: str) -> Snapshot:
    """The namespace after the cycle: read from the store, or, when nothing changed since the
    previous cycle, that cycle's snapshot (a cycle costs what changed; counting a namespace
    reads all of it)."""
    if previous and previous.get("snapshot") and namespace_unchanged(cycle, _steps()):
        kept = Snapshot.from_dict(previous["snapshot"])
        if kept.embedding_model == embedding_model and not health.undone_since(conn, scope, previous["created_at"]):
            return kept
    count, examples = _invalid_supersessions(conn, scope)
    return replace(health.snapshot(conn, scope, embedding_model),
                   invalid_supersessions=count, invalid_supersession_examples=tuple(examples))


# Successors edited since their supersession that the check reads the texts of, at most: each
# is judged by the words (core/supersession.still_supersedes); past it the count is a floor.
EDITED_SUCCESSORS_READ = 500


def _invalid_supersessions(conn: psycopg.Connection, scope: Scope) -> tuple[int, list[str]]:
    """What the `supersessions_hold` check counts: superseded memories whose successor is
    missing from the namespace or archived (store), or was edited and no longer says the newer
    value (the rule step 2 re-checks by: core/supersession.still_supersedes)."""
    count, examples = supersessions.invalid_supersessions(conn, scope, health.ORPHAN_EXAMPLES)
    edited = [row["older_id"] for row in supersessions.successors_edited_since(conn, scope, EDITED_SUCCESSORS_READ)
              if not still_supersedes(row["older_text"], row["successor_text"], row["made"])]
    return count + len(edited), (examples + edited)[:health.ORPHAN_EXAMPLES]


def _check_inputs(conn: psycopg.Connection, session: NamespaceSession, scope: Scope, cycle: Cycle,
                  state: Snapshot, previous: Mapping | None) -> CheckInputs:
    return CheckInputs(
        archived_by_cycle=health.archived_by_runs(conn, scope, cycle.run_ids, consolidate.SPEC.name),
        recorded_allowance=cycle.counts(consolidate.SPEC.name).value("archive_allowance"),
        max_archive_fraction=session.settings.max_archive_fraction,
        orphan_count=state.orphans,
        orphan_examples=state.orphan_examples,
        previous_backlog=((previous or {}).get("health") or {}).get("embedding_backlog"),
        llm_on=llm_was_on(cycle, _steps()),
        llm_min_acceptance_rate=session.settings.llm_min_acceptance_rate,
        invalid_supersessions=state.invalid_supersessions,
        invalid_supersession_examples=state.invalid_supersession_examples,
    )

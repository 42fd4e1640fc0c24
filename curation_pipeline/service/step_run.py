"""Running one curation step: its work, its counts in the cycle row, and what it changed.

A step's work is plain Python over a `StepRun` (load -> plan -> slow work -> apply, see
`run_phases`). Its counts, checked against its spec's counts record (core/step_spec.py), are merged into the cycle's activity row in the same transaction as
its writes, so the row always tells exactly what was committed; a failed step is recorded by
`record_step_failure` instead and its transaction rolls back whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.step_spec import StepCounts, StepSpec
from curation_pipeline.service.session import NamespaceSession
from curation_pipeline.store import activity
from curation_pipeline.store.revisions import run_changes, run_edges, run_signals, run_vertices

Planned = TypeVar("Planned")


@dataclass
class StepOutcome:
    """What one step did: its counts, and the rows it changed (for the UI and the CLI)."""

    step: str
    counts: dict  # the reported counts, as recorded (StepCounts.as_dict)
    changes: list[dict] = field(default_factory=list)
    signals: list[dict] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    vertices: list[dict] = field(default_factory=list)
    record: StepCounts | None = None  # the typed counts, when the run knew its step's spec


@dataclass
class StepRun:
    """One step of one run in one namespace."""

    session: NamespaceSession
    scope: Scope
    run_info: Mapping = field(default_factory=dict)  # partition and re-execution ids, for the cycle row
    # The step's declaration: its counts are checked against its record, and a step that
    # records training signals lists them in its outcome. None (a test calling a step's
    # function alone): the counts are recorded as reported.
    spec: StepSpec | None = None
    _outcome: StepOutcome | None = None

    def transaction(self):
        return self.session.transaction()

    def finish(self, conn: psycopg.Connection, counts: Mapping) -> StepOutcome:
        """Record the step's counts in `conn`'s transaction (the one holding its last writes)."""
        step, run_id = self.scope.step, self.scope.run_id
        record = self.spec.counts.from_counts(counts, step=step) if self.spec is not None else None
        counts = record.as_dict() if record is not None else dict(counts)
        activity.record_step_result(conn, self.scope, counts, self.run_info)
        self._outcome = StepOutcome(
            step, counts, run_changes(conn, run_id, step),
            run_signals(conn, run_id) if self.spec is not None and self.spec.records_signals else [],
            run_edges(conn, run_id, step),
            run_vertices(conn, run_id, step),
            record,
        )
        return self._outcome


def run_step(run: StepRun, work: Callable[[StepRun], Mapping]) -> StepOutcome:
    """Run `work`; its counts are recorded by `StepRun.finish` if the work called it in its
    last write transaction, else here in a transaction of their own."""
    counts = work(run)
    if run._outcome is None:
        with run.transaction() as conn:
            run.finish(conn, counts)
    return run._outcome


def run_phases(
    run: StepRun,
    load: Callable[[psycopg.Connection], Planned],
    apply: Callable[[psycopg.Connection, Planned], Mapping],
    prepare: Callable[[Planned], Planned] | None = None,
) -> Mapping:
    """load -> [prepare] -> apply, with the counts recorded in the apply transaction.

    Without `prepare` the step is one transaction. With it (the LLM's rewrites), the load
    transaction ends before `prepare` starts, so no transaction is open while a slow service
    answers; the apply transaction's writes are guarded by the rows' versions, so a row an agent
    changed in between is left alone. (A preview is the exception: its steps are savepoints of
    one transaction, rolled back at its end, which stays open throughout; see service/session.py.)
    """
    if prepare is None:
        with run.transaction() as conn:
            counts = apply(conn, load(conn))
            run.finish(conn, counts)
            return counts
    with run.transaction() as conn:
        planned = load(conn)
    planned = prepare(planned)
    with run.transaction() as conn:
        counts = apply(conn, planned)
        run.finish(conn, counts)
        return counts


INTERRUPTED = ("interrupted: the run was canceled (terminated from Dagster, or a second Ctrl-C "
               "of `curation-pipeline run`) before its cycle finished")


def record_interruption(session: NamespaceSession, step: str | None, run_info: Mapping) -> None:
    """Mark the cycle `partial`: the run was canceled, during `step` (None: between steps)."""
    with session.bookkeeping() as conn:
        activity.record_interruption(conn, session.scope(step or "run"), step, INTERRUPTED, run_info)


def record_step_failure(session: NamespaceSession, step: str, error: BaseException | None,
                        run_info: Mapping) -> None:
    """Mark the cycle `partial` with the failed step and its error."""
    cause = (error.__cause__ or error) if error is not None else None  # unwrap a framework's wrapper
    message = f"{type(cause).__name__}: {cause}" if cause is not None else "unknown error"
    with session.bookkeeping() as conn:
        activity.record_step_failure(conn, session.scope(step), message, run_info)



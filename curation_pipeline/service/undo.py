"""Undo a whole run (or its part in one namespace), namespace by namespace under each lease.

Used by `curation-pipeline undo` and the `undo_curation_run` Dagster job.
"""

from __future__ import annotations

import uuid

from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.health import state_health
from curation_pipeline.core.partition_keys import parse_partition_key
from curation_pipeline.core.scope import Scope
from curation_pipeline.service.steps import consolidate
from curation_pipeline.service.steps.registry import STEPS
from curation_pipeline.store import health
from curation_pipeline.store.database import open_connection
from curation_pipeline.store.locking import namespace_lease
from curation_pipeline.store.undo import (
    UndoReport,
    namespaces_changed_by,
    runs_starting_with,
    undo_in_namespace,
)
from curation_pipeline.store.undo import undone_by as _undone_by


class NothingToUndoError(ValueError):
    """The run id (or namespace) names no recorded change."""


class NoSuchRunError(ValueError):
    """No run recorded in the store has that id, nor one starting with it."""


class AmbiguousRunError(ValueError):
    """Several recorded runs start with the id given; the message lists them."""


def resolve_run_id(url: str, given: str) -> str:
    """The run `given` names: itself when the store knows that id, else the one run whose id
    starts with it (as the UI shows ids, cut to 8 characters). NoSuchRunError when none does,
    AmbiguousRunError (listing them) when several do."""
    with open_connection(url) as conn:
        matches = runs_starting_with(conn, given, limit=11)
        conn.rollback()
    if given in matches:
        return given
    if not matches or not given:
        raise NoSuchRunError(f"no such run: {given!r} is no run recorded in the memory store "
                             "(`curation-pipeline runs` lists the recent ones)")
    if len(matches) > 1:
        shown = ", ".join(matches[:10]) + (", ..." if len(matches) > 10 else "")
        raise AmbiguousRunError(f"run id {given!r} is ambiguous: it starts {len(matches)}"
                                f"{'+' if len(matches) > 10 else ''} runs ({shown}); give more of it")
    return matches[0]


class _RolledBack(Exception):
    """Ends a trial undo's transaction (undo_would_change_nothing)."""


def undo_would_change_nothing(url: str, run_id: str, *, partition_key: str | None = None,
                              force: bool = False) -> bool:
    """Whether undoing `run_id` now would restore nothing at all (it was undone already): the
    undo is tried in a transaction that is rolled back, so the answer is the undo's own, not a
    guess (an undo that left rows alone can still restore them with --force). Only worth asking
    of a run that has been undone before (`undone_by`)."""
    namespaces = namespaces_to_undo(url, run_id, partition_key=partition_key)
    graph_backend = load_settings().graph_backend
    for tenant_id, namespace in namespaces:
        with open_connection(url) as conn:
            try:
                with conn.transaction():
                    report = undo_in_namespace(
                        conn, run_id=run_id, undo_id=f"trial-{uuid.uuid4()}", tenant_id=tenant_id,
                        namespace=namespace, merge_step=consolidate.SPEC.name, force=force,
                        graph_backend=graph_backend)
                    raise _RolledBack
            except _RolledBack:
                pass
        if report.status != "nothing":
            return False
    return True


def undone_by(url: str, run_id: str) -> list[str]:
    """The recorded undos of the run (an undo that had nothing to do is not recorded)."""
    with open_connection(url) as conn:
        return _undone_by(conn, run_id)


def namespaces_to_undo(url: str, run_id: str, *, partition_key: str | None = None) -> list[tuple[str, str]]:
    """(tenant, namespace) of each namespace the run changed (only `partition_key`'s, if given);
    NothingToUndoError if there is none, so a caller can refuse before recording anything."""
    with open_connection(url) as conn:
        namespaces = namespaces_changed_by(conn, run_id)
        conn.rollback()
    if partition_key is not None:
        wanted = parse_partition_key(partition_key)
        namespaces = [ns for ns in namespaces if ns == wanted]
    if not namespaces:
        where = f" in {partition_key}" if partition_key else ""
        raise NothingToUndoError(f"run {run_id} changed nothing{where} that could be undone")
    return namespaces


def undo_run(
    url: str,
    run_id: str,
    *,
    partition_key: str | None = None,
    force: bool = False,
    undo_id: str | None = None,
    lock_timeout_s: int = 120,
) -> list[UndoReport]:
    """Restore what `run_id` changed; one transaction (and one report) per namespace. A
    namespace where it had nothing to do (status `nothing`) records nothing."""
    undo_id = undo_id or f"undo-{uuid.uuid4()}"
    namespaces = namespaces_to_undo(url, run_id, partition_key=partition_key)
    graph_backend = load_settings().graph_backend
    reports = []
    for tenant_id, namespace in namespaces:
        with namespace_lease(url, tenant_id, namespace, lock_timeout_s, holder=f"undo {undo_id}") as lease, \
                open_connection(url) as conn, conn.transaction():
            lease.verify(conn)  # fenced like a run's step (store/locking.py)
            report = undo_in_namespace(
                conn, run_id=run_id, undo_id=undo_id, tenant_id=tenant_id, namespace=namespace,
                merge_step=consolidate.SPEC.name, force=force, graph_backend=graph_backend,
            )
            if report.status != "nothing":
                _record_health(conn, report)
            reports.append(report)
    return reports


def _record_health(conn, report: UndoReport) -> None:
    """The namespace's health as the undo leaves it, in the undo's row (so `health`, the asset
    and its plots stop showing the undone cycle's numbers) and in its report (the observation
    on the asset). Counted against the model the namespace's last record used: the backlog is
    "nodes without a vector of the configured model", and an undo changes no configuration."""
    scope = Scope(run_id=report.undo_id, tenant_id=report.tenant_id, namespace=report.namespace, step="undo")
    model = health.embedding_model_counted(conn, scope)
    if model is None:
        return  # never measured (no cycle recorded its health here): nothing to correct
    state = health.snapshot(conn, scope, model)
    report.health = state_health(state, STEPS)
    health.record_undo_health(conn, scope, report.undo_id, health=report.health, snapshot=state.as_dict())

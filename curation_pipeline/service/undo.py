"""Undo a whole run (or its part in one namespace), namespace by namespace under each lease.

Used by `curation-pipeline undo` and the `undo_curation_run` Dagster job.
"""

from __future__ import annotations

import uuid

from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.partition_keys import parse_partition_key
from curation_pipeline.service.steps import consolidate
from curation_pipeline.store.database import open_connection
from curation_pipeline.store.locking import namespace_lease
from curation_pipeline.store.undo import (
    UndoReport,
    namespaces_changed_by,
    undo_in_namespace,
)
from curation_pipeline.store.undo import undone_by as _undone_by


class NothingToUndoError(ValueError):
    """The run id (or namespace) names no recorded change."""


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
            reports.append(undo_in_namespace(
                conn, run_id=run_id, undo_id=undo_id, tenant_id=tenant_id, namespace=namespace,
                merge_step=consolidate.SPEC.name, force=force, graph_backend=graph_backend,
            ))
    return reports

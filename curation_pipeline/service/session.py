"""One run's hold on one namespace: its lease, its transactions and, for a dry run, its preview.

A curation run opens one session for its partition and every step works through it:

- the **lease** (store/locking.py) is taken when the session opens and held until it closes, so
  no other run curates the namespace meanwhile;
- `transaction()` is the only way a step writes: one transaction, committed on success and
  rolled back on error, which first proves that the run still holds the lease (the fencing
  check), so a run whose lease was lost and taken over fails instead of writing;
- in a **dry run** every step shares one connection whose transaction is rolled back when the
  session closes, so each step sees the previous ones' work exactly as in a real run; what they
  did is collected just before the rollback and kept as one `curation_preview` activity row.
  Its fencing checks run inside that one transaction, so the lease row stays locked until the
  preview ends: no other run can take the namespace over from a running preview.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg

from curation_pipeline.config.settings import Settings
from curation_pipeline.core.scope import Scope
from curation_pipeline.store import activity
from curation_pipeline.store.database import open_connection
from curation_pipeline.store.locking import Lease, namespace_lease


@dataclass
class NamespaceSession:
    url: str
    settings: Settings
    run_id: str
    tenant_id: str
    namespace: str
    lease: Lease
    dry_run: bool = False
    _preview_conn: psycopg.Connection | None = field(default=None, repr=False)

    def scope(self, step: str) -> Scope:
        return Scope(run_id=self.run_id, tenant_id=self.tenant_id, namespace=self.namespace, step=step)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        if self._preview_conn is not None:
            yield self._preview_conn
            return
        with open_connection(self.url) as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """A connection inside one transaction that holds the run's lease (else LeaseLostError):
        commits on success, rolls back on error.
        (In a dry run: a savepoint of the run's transaction, which is never committed.)"""
        with self.connection() as conn, conn.transaction():
            self.lease.verify(conn)
            yield conn

    @contextmanager
    def bookkeeping(self) -> Iterator[psycopg.Connection]:
        """A transaction for the run's own cycle row only, without the fencing check: a run that
        lost its lease changes no memory, but its row still says which steps failed and why
        (no other run writes a row keyed by this run's id)."""
        with self.connection() as conn, conn.transaction():
            yield conn


@contextmanager
def open_namespace_session(
    url: str, settings: Settings, run_id: str, tenant_id: str, namespace: str, *,
    lock_timeout_s: int, dry_run: bool = False,
) -> Iterator[NamespaceSession]:
    """Take the namespace's lease (waiting up to `lock_timeout_s`) and yield the session."""
    with namespace_lease(url, tenant_id, namespace, lock_timeout_s, holder=f"run {run_id}") as lease:
        session = NamespaceSession(url, settings, run_id, tenant_id, namespace, lease, dry_run=dry_run)
        if not dry_run:
            yield session
            return
        with open_connection(url) as conn:
            session._preview_conn = conn
            try:
                with conn.transaction(force_rollback=True):
                    yield session
                    # Collected before the rollback; a failed preview records nothing.
                    preview = activity.collect_preview(conn, run_id, tenant_id, namespace)
            finally:
                session._preview_conn = None
            with conn.transaction():
                lease.verify(conn)
                activity.record_preview(conn, preview)

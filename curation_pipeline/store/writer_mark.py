"""The curator's writes mark themselves, so the activity clocks (sql/015) never count them.

A write to memory_nodes moves its namespace's activity clock, unless its transaction set
`curation.writer` to 'curator': the steps and undo (store/revisions.update_nodes) and import's
COPY (store/nodes_io.write_nodes, which sets the clocks itself) do. A curation alone must never
trigger the next one.
"""

from __future__ import annotations

import psycopg
from psycopg.pq import TransactionStatus


class UnmarkedWriteError(RuntimeError):
    """A curator write outside a transaction: its mark would not reach the write."""


def mark_curator_write(conn: psycopg.Connection) -> None:
    """Mark the caller's transaction as the curator's (transaction-local: it ends with it)."""
    if conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
        # The mark would end with its own statement and the write would count as an agent's.
        raise UnmarkedWriteError("the curator writes memory nodes inside a transaction (conn.transaction())")
    conn.execute("SELECT set_config('curation.writer', 'curator', true)")

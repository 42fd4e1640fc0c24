"""The namespace lease and its fencing token: a holder that lost the lease cannot write, and a
new holder cannot take over while a write transaction of the old one is still open."""

from __future__ import annotations

import pytest

from curation_pipeline.store.database import open_connection
from curation_pipeline.store.locking import (
    LeaseLostError,
    NamespaceBusyError,
    namespace_lease,
)
from curation_pipeline_tests.support.lease_faults import kill_lease_connection


def _verify_in_a_transaction(url: str, lease) -> None:
    with open_connection(url) as conn, conn.transaction():
        lease.verify(conn)


def test_a_held_lease_verifies_and_a_second_holder_waits_and_gives_up(db, database_url):
    with namespace_lease(database_url, "acme", "support", 5, holder="run A") as lease:
        _verify_in_a_transaction(database_url, lease)
        with pytest.raises(NamespaceBusyError, match="acme:support is being curated by another run"), \
                namespace_lease(database_url, "acme", "support", 1, holder="run B"):
            pass
        # Another namespace is not held up.
        with namespace_lease(database_url, "acme", "elsewhere", 1, holder="run C") as other:
            _verify_in_a_transaction(database_url, other)
        _verify_in_a_transaction(database_url, lease)


def test_a_lease_whose_connection_was_killed_no_longer_verifies(db, database_url):
    with namespace_lease(database_url, "acme", "support", 5, holder="run A") as lease:
        kill_lease_connection(db, "acme", "support")
        with pytest.raises(LeaseLostError, match="run A lost its lease on namespace acme:support: "
                                                 "the connection holding it was closed or killed"):
            _verify_in_a_transaction(database_url, lease)


def test_a_new_holder_fences_out_the_old_one(db, database_url):
    with namespace_lease(database_url, "acme", "support", 5, holder="run A") as old:
        kill_lease_connection(db, "acme", "support")
        with namespace_lease(database_url, "acme", "support", 5, holder="run B") as new:
            assert new.token > old.token
            with pytest.raises(LeaseLostError, match=r"run A lost its lease on namespace acme:support: "
                                                     r"another run \(run B\) took the namespace over"):
                _verify_in_a_transaction(database_url, old)
            _verify_in_a_transaction(database_url, new)


def test_a_takeover_waits_until_the_old_holders_checked_transaction_has_ended(db, database_url):
    with namespace_lease(database_url, "acme", "support", 5, holder="run A") as old, \
            open_connection(database_url) as writer:
        with writer.transaction():
            old.verify(writer)  # passed while the lease was intact: this transaction may write
            kill_lease_connection(db, "acme", "support")
            # The advisory lock is free now, but taking the namespace over must wait for the
            # transaction that already passed its check.
            with pytest.raises(NamespaceBusyError), \
                    namespace_lease(database_url, "acme", "support", 1, holder="run B"):
                pass
            writer.execute(
                "INSERT INTO activity_log (tenant_id, namespace, action, run_id, metadata)"
                " VALUES ('acme', 'support', 'test_write', 'A', '{}')"
            )
        with namespace_lease(database_url, "acme", "support", 5, holder="run B") as new:
            with pytest.raises(LeaseLostError, match=r"another run \(run B\)"), writer.transaction():
                old.verify(writer)
            _verify_in_a_transaction(database_url, new)
    assert db.execute("SELECT run_id FROM activity_log WHERE action = 'test_write'").fetchall() == [("A",)]


@pytest.mark.parametrize(("tenant_id", "namespace"), [("x%y", "%s"), ("o'brien", 'a "b" \\ {}')])
def test_names_are_only_data_in_the_lease(db, database_url, tenant_id, namespace):
    with namespace_lease(database_url, tenant_id, namespace, 5, holder="run A") as lease:
        _verify_in_a_transaction(database_url, lease)
        kill_lease_connection(db, tenant_id, namespace)
        with pytest.raises(LeaseLostError, match="closed or killed"):
            _verify_in_a_transaction(database_url, lease)

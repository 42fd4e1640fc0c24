"""The service functions the command line reaches the store through, on the real store."""

from __future__ import annotations

import uuid

import pytest

from curation_pipeline.config.settings import load_settings
from curation_pipeline.service.inspection import (
    NoSuchNodeError,
    cycle_of_run,
    graph_neighbourhood,
    nodes_to_export,
    recent_runs,
    recorded_cycles,
    set_curation_enabled,
)
from curation_pipeline_tests.conftest import insert, node


def test_a_namespace_switched_off_and_on_again_says_so_in_the_store(db):
    insert(db, node())
    enabled = "SELECT curation_enabled FROM namespace_activity WHERE tenant_id = 'acme' AND namespace = 'support'"
    set_curation_enabled(load_settings(), "acme:support", enabled=False)
    assert db.execute(enabled).fetchone()[0] is False
    set_curation_enabled(load_settings(), "acme:support", enabled=True)
    assert db.execute(enabled).fetchone()[0] is True


def test_an_export_of_one_namespace_counts_and_streams_only_its_nodes(db):
    support = insert(db, node(namespace="support"), node(namespace="support"))
    insert(db, node(namespace="billing"))
    with nodes_to_export(load_settings(), tenant_id="acme", namespace="support") as (total, rows):
        assert total == 2 and sorted(str(row["id"]) for row in rows) == sorted(support)
    with nodes_to_export(load_settings(), tenant_id=None, namespace=None) as (total, rows):
        assert total == 3 and len(list(rows)) == 3


def test_a_store_with_no_runs_has_no_cycles_runs_or_cycle_rows(db):
    settings = load_settings()
    assert recorded_cycles(settings, tenant_id=None, namespace=None, last=5) == []
    assert recent_runs(settings, tenant_id=None, namespace=None, limit=5) == []
    assert cycle_of_run(settings, "acme:support", "no-such-run", preview=False) is None


def test_the_graph_of_an_unknown_node_is_an_error_and_of_an_unsynced_one_empty(db):
    [synced_never] = insert(db, node())
    assert graph_neighbourhood(load_settings(), synced_never) is None
    with pytest.raises(NoSuchNodeError, match="no memory node"):
        graph_neighbourhood(load_settings(), str(uuid.uuid4()))

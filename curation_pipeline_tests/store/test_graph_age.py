"""The Apache AGE mirror: pure Cypher builders, backend choice, and the rows a step mirrors.

AGE is not installed here, so nothing below runs Cypher; the database tests use the real
embedded PostgreSQL without AGE (backend choice, reading the touched rows, the guards that act
before any AGE call)."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

from curation_pipeline.core.scope import Scope
from curation_pipeline.store.graph import upsert_vertices
from curation_pipeline.store.graph_age import (
    EDGE_LABELS,
    GRAPH_NAME,
    GraphBackendError,
    age_available,
    choose_backend,
    cypher_statement,
    edge_label,
    mirror_step,
    neighbourhood_cypher,
    step_rows,
    upsert_edges_cypher,
    upsert_vertices_cypher,
)
from curation_pipeline_tests.conftest import insert, node

NASTY = "it's \"quoted\" $$ DETACH DELETE $$ \\back\\slash\nnew line %s %(x)s }) MATCH (n) DELETE n //"


def vertex(node_id="11111111-1111-1111-1111-111111111111", summary="A memory.", **extra):
    row = {"node_id": node_id, "tenant_id": "acme", "namespace": "support", "heat": 0.5,
           "pinned": False, "summary": summary, "archived": False}
    return row | extra


def edge(edge_id=1, label="merged_into", **extra):
    row = {"edge_id": edge_id, "tenant_id": "acme", "namespace": "support",
           "source_id": "11111111-1111-1111-1111-111111111111",
           "target_id": "22222222-2222-2222-2222-222222222222", "label": label,
           "properties": {}, "retracted": False}
    return row | extra


def test_vertex_values_travel_only_in_the_params_map():
    cypher, params = upsert_vertices_cypher([vertex(summary=NASTY, tenant_id="t'x")])
    other, _ = upsert_vertices_cypher([vertex(node_id="x", summary="plain")])
    assert cypher == other  # the text does not depend on the values at all
    statement = cypher_statement(cypher)
    for value in (NASTY, "t'x", "11111111", "\\back", "DETACH"):
        assert value not in statement
    assert "UNWIND $rows AS r MERGE (v:Memory {node_id: r.node_id})" in cypher
    for key in ("tenant_id", "namespace", "heat", "pinned", "summary", "archived"):
        assert f"v.{key} = r.{key}" in cypher
    assert json.loads(json.dumps(params)) == {"rows": [vertex(summary=NASTY, tenant_id="t'x")]}


def test_only_the_vertex_columns_are_sent_and_a_repeated_node_is_sent_once():
    _, params = upsert_vertices_cypher([vertex(heat=0.1, secret="no"), vertex(heat=0.9)])
    assert params == {"rows": [vertex(heat=0.9)]}


def test_the_sql_passes_params_as_a_bare_placeholder_inside_a_dollar_quoted_query():
    statement = cypher_statement("RETURN $x", ("a", "b"))
    assert statement.startswith(f"SELECT * FROM ag_catalog.cypher('{GRAPH_NAME}', $$")
    assert re.search(r"\$\$, %s\) AS \(a ag_catalog\.agtype, b ag_catalog\.agtype\)$", statement)
    assert statement.count("%s") == 1 and statement.count("$$") == 2 and "::" not in statement
    for bad in ("RETURN '$$'", "RETURN 1 % 2"):
        with pytest.raises(ValueError):
            cypher_statement(bad)


def test_edges_get_one_statement_per_allow_listed_label_with_a_tenant_guard():
    rows = [edge(1), edge(2, "shares_concept_with", properties={"similarity": 0.91}),
            edge(3, retracted=True, properties={"note": NASTY})]
    statements = upsert_edges_cypher(rows)
    assert [re.search(r"\[e:(\w+) ", cypher).group(1) for cypher, _ in statements] == [
        "MERGED_INTO", "SHARES_CONCEPT_WITH"]
    merged, shared = statements
    assert [row["edge_id"] for row in merged[1]["rows"]] == [1, 3]
    assert merged[1]["rows"][1]["retracted"] is True
    assert shared[1]["rows"][0]["properties"] == {"similarity": 0.91}
    for cypher, _ in statements:
        match = cypher.split(" MERGE ")[0]
        assert "MATCH (a:Memory {node_id: r.source_id}), (b:Memory {node_id: r.target_id})" in match
        assert "WHERE a.tenant_id = b.tenant_id AND a.namespace = b.namespace" in match
        assert "a.tenant_id = r.tenant_id AND a.namespace = r.namespace" in match
        assert "SET e.properties = r.properties, e.retracted = r.retracted" in cypher
        assert NASTY not in cypher_statement(cypher) and "similarity" not in cypher


@pytest.mark.parametrize("label", ["MERGED_INTO", "knows", "merged_into]->(x) DETACH DELETE x //", ""])
def test_an_edge_label_outside_the_allow_list_is_refused(label):
    with pytest.raises(ValueError, match="not mirrored to AGE"):
        upsert_edges_cypher([edge(1), edge(2, label)])
    assert set(EDGE_LABELS.values()) == {"MERGED_INTO", "SHARES_CONCEPT_WITH", "SUPERSEDES"}
    assert edge_label("shares_concept_with") == "SHARES_CONCEPT_WITH"
    assert edge_label("supersedes") == "SUPERSEDES"


def test_the_neighbourhood_query_takes_the_node_id_as_a_param():
    cypher, params = neighbourhood_cypher(NASTY)
    assert params == {"node_id": NASTY}
    assert "$node_id" in cypher and NASTY not in cypher_statement(cypher)


def test_without_age_auto_chooses_postgres_and_age_is_refused_with_how_to_install(db):
    assert age_available(db) is False
    assert choose_backend(db, "auto") == "postgres"
    assert choose_backend(db, " Postgres ") == "postgres"
    with pytest.raises(GraphBackendError, match="CURATION_GRAPH_BACKEND=age") as error:
        choose_backend(db, "age")
    message = str(error.value)
    assert "CREATE EXTENSION age" in message and "PostgreSQL major version" in message
    assert isinstance(error.value, ValueError)


@pytest.mark.parametrize("value", ["neo4j", "", "age,postgres"])
def test_an_unknown_backend_setting_is_refused_naming_the_allowed_values(db, value):
    with pytest.raises(GraphBackendError, match="CURATION_GRAPH_BACKEND") as error:
        choose_backend(db, value)
    assert "auto, postgres, age" in str(error.value)


def _graph_with_a_retracted_edge(db):
    """Three vertices written by the real upsert; an edge added by the step, then retracted."""
    keeper, absorbed, bystander = insert(db, node(text="keeper"), node(text=NASTY), node(text="other"))
    scope = Scope(run_id="run-1", tenant_id="acme", namespace="support", step="sync_graph")
    rows = [vertex(node_id, summary) for node_id, summary in ((keeper, "keeper"), (absorbed, NASTY),
                                                             (bystander, "other"))]
    with db.transaction():
        upsert_vertices(db, scope, pl.DataFrame(rows[:2]))
        upsert_vertices(db, Scope("run-0", "acme", "support", "sync_graph"), pl.DataFrame(rows[2:]))
        edge_id = db.execute(
            "INSERT INTO graph_edges (tenant_id, namespace, source_id, target_id, label)"
            " VALUES ('acme', 'support', %s, %s, 'merged_into') RETURNING id", (absorbed, bystander),
        ).fetchone()[0]
        db.execute(
            "INSERT INTO graph_revisions (run_id, step, tenant_id, namespace, kind, edge_id, after)"
            " VALUES ('run-1', 'sync_graph', 'acme', 'support', 'edge', %s, '{}')", (edge_id,),
        )
        db.execute("UPDATE graph_edges SET retracted_at = now(), retracted_by = 'undo-1' WHERE id = %s",
                   (edge_id,))
    return keeper, absorbed, bystander, edge_id


def test_a_step_mirrors_its_touched_rows_as_they_are_now_with_edge_endpoints(db):
    keeper, absorbed, bystander, edge_id = _graph_with_a_retracted_edge(db)
    vertices, edges = step_rows(db, "run-1", "sync_graph", "acme", "support")
    # The bystander was not touched by run-1, but it is an endpoint of an edge run-1 added.
    assert sorted(row["node_id"] for row in vertices) == sorted([keeper, absorbed, bystander])
    assert {row["node_id"]: row["summary"] for row in vertices}[absorbed] == NASTY
    assert edges == [{"edge_id": edge_id, "tenant_id": "acme", "namespace": "support",
                      "source_id": absorbed, "target_id": bystander, "label": "merged_into",
                      "properties": {}, "retracted": True}]
    assert step_rows(db, "run-1", "another_step", "acme", "support") == ([], [])
    # An undo that spans namespaces mirrors each one in its own transaction, under its own lease.
    assert step_rows(db, "run-1", "sync_graph", "acme", "sales") == ([], [])


def test_mirror_step_needs_the_callers_transaction_and_does_nothing_without_changes(db):
    with pytest.raises(GraphBackendError, match="inside the transaction"):
        mirror_step(db, "run-1", "sync_graph", "acme", "support")
    with db.transaction():  # nothing touched: AGE is never called, so this works without it
        assert mirror_step(db, "run-1", "sync_graph", "acme", "support") == {"age_vertices": 0, "age_edges": 0}


def test_an_unknown_edge_label_fails_the_mirror_before_any_age_call(db):
    *_, edge_id = _graph_with_a_retracted_edge(db)
    db.execute("UPDATE graph_edges SET label = 'knows' WHERE id = %s", (edge_id,))
    with pytest.raises(ValueError, match="'knows' is not mirrored to AGE"):
        with db.transaction():
            mirror_step(db, "run-1", "sync_graph", "acme", "support")

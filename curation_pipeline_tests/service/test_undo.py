"""Undo: restores what a run changed, leaves what others changed since, and is undoable."""

from __future__ import annotations

import pytest

from curation_pipeline.defs.job import step_run_config
from curation_pipeline.service.undo import NothingToUndoError, undo_run
from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.conftest import fetch_node, insert, node, run_cycle

pytestmark = pytest.mark.slow

# Near-duplicates whose second says one thing more: the merge rewrites the keeper's text (a
# restatement that adds nothing would leave it as it is).
PARAPHRASES = (
    "Customer Dana Reyes prefers email over phone calls.",
    "Customer Dana Reyes prefers email over phone calls and texts.",
)
VERBOSE = ("The onboarding call with Initech covered SSO setup, billing contacts and data "
           "retention. " * 7).strip()


def _content(db) -> dict:
    """Every row's content, for 'exactly as before' comparisons."""
    nodes = db.execute(
        "SELECT id::text, pointer_summary, embedding::text, embedding_model, confidence,"
        " archived_at, merged_into, pinned, heat FROM memory_nodes ORDER BY id"
    ).fetchall()
    signals = db.execute(
        "SELECT memory_id::text, signal_type FROM training_signals WHERE status = 'pending' ORDER BY 1"
    ).fetchall()
    vertices = db.execute(
        "SELECT node_id::text, heat, pinned, summary, archived FROM graph_vertices ORDER BY 1"
    ).fetchall()
    edges = db.execute(
        "SELECT source_id::text, target_id::text, label FROM graph_edges WHERE retracted_at IS NULL ORDER BY 1, 2"
    ).fetchall()
    return {"nodes": nodes, "signals": signals, "vertices": vertices, "edges": edges}


@pytest.fixture
def curated(db, instance, database_url):
    """A namespace synced once, then curated once by a run that merges, summarizes, embeds,
    marks stale, signals and adds a graph edge."""
    from datetime import timedelta

    from curation_pipeline_tests.conftest import NOW

    ids = insert(
        db,
        node(text=PARAPHRASES[0], base_utility=0.9),
        node(text=PARAPHRASES[1], recall_count=0, epoch=0),
        node(text=VERBOSE, recall_count=0),
        node(text="Old fact.", last_recalled_at=NOW - timedelta(days=60)),
    )
    db.execute("UPDATE namespace_activity SET current_epoch = 500")
    assert run_cycle(instance, op_selection=["sync_graph"]).success
    start = _content(db)
    result = run_cycle(instance)
    assert result.success
    return {"ids": ids, "start": start, "run_id": result.run_id, "url": database_url}


def test_undo_restores_every_row_signal_vertex_and_edge_the_run_changed(db, curated):
    after_run = _content(db)
    assert after_run != curated["start"]
    assert len(after_run["edges"]) == 1 and after_run["signals"]

    [report] = undo_run(curated["url"], curated["run_id"])

    assert _content(db) == curated["start"]
    assert report.conflicts == [] and report.signals_withdrawn == 1 and report.edges_retracted == 1
    # Nothing was deleted: the signal is marked withdrawn, the edge retracted.
    assert db.execute("SELECT status, withdrawn_by FROM training_signals").fetchall() == [
        ("withdrawn", report.undo_id)
    ]
    assert db.execute("SELECT count(*) FROM graph_edges WHERE retracted_by = %s", (report.undo_id,)).fetchone()[0] == 1
    # The undo is recorded like a run.
    assert db.execute(
        "SELECT count(*) FROM node_revisions WHERE run_id = %s AND step = 'undo'", (report.undo_id,)
    ).fetchone()[0] == len(report.nodes_restored) > 0
    assert db.execute(
        "SELECT metadata->>'undone_run_id' FROM activity_log WHERE action = 'curation_undo'"
    ).fetchone()[0] == curated["run_id"]


def _store_counts(db) -> tuple[int, int]:
    return db.execute("SELECT count(*) FILTER (WHERE archived_at IS NULL),"
                      " count(*) FILTER (WHERE archived_at IS NOT NULL) FROM memory_nodes").fetchone()


def test_an_undo_records_the_namespace_health_as_it_left_it(db, curated, capsys):
    from curation_pipeline.cli.main import main
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.core.render.tables import short_run_id
    from curation_pipeline.service.inspection import recorded_cycles

    def latest():
        return recorded_cycles(load_settings(), tenant_id="acme", namespace="support", last=5)[-1]

    after_cycle = latest()
    assert after_cycle["kind"] == "cycle"
    cycle_counts = (after_cycle["health"]["active_nodes"], after_cycle["health"]["archived_nodes"])
    assert cycle_counts == _store_counts(db) and cycle_counts[1] >= 1

    [report] = undo_run(curated["url"], curated["run_id"])

    after_undo = latest()
    assert (after_undo["kind"], after_undo["run_id"]) == ("undo", report.undo_id)
    undone_counts = (after_undo["health"]["active_nodes"], after_undo["health"]["archived_nodes"])
    assert undone_counts == _store_counts(db) != cycle_counts  # the store's numbers, not the cycle's
    assert after_undo["health"]["merged"] == 0 and after_undo["health"]["duration_s"] is None
    assert report.health == after_undo["health"]
    # `health` prints it as the namespace's latest line, marked as an undo.
    assert main(["health", "--partition", "acme:support"]) == 0
    out = capsys.readouterr().out
    undo_lines = [line for line in out.splitlines() if short_run_id(report.undo_id) in line]
    assert undo_lines and all(line.split()[1] == "undo" for line in undo_lines)
    [first] = [line for line in out.splitlines() if line.startswith("acme:support")][-2:-1] or [None]
    assert first is not None and first.split()[1] == "cycle"  # the cycle before it, in order


def test_undoing_twice_is_a_no_op(db, curated):
    undo_run(curated["url"], curated["run_id"])
    revisions = db.execute("SELECT count(*) FROM node_revisions").fetchone()[0]
    [again] = undo_run(curated["url"], curated["run_id"])
    assert again.nodes_restored == [] and again.conflicts == []
    assert again.nodes_already_undone > 0
    assert (again.signals_withdrawn, again.edges_retracted, again.vertices_restored) == (0, 0, 0)
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] == revisions
    assert _content(db) == curated["start"]


def test_an_undo_can_be_undone_and_then_undone_again(db, curated):
    after_run = _content(db)
    [first] = undo_run(curated["url"], curated["run_id"])
    [redo] = undo_run(curated["url"], first.undo_id)
    assert _content(db) == after_run
    assert redo.signals_restored == 1 and redo.edges_restored == 1
    [again] = undo_run(curated["url"], redo.undo_id)
    assert _content(db) == curated["start"]
    assert again.conflicts == []


def test_a_row_an_agent_changed_since_is_listed_and_left_alone_unless_forced(db, curated):
    keeper = curated["ids"][0]
    db.execute("UPDATE memory_nodes SET pointer_summary = 'Agent rewrote this.' WHERE id = %s", (keeper,))
    # An agent merely recalling a summarized node does not block undoing its summary.
    db.execute("UPDATE memory_nodes SET recall_count = 42 WHERE id = %s", (curated["ids"][2],))

    [report] = undo_run(curated["url"], curated["run_id"])
    assert report.conflicts == [{"kind": "node", "id": keeper, "changed_since": ["pointer_summary"],
                                 "changed_by": []}]  # an agent: no later run
    assert fetch_node(db, keeper)["pointer_summary"] == "Agent rewrote this."
    summarized = fetch_node(db, curated["ids"][2])
    assert summarized["pointer_summary"] == VERBOSE and summarized["recall_count"] == 42
    absorbed = fetch_node(db, curated["ids"][1])
    assert absorbed["archived_at"] is None and absorbed["merged_into"] is None

    [forced] = undo_run(curated["url"], curated["run_id"], force=True)
    assert forced.nodes_forced == [keeper]
    assert fetch_node(db, keeper)["pointer_summary"] == PARAPHRASES[0]


def test_undo_of_one_namespace_leaves_the_others(db, instance, database_url):
    insert(db, node(text=PARAPHRASES[0]), node(text=PARAPHRASES[1]),
           node(namespace="other", text=PARAPHRASES[0]), node(namespace="other", text=PARAPHRASES[1]))
    run_a, run_b = run_cycle(instance), run_cycle(instance, namespace="other")
    assert run_a.success and run_b.success
    [report] = undo_run(database_url, run_b.run_id, partition_key="acme:other")
    assert report.namespace == "other"
    archived = dict(db.execute(
        "SELECT namespace, count(*) FILTER (WHERE archived_at IS NOT NULL) FROM memory_nodes GROUP BY 1"
    ).fetchall())
    assert archived == {"support": 1, "other": 0}


def test_undo_of_an_unknown_run_says_so(db, database_url):
    with pytest.raises(NothingToUndoError, match="changed nothing"):
        undo_run(database_url, "no-such-run")


def test_history_explains_every_change_and_the_nodes_merged_in(db, curated, capsys):
    from curation_pipeline.cli.main import main

    keeper, absorbed = curated["ids"][0], curated["ids"][1]
    assert main(["history", keeper]) == 0
    out = capsys.readouterr().out
    # First the node as it is now: live, where, and its whole current text.
    [now_text] = db.execute("SELECT pointer_summary FROM memory_nodes WHERE id = %s", (keeper,)).fetchone()
    assert out.startswith(f"node {keeper}\n  now: live in acme:support\n  text: {now_text}\n  recalled ")
    assert "\nchanges, oldest first:\n" in out
    assert main(["history", absorbed]) == 0
    assert f"  now: merged into {keeper} in acme:support\n  text: {PARAPHRASES[1]}\n" in capsys.readouterr().out
    assert f"run {curated['run_id']}  step consolidate_duplicates" in out
    assert "similarity=0.9" in out and "method=offline" in out
    # The absorbed text says the keeper's and more: it took the keeper sentence's place.
    assert f"      + {PARAPHRASES[1]}\n      - {PARAPHRASES[0]}\n      now: {PARAPHRASES[1]}" in out
    assert f"replaced: {PARAPHRASES[0]!r} by {PARAPHRASES[1]!r}" in out
    assert "step revectorize" in out and "embedding: computed" in out
    assert f"merged into it:\n  {absorbed} run {curated['run_id']}: {PARAPHRASES[1]}" in out

    undo_run(curated["url"], curated["run_id"])
    assert main(["history", keeper]) == 0
    out = capsys.readouterr().out
    assert f"step undo\n    why: undo_of={curated['run_id']}" in out
    assert "(merge since undone)" in out


def test_cli_undo_lists_conflicts_and_exits_nonzero(db, curated, capsys):
    from curation_pipeline.cli.main import main

    db.execute("UPDATE memory_nodes SET pointer_summary = 'Agent rewrote this.' WHERE id = %s", (curated["ids"][0],))
    assert main(["undo", "--run", curated["run_id"]]) == 1
    captured = capsys.readouterr()
    assert f"left alone: node {curated['ids'][0]} changed since (pointer_summary)" in captured.err
    assert "acme:support" in captured.out and "acme/support" not in captured.out
    assert "undo id: " in captured.out  # the id of the undo's Dagster run
    assert main(["undo", "--run", "no-such-run"]) == 2
    assert main(["undo", "--run", curated["run_id"], "--namespace", "acme:elsewhere"]) == 2


def test_an_operator_can_undo_a_run_from_dagster(db, curated, instance):
    from curation_pipeline.defs.definitions import load_defs

    result = load_defs().resolve_job_def("undo_curation_run").execute_in_process(
        run_config={"ops": {"undo_run_op": {"config": {"run_id": curated["run_id"]}}}},
        instance=instance,
    )
    assert result.success
    assert _content(db) == curated["start"]
    # The undo is recorded under the Dagster run's id, so it can be undone the same way.
    assert db.execute(
        "SELECT count(*) FROM node_revisions WHERE run_id = %s AND step = 'undo'", (result.run_id,)
    ).fetchone()[0] > 0
    redo = load_defs().resolve_job_def("undo_curation_run").execute_in_process(
        run_config={"ops": {"undo_run_op": {"config": {"run_id": result.run_id}}}}, instance=instance,
    )
    assert redo.success and _content(db) != curated["start"]


def test_an_agent_write_between_two_steps_of_the_run_survives_its_undo(db, instance, database_url, monkeypatch):
    from curation_pipeline.store import candidates

    keeper, _ = insert(db, node(text=PARAPHRASES[0], base_utility=0.9, recall_count=1),
                       node(text=PARAPHRASES[1]))
    real_load = candidates.missing_embedding_candidates

    def load_after_an_agent_recall(*args, **kwargs):
        # Between step 2 (which rewrote the keeper and added up the recalls) and step 4 (which
        # re-embeds it), an agent writes a column the run did not change.
        with open_connection(database_url, autocommit=True) as agent:
            agent.execute("UPDATE memory_nodes SET heat = 0.9 WHERE id = %s", (keeper,))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(candidates, "missing_embedding_candidates", load_after_an_agent_recall)
    run = run_cycle(instance)
    assert run.success
    assert db.execute("SELECT count(*) FROM node_revisions WHERE node_id = %s", (keeper,)).fetchone()[0] == 2

    [report] = undo_run(database_url, run.run_id)
    restored = fetch_node(db, keeper)
    assert report.conflicts == [] and keeper in report.nodes_restored
    assert restored["pointer_summary"] == PARAPHRASES[0]
    assert (restored["recall_count"], restored["heat"]) == (1, 0.9)  # the agent's write stays


def test_a_merge_made_again_after_its_undo_brings_its_edge_back(db, curated, instance):
    [report] = undo_run(curated["url"], curated["run_id"])
    assert report.edges_retracted == 1
    # An operator lifts the undo's veto on the pair, so the next cycle merges it again.
    db.execute("UPDATE merge_vetoes SET lifted_by = 'operator', lifted_at = now()")
    again = run_cycle(instance)
    assert again.success
    assert db.execute(
        "SELECT count(*) FROM graph_edges WHERE retracted_at IS NULL AND label = 'merged_into'"
    ).fetchone()[0] == 1
    # ... and undoing that run retracts it again.
    [second] = undo_run(curated["url"], again.run_id)
    assert second.edges_restored + second.edges_retracted == 1
    assert db.execute("SELECT count(*) FROM graph_edges WHERE retracted_at IS NULL").fetchone()[0] == 0


def test_an_undone_merge_stays_undone_until_its_undo_is_undone(db, curated, instance):
    absorbed = curated["ids"][1]
    [report] = undo_run(curated["url"], curated["run_id"])
    assert report.merges_vetoed == 1
    for _ in range(2):  # later cycles, full or incremental, do not merge the pair again
        assert run_cycle(instance).success
        assert fetch_node(db, absorbed)["archived_at"] is None

    [redo] = undo_run(curated["url"], report.undo_id)
    assert redo.vetoes_lifted == 1
    assert fetch_node(db, absorbed)["merged_into"] is not None
    assert db.execute("SELECT count(*) FROM merge_vetoes WHERE lifted_by IS NULL").fetchone()[0] == 0


def test_graph_shows_a_nodes_keeper_and_the_nodes_merged_into_it(db, curated, capsys):
    from curation_pipeline.cli.main import main

    keeper, absorbed = curated["ids"][0], curated["ids"][1]
    assert main(["graph", keeper]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"node {keeper} (acme:support, active")
    assert f"merged into it:\n  {absorbed}  {PARAPHRASES[1]}" in out
    assert main(["graph", absorbed]) == 0
    out = capsys.readouterr().out
    assert "archived" in out.splitlines()[0] and f"keeper: {keeper}" in out
    # After the merge is undone its edge is retracted and no longer shown.
    undo_run(curated["url"], curated["run_id"])
    assert main(["graph", absorbed]) == 0
    assert "no edges" in capsys.readouterr().out
    assert main(["graph", "not-a-uuid"]) == 2


MERGE_CONFIG = step_run_config({"consolidate_duplicates": {"similarity_threshold": 0.8}})
DANA = "Customer Dana Reyes prefers email over phone calls. Her account manager is Sam Okafor."
BADGE = "Her badge number is 4471."
DESK = "Her desk is B7 on the third floor."


def _orphaned_sentences(db) -> list[tuple[str, str]]:
    """(archived node, sentence) for every sentence of an archived node that its keeper lacks."""
    from curation_pipeline.core.text import split_sentences

    rows = db.execute(
        "SELECT a.id::text, a.pointer_summary, k.pointer_summary, k.archived_at IS NULL"
        " FROM memory_nodes a JOIN memory_nodes k ON k.id = a.merged_into WHERE a.archived_at IS NOT NULL"
    ).fetchall()
    return [(archived_id, sentence) for archived_id, text, keeper_text, keeper_active in rows
            for sentence in split_sentences(text) if not keeper_active or sentence not in keeper_text]


def test_forcing_the_undo_of_a_merge_a_later_run_built_on_refuses_that_keeper(db, instance, database_url, capsys):
    """Issue 13.3: runs A then B merge into one keeper; forcing A's undo must not put the keeper
    back to its text from before A while B's absorbed node still points at it."""
    from curation_pipeline.cli.main import main

    keeper, first = insert(db, node(text=DANA, base_utility=0.9), node(text=f"{DANA} {BADGE}"))
    run_a = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_a.success and fetch_node(db, first)["merged_into"] is not None
    [second] = insert(db, node(text=f"{DANA} {BADGE} {DESK}", base_utility=0.1))
    run_b = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_b.success and str(fetch_node(db, second)["merged_into"]) == keeper
    assert DESK in fetch_node(db, keeper)["pointer_summary"]

    assert main(["undo", "--run", run_a.run_id, "--force"]) == 1
    captured = capsys.readouterr()
    assert _orphaned_sentences(db) == []
    assert DESK in fetch_node(db, keeper)["pointer_summary"]
    assert (f"left alone: node {keeper}: node {second} was merged into it since, by run {run_b.run_id};"
            f" undo run {run_b.run_id} first") in captured.err
    assert fetch_node(db, first)["archived_at"] is None  # the rest of A is undone

    # Undone newest first, both runs come back out whole.
    assert main(["undo", "--run", run_b.run_id]) == 0
    assert main(["undo", "--run", run_a.run_id]) == 0
    assert _orphaned_sentences(db) == []
    assert {row[0] for row in db.execute("SELECT pointer_summary FROM memory_nodes WHERE archived_at IS NULL")} == {
        DANA, f"{DANA} {BADGE}", f"{DANA} {BADGE} {DESK}"}


def test_a_forced_undo_lists_every_row_it_forced(db, curated, capsys, instance):
    from curation_pipeline.cli.main import main
    from curation_pipeline.defs.definitions import load_defs

    keeper, summarized = curated["ids"][0], curated["ids"][2]
    for node_id in (keeper, summarized):
        db.execute("UPDATE memory_nodes SET pointer_summary = 'Agent rewrote this.' WHERE id = %s", (node_id,))
    assert main(["undo", "--run", curated["run_id"], "--force"]) == 0
    captured = capsys.readouterr()
    for node_id in (keeper, summarized):
        assert f"forced: node {node_id} (pointer_summary had changed since)" in captured.out
    assert fetch_node(db, keeper)["pointer_summary"] == PARAPHRASES[0]

    # The Dagster undo job shows them too.
    [undo_id] = [row[0] for row in db.execute(
        "SELECT run_id FROM activity_log WHERE action = 'curation_undo'").fetchall()]
    redo = load_defs().resolve_job_def("undo_curation_run").execute_in_process(
        run_config={"ops": {"undo_run_op": {"config": {"run_id": undo_id}}}}, instance=instance)
    assert redo.success
    db.execute("UPDATE memory_nodes SET pointer_summary = 'Agent again.' WHERE id = %s", (keeper,))
    forced = load_defs().resolve_job_def("undo_curation_run").execute_in_process(
        run_config={"ops": {"undo_run_op": {"config": {"run_id": redo.run_id, "force": True}}}},
        instance=instance)
    assert forced.success
    output = next(event for event in forced.all_events
                  if event.step_key == "undo_run_op" and event.event_type_value == "STEP_OUTPUT")
    assert output.event_specific_data.metadata["forced"].value == [{"kind": "node", "id": keeper, "changed_since": ["pointer_summary"]}]


def test_a_forced_undo_of_an_undo_writes_a_vector_back_with_its_model(db, curated):
    """The run re-embedded the keeper it merged into (same model, new vector), and its undo put
    the old vector back. An agent then edited the keeper, clearing its vector and model. Forcing
    the undo of the undo writes the run's vector again, and the name of the model that made it
    with it: never a vector beside a NULL model (which no step compares, and which an export
    and import would turn into model 'imported')."""
    from curation_pipeline_tests.conftest import EMBEDDER

    keeper = curated["ids"][0]
    curated_vector = db.execute("SELECT embedding::text FROM memory_nodes WHERE id = %s", (keeper,)).fetchone()[0]
    [undo] = undo_run(curated["url"], curated["run_id"])
    db.execute("UPDATE memory_nodes SET pointer_summary = 'The agent rewrote this.', embedding = NULL,"
               " embedding_model = NULL WHERE id = %s", (keeper,))

    [forced] = undo_run(curated["url"], undo.undo_id, force=True)

    assert keeper in forced.nodes_forced
    row = db.execute("SELECT embedding::text, embedding_model FROM memory_nodes WHERE id = %s", (keeper,)).fetchone()
    assert row == (curated_vector, EMBEDDER.name)


def test_undoing_an_undo_does_not_archive_again_a_node_edited_since(db, curated, capsys):
    """The undo of an undo would merge the absorbed node back into its keeper; an agent edited
    it meanwhile, and the keeper never held that text: it stays active, and so does its edge."""
    from curation_pipeline.cli.main import main

    keeper, absorbed = curated["ids"][0], curated["ids"][1]
    [undo] = undo_run(curated["url"], curated["run_id"])
    db.execute("UPDATE memory_nodes SET pointer_summary = %s WHERE id = %s",
               (f"{PARAPHRASES[1]} She is on leave until June.", absorbed))

    assert main(["undo", "--run", undo.undo_id]) == 1
    assert (f"left alone: node {absorbed}: its text changed after it was taken out of its keeper {keeper}"
            in capsys.readouterr().err)
    assert fetch_node(db, absorbed)["archived_at"] is None
    assert _orphaned_sentences(db) == []
    assert db.execute("SELECT count(*) FROM graph_edges WHERE label = 'merged_into' AND retracted_at IS NULL"
                      ).fetchone()[0] == 0


@pytest.mark.parametrize("force", [False, True])
def test_a_row_an_agent_moved_to_another_namespace_is_listed_and_left_alone(db, curated, capsys, force):
    keeper, absorbed = curated["ids"][:2]
    merged_text = fetch_node(db, keeper)["pointer_summary"]
    assert fetch_node(db, absorbed)["merged_into"] is not None  # the run merged them
    # An agent moves the keeper (with the text merged into it) to another namespace.
    db.execute("UPDATE memory_nodes SET namespace = 'elsewhere' WHERE id = %s", (keeper,))

    from curation_pipeline.cli.main import main

    code = main(["undo", "--run", curated["run_id"], *(["--force"] if force else [])])
    out, err = capsys.readouterr()
    assert code == 1  # a partial undo
    assert f"left alone: node {keeper}: moved to acme:elsewhere since" in err
    # Nothing crosses into the other namespace, even forced: the keeper keeps its text there.
    moved = fetch_node(db, keeper)
    assert (moved["namespace"], moved["pointer_summary"]) == ("elsewhere", merged_text)
    # The rest of the run is undone: the node it archived is active again with its own text.
    restored = fetch_node(db, absorbed)
    assert restored["archived_at"] is None and restored["merged_into"] is None
    assert restored["pointer_summary"] == PARAPHRASES[1]


def test_undoing_an_undo_never_archives_a_node_into_a_keeper_moved_elsewhere(db, curated, capsys):
    keeper, absorbed = curated["ids"][:2]
    [undo] = undo_run(curated["url"], curated["run_id"])
    assert fetch_node(db, absorbed)["archived_at"] is None
    db.execute("UPDATE memory_nodes SET namespace = 'elsewhere' WHERE id = %s", (keeper,))

    from curation_pipeline.cli.main import main

    assert main(["undo", "--run", undo.undo_id, "--force"]) == 1
    err = capsys.readouterr().err
    assert f"left alone: node {absorbed}: its keeper {keeper} moved to acme:elsewhere since" in err
    assert fetch_node(db, absorbed)["archived_at"] is None  # still active, with its own text


def _merge_with_recalls(db, instance, *, texts: tuple[str, str]) -> tuple[str, str, str]:
    """Two near-duplicates with recalls, merged by one run: (keeper, absorbed, run id)."""
    from curation_pipeline_tests.conftest import NOW

    keeper, absorbed = insert(db, node(text=texts[0], base_utility=0.9, recall_count=3),
                              node(text=texts[1], recall_count=2, last_recalled_at=NOW))
    run = run_cycle(instance, op_selection=["consolidate_duplicates"])
    assert run.success
    merged = fetch_node(db, keeper)
    assert merged["recall_count"] == 5  # the merge carried the absorbed node's recalls
    assert fetch_node(db, absorbed)["merged_into"] is not None
    return keeper, absorbed, run.run_id


def _recall(db, node_id: str, times: int) -> None:
    db.execute("UPDATE memory_nodes SET recall_count = recall_count + %s, last_recalled_at = now() WHERE id = %s",
               (times, node_id))


def test_an_agent_recalling_the_keeper_after_a_merge_does_not_block_its_undo(db, instance, database_url):
    keeper, absorbed, run_id = _merge_with_recalls(db, instance, texts=PARAPHRASES)
    _recall(db, keeper, 4)
    recalled_at = fetch_node(db, keeper)["last_recalled_at"]

    [report] = undo_run(database_url, run_id)
    assert report.conflicts == [] and keeper in report.nodes_restored
    restored = fetch_node(db, keeper)
    assert restored["pointer_summary"] == PARAPHRASES[0]
    # The merge's 2 carried recalls are taken back, the agent's 4 since are kept, and so is
    # the agent's recall as the last one.
    assert (restored["recall_count"], restored["last_recalled_at"]) == (3 + 4, recalled_at)
    assert fetch_node(db, absorbed)["archived_at"] is None


def test_undoing_twice_a_merge_that_changed_only_the_keepers_recency_takes_the_recalls_back_once(
        db, instance, database_url):
    same = "Customer Dana Reyes prefers email over phone calls."
    keeper, _, run_id = _merge_with_recalls(db, instance, texts=(same, same))
    _recall(db, keeper, 4)
    [first] = undo_run(database_url, run_id)
    assert keeper in first.nodes_restored and fetch_node(db, keeper)["recall_count"] == 3 + 4
    _recall(db, keeper, 1)
    [again] = undo_run(database_url, run_id)
    assert again.nodes_restored == [] and again.nodes_already_undone >= 1
    assert fetch_node(db, keeper)["recall_count"] == 3 + 4 + 1
    # Undoing the undo carries the recalls again; undoing that takes them back again.
    [redo] = undo_run(database_url, first.undo_id)
    assert fetch_node(db, keeper)["recall_count"] == 3 + 4 + 1 + 2
    undo_run(database_url, redo.undo_id)
    assert fetch_node(db, keeper)["recall_count"] == 3 + 4 + 1


def test_forcing_the_undo_of_a_repoint_after_its_node_came_back_keeps_the_table_whole(db, instance, database_url):
    """The soak's case (seed 936560). Run A merges a node into a keeper; run B merges that keeper
    into a newer one and so moves the node on to it (only its `merged_into` changes). A forced
    undo of A makes the node active again (the keeper's own text stays: it was merged into the
    newer one since). A forced undo of B then must not write B's old keeper beside the node's
    empty `archived_at`: the table refuses that row, and the whole undo failed. It puts the
    link back whole: the node is archived into its keeper again, whose text holds it."""
    keeper, absorbed = insert(db, node(text=DANA, base_utility=0.5), node(text=f"{DANA} {BADGE}", base_utility=0.1))
    run_a = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_a.success and str(fetch_node(db, absorbed)["merged_into"]) == keeper
    [newer] = insert(db, node(text=f"{DANA} {BADGE} {DESK}", base_utility=0.99))
    run_b = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_b.success and str(fetch_node(db, keeper)["merged_into"]) == newer
    assert str(fetch_node(db, absorbed)["merged_into"]) == newer  # moved on by run B

    [first] = undo_run(database_url, run_a.run_id, force=True)
    assert fetch_node(db, absorbed)["archived_at"] is None
    assert [(row["id"], row["reason"]) for row in first.held] == [(keeper, "merged_into_since")]

    undo_run(database_url, run_b.run_id, force=True)

    assert (fetch_node(db, absorbed)["archived_at"] is not None, str(fetch_node(db, absorbed)["merged_into"])) == (
        True, keeper)
    assert _orphaned_sentences(db) == []
    assert {row[0] for row in db.execute("SELECT pointer_summary FROM memory_nodes WHERE archived_at IS NULL")} == {
        f"{DANA} {BADGE}", f"{DANA} {BADGE} {DESK}"}


@pytest.mark.parametrize("imported_text, held", [
    (BADGE, True),  # only what the run merged in says it
    ("Customer Dana Reyes prefers email over phone calls.", False),  # the keeper said it before the run
])
def test_a_node_imported_into_a_keeper_after_a_merge_keeps_its_text_through_the_merges_undo(
        db, instance, database_url, capsys, tmp_path, imported_text, held):
    """The soak's case (seed 311730, 14 actions). Run A merges a node into a keeper, whose text
    gains a sentence. An import then writes a node archived into that keeper, saying it. Undoing
    A would put the keeper's text back to before A, and the imported node's sentence would be in
    no active node: the keeper is held back. No revision of a run linked the imported node, so
    only the store's record of when it came in tells it from a node merged before A."""
    import json

    from curation_pipeline.cli.main import main

    keeper, first = insert(db, node(text=DANA, base_utility=0.9), node(text=f"{DANA} {BADGE}"))
    run_a = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_a.success and str(fetch_node(db, first)["merged_into"]) == keeper
    assert BADGE in fetch_node(db, keeper)["pointer_summary"]
    path = tmp_path / "imported.jsonl"
    imported = "7d0c2c59-4a51-4e0e-9a7c-3f1d2b6e8a10"
    path.write_text(json.dumps({"id": imported, "tenant_id": "acme", "namespace": "support",
                                "pointer_summary": imported_text, "archived_at": "2024-01-01T00:00:00+00:00",
                                "merged_into": keeper}) + "\n", encoding="utf-8")
    assert main(["import", str(path)]) == 0
    capsys.readouterr()
    # When a row came in is the store's to say: a write to it changes nothing.
    db.execute("UPDATE memory_nodes SET inserted_at = '-infinity' WHERE id = %s", (imported,))

    assert main(["undo", "--run", run_a.run_id]) == (1 if held else 0)

    assert _orphaned_sentences(db) == []
    assert fetch_node(db, first)["archived_at"] is None  # the node A merged is active again
    if held:
        assert BADGE in fetch_node(db, keeper)["pointer_summary"]
        assert (f"left alone: node {keeper}: node {imported} was written into it, archived, after the run started,"
                " and only what the run merged in says it") in capsys.readouterr().err
    else:
        assert fetch_node(db, keeper)["pointer_summary"] == DANA


def test_undoing_a_summary_whose_node_was_merged_since_holds_that_node_back(db, instance, database_url, capsys):
    """The soak's case (seed 141273, 80 actions). Run A summarizes a verbose node; run B merges
    the summary into a keeper that says the same. Undoing A would put the long text back into a
    node that is archived, in a keeper holding only the summary: its sentences would be in no
    active node. The node is held back, naming run B; undone newest first, both come back."""
    from curation_pipeline.cli.main import main

    [verbose] = insert(db, node(text=VERBOSE, recall_count=0))
    run_a = run_cycle(instance, run_config=MERGE_CONFIG)
    summary = fetch_node(db, verbose)["pointer_summary"]
    assert run_a.success and summary != VERBOSE
    [keeper] = insert(db, node(text=summary, base_utility=0.99))
    run_b = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_b.success and str(fetch_node(db, verbose)["merged_into"]) == keeper

    assert main(["undo", "--run", run_a.run_id]) == 1

    assert fetch_node(db, verbose)["pointer_summary"] == summary
    assert _orphaned_sentences(db) == []
    assert (f"left alone: node {verbose}: it was merged into {keeper} since, by run {run_b.run_id};"
            f" putting its old text back would leave that text in no active node; undo run {run_b.run_id} first"
            ) in capsys.readouterr().err
    assert main(["undo", "--run", run_b.run_id]) == 0
    assert main(["undo", "--run", run_a.run_id]) == 0
    assert fetch_node(db, verbose)["pointer_summary"] == VERBOSE and fetch_node(db, verbose)["archived_at"] is None

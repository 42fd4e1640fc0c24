"""Supersession through the real job on the real store: the newest value is the current one, the
old one stays, recallable, explained and undoable; the judge, when the LLM is on, through a real
HTTP server of ours."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from curation_pipeline.core.prompts import VERDICT_FIELD, parse_data_block
from curation_pipeline.defs.job import step_run_config
from curation_pipeline.service.undo import undo_run
from curation_pipeline_tests.conftest import NOW, cycle_row, fetch_node, insert, node, run_cycle
from curation_pipeline_tests.defs.test_llm_job import LLM_VARIABLES
from curation_pipeline_tests.support.llm_stub import StubLLMServer, answer, faithful, purpose, user_message

pytestmark = pytest.mark.slow

OLD = "The office printer for the Kestrel team is on floor 3."
NEW = "The office printer for the Kestrel team is on floor 5."


def _update(db, *, old_recalled_days: float = 1.0) -> tuple[str, str]:
    return insert(db, node(text=OLD, created_at=NOW - timedelta(days=40),
                           last_recalled_at=NOW - timedelta(days=old_recalled_days)),
                  node(text=NEW, created_at=NOW - timedelta(days=3)))


def _current(db) -> set[str]:
    return {row[0] for row in db.execute("SELECT pointer_summary FROM current_memory").fetchall()}


def test_the_newer_value_supersedes_the_older_which_stays_active_and_out_of_current_memory(db, instance):
    older, newer = _update(db)
    result = run_cycle(instance)
    assert result.success
    old, new = fetch_node(db, older), fetch_node(db, newer)
    assert (old["confidence"], str(old["superseded_by"]), old["valid_until"]) == ("superseded", newer, new["created_at"])
    assert old["archived_at"] is None and old["pointer_summary"] == OLD  # kept, recallable, as written
    assert new["row_version"] == 1  # the newer is untouched
    assert _current(db) == {NEW}
    steps = cycle_row(db, result.run_id)["steps"]
    assert steps["consolidate_duplicates"]["superseded"] == 1 and steps["consolidate_duplicates"]["pairs_merged"] == 0
    assert cycle_row(db, result.run_id)["health"]["superseded_nodes"] == 1
    [reason] = db.execute("SELECT reason FROM node_revisions WHERE node_id = %s", (older,)).fetchone()
    assert reason["superseded_by"] == newer and reason["method"] == "offline"
    assert reason["changes"] == [{"old": OLD[:-1], "new": NEW[:-1], "changed": ["number '3' -> '5'"]}]
    # The graph says which supersedes which, and when the old value held.
    [(source, target, properties)] = db.execute(
        "SELECT source_id::text, target_id::text, properties FROM graph_edges WHERE label = 'supersedes'").fetchall()
    assert (source, target) == (newer, older)
    assert properties["valid_until"] is not None and properties["valid_from"] is not None


def test_a_superseded_memory_is_never_marked_stale_nor_merged(db, instance):
    older, _ = _update(db, old_recalled_days=60)  # old enough for step 5
    assert run_cycle(instance, op_selection=["consolidate_duplicates"]).success
    again = run_cycle(instance)
    assert again.success
    assert fetch_node(db, older)["confidence"] == "superseded"
    assert cycle_row(db, again.run_id)["steps"]["mark_stale_confidence"]["marked_stale"] == 0
    assert fetch_node(db, older)["archived_at"] is None


def test_undo_brings_the_old_value_back_and_the_pair_is_not_superseded_again(db, instance, database_url):
    older, _ = _update(db)
    result = run_cycle(instance)
    [report] = undo_run(database_url, result.run_id)
    assert older in report.nodes_restored and report.merges_vetoed == 1
    restored = fetch_node(db, older)
    assert (restored["confidence"], restored["superseded_by"], restored["valid_until"]) == ("default", None, None)
    assert _current(db) == {OLD, NEW}
    assert db.execute("SELECT count(*) FROM graph_edges WHERE label = 'supersedes' AND retracted_at IS NULL").fetchone()[0] == 0
    again = run_cycle(instance)
    assert cycle_row(db, again.run_id)["steps"]["consolidate_duplicates"]["superseded"] == 0


def test_history_says_what_replaced_the_old_value(db, instance, capsys):
    from curation_pipeline.cli.main import main

    older, newer = _update(db)
    run_cycle(instance)
    assert main(["history", older]) == 0
    out = capsys.readouterr().out
    assert f"superseded_by={newer}" in out and "confidence: default -> superseded" in out
    assert f"updated: number '3' -> '5': {OLD[:-1]!r} -> {NEW[:-1]!r}" in out


def test_a_merge_of_the_successor_hands_the_supersession_to_its_keeper(db, instance):
    older, newer = _update(db)
    assert run_cycle(instance, op_selection=["consolidate_duplicates"]).success
    # The agent writes the new value again, in its own words, before the next cycle.
    again = insert(db, node(text="The office printer for the Kestrel team is on floor 5, near the kitchen.",
                            created_at=NOW - timedelta(days=3), base_utility=0.9))[0]
    result = run_cycle(instance, op_selection=["consolidate_duplicates"],
                       run_config=step_run_config({"consolidate_duplicates": {"similarity_threshold": 0.9,
                                                                                 "max_archive_fraction": 0.5}}))
    assert result.success and cycle_row(db, result.run_id)["steps"]["consolidate_duplicates"]["pairs_merged"] == 1
    assert str(fetch_node(db, newer)["merged_into"]) == again
    assert str(fetch_node(db, older)["superseded_by"]) == again  # re-pointed with the merge


def test_a_superseded_node_exports_and_imports_as_it_is(db, instance, tmp_path):
    from curation_pipeline.cli.main import main

    older, newer = _update(db)
    run_cycle(instance, op_selection=["consolidate_duplicates"])
    exported = tmp_path / "nodes.jsonl"
    assert main(["export", "-o", str(exported)]) == 0
    rows = {row["id"]: row for row in map(json.loads, exported.read_text().splitlines())}
    assert rows[older]["superseded_by"] == newer and rows[older]["confidence"] == "superseded"
    assert rows[older]["valid_until"] is not None
    # Into an empty store, it comes back the same.
    db.execute("TRUNCATE graph_edges, graph_vertices, node_revisions, graph_revisions, memory_nodes CASCADE")
    assert main(["import", str(exported)]) == 0
    assert str(fetch_node(db, older)["superseded_by"]) == newer
    # A successor that is nowhere is refused, naming the line.
    orphan = tmp_path / "orphan.jsonl"
    orphan.write_text(json.dumps({**rows[older], "id": None, "superseded_by": "00000000-0000-4000-8000-000000000001"}) + "\n")
    assert main(["import", str(orphan)]) == 1


# --------------------------------------------------------------------------- the judge


@pytest.fixture
def judge_env(monkeypatch):
    for name in LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    def configure(url: str) -> None:
        for name, value in {"CURATOR_LLM_ENABLED": "true", "CURATOR_LLM_BASE_URL": url, "CURATOR_LLM_MODEL": "stub",
                            "CURATOR_LLM_TIMEOUT_SECS": "5", "CURATOR_LLM_CACHE": "false"}.items():
            monkeypatch.setenv(name, value)
    return configure


def _judging(verdicts: dict[frozenset, str], seen: list):
    def respond(body: dict, number: int):
        if purpose(body) != "judge":
            return faithful(body)
        entries = parse_data_block(user_message(body))["entries"]
        seen.append(entries)
        return answer(VERDICT_FIELD, verdicts.get(frozenset(e["text"] for e in entries), "distinct"), output_tokens=3)
    return respond


# Lexically 0.75 - 0.92 apart: in the judge band, and no update or duplicate by words.
RELATED = ("Nadia Petrova translated the Quorum user guide into Russian.",
           "Nadia Petrova also proofreads the Quorum user guide in Russian.")
SAME = ("The Zephyr quarterly business review takes place in the Lisbon office.",
        "The Zephyr quarterly business review is held at the Lisbon office.")


def test_the_judge_decides_the_band_and_the_dates_decide_which_is_current(db, instance, judge_env):
    seen: list = []
    related = insert(db, node(text=RELATED[0], created_at=NOW - timedelta(days=9)),
                     node(text=RELATED[1], created_at=NOW - timedelta(days=4)))
    same = insert(db, node(text=SAME[0], created_at=NOW - timedelta(days=20), base_utility=0.9),
                  node(text=SAME[1], created_at=NOW - timedelta(days=2)))
    stub = StubLLMServer(_judging({frozenset(RELATED): "related", frozenset(SAME): "same"}, seen))
    try:
        judge_env(stub.url)
        result = run_cycle(instance, run_config=step_run_config({"consolidate_duplicates": {"max_archive_fraction": 0.5}}))
    finally:
        stub.close()
    assert result.success
    step2 = cycle_row(db, result.run_id)["steps"]["consolidate_duplicates"]
    assert (step2["judged"], step2["judge_same"], step2["judge_related"]) == (2, 1, 1)
    assert step2["llm_requests"] >= 2  # the judge spends the step's LLM budget
    # Both dates travel with the entries, the older first.
    assert all(entries[0]["written"] < entries[1]["written"] for entries in seen)
    # "same" merged; "related" is linked by step 6b, even with the lexical embedder.
    assert str(fetch_node(db, same[1])["merged_into"]) == same[0]
    assert db.execute("SELECT count(*) FROM graph_edges WHERE label = 'shares_concept_with'"
                      " AND source_id = least(%s::uuid, %s::uuid)", related).fetchone()[0] == 1
    assert fetch_node(db, related[0])["superseded_by"] is None
    judged = db.execute("SELECT verdict, outcome FROM pair_judgements ORDER BY verdict").fetchall()
    assert judged == [("related", "none"), ("same", "merged")]


def _step2_judged(db, instance, judge_env, verdicts: dict[frozenset, str]) -> dict:
    """Step 2 alone with a judge answering `verdicts`; its counts as the cycle row keeps them."""
    stub = StubLLMServer(_judging(verdicts, []))
    try:
        judge_env(stub.url)
        result = run_cycle(instance, op_selection=["consolidate_duplicates"])
    finally:
        stub.close()
    return cycle_row(db, result.run_id)["steps"]["consolidate_duplicates"]


def test_an_update_verdict_without_a_changed_value_is_not_taken(db, instance, judge_env):
    # A model that calls every pair an update: the texts give no reason, nothing is superseded.
    first, second = insert(db, node(text=RELATED[0], created_at=NOW - timedelta(days=9)),
                           node(text=RELATED[1], created_at=NOW - timedelta(days=4)))
    step2 = _step2_judged(db, instance, judge_env, {frozenset(RELATED): "update"})
    assert step2["judge_update"] == 1 and step2["judge_updates_refused"] == 1 and step2["superseded"] == 0
    assert fetch_node(db, first)["superseded_by"] is None and fetch_node(db, second)["superseded_by"] is None


def test_a_judges_update_of_a_reworded_memory_supersedes_it_and_carries_what_it_did_not_say(
        db, instance, judge_env, monkeypatch):
    # The words alone find no update (the old date names the deadline in the newer memory); the
    # judge does, and the newer memory takes over the older statement it does not say.
    monkeypatch.setenv("CURATOR_JUDGE_BAND_LOW", "0.65")  # lexically 0.69 apart
    older_text = "Set May 9 as the deadline for the Halvorsen grant report. Use the grant template."
    newer_text = "The May 9 deadline for the Halvorsen grant report was extended to May 16."
    older, newer = insert(db, node(text=older_text, created_at=NOW - timedelta(days=9)),
                          node(text=newer_text, created_at=NOW - timedelta(days=4)))
    step2 = _step2_judged(db, instance, judge_env, {frozenset((older_text, newer_text)): "update"})
    assert (step2["judge_update"], step2["judge_updates_refused"], step2["superseded"], step2["carried_into"]) == (1, 0, 1, 1)
    assert str(fetch_node(db, older)["superseded_by"]) == newer
    assert fetch_node(db, newer)["pointer_summary"] == newer_text + " Use the grant template."
    assert fetch_node(db, older)["pointer_summary"] == older_text  # the older memory keeps its words


def test_a_pair_that_shares_its_subject_is_judged_below_the_band_however_the_cosine_found_it(
        db, instance, judge_env, monkeypatch):
    # Both the cosine (lexically 0.80) and the subject index ("Gerald Ford") find the pair; the
    # words cannot tell a new position from a second one, the judge can. Counter-example: a pair
    # as alike (0.77) about two subjects is no question for the judge below its band.
    monkeypatch.setenv("CURATOR_JUDGE_BAND_LOW", "0.9")
    same_subject = ("Gerald Ford plays the position of center.", "Gerald Ford plays the position of starting pitcher.")
    two_subjects = ("Our keeper plays the position of center.", "Our striker plays the position of center.")
    older, newer = insert(db, node(text=same_subject[0], created_at=NOW - timedelta(days=9)),
                          node(text=same_subject[1], created_at=NOW - timedelta(days=4)))
    keeper, striker = insert(db, node(text=two_subjects[0], created_at=NOW - timedelta(days=9)),
                             node(text=two_subjects[1], created_at=NOW - timedelta(days=4)))
    seen: list = []
    stub = StubLLMServer(_judging({frozenset(same_subject): "update", frozenset(two_subjects): "update"}, seen))
    try:
        judge_env(stub.url)
        result = run_cycle(instance, op_selection=["consolidate_duplicates"])
    finally:
        stub.close()
    assert result.success
    assert [{entry["text"] for entry in entries} for entries in seen] == [set(same_subject)]
    assert str(fetch_node(db, older)["superseded_by"]) == newer
    assert fetch_node(db, keeper)["superseded_by"] is None and fetch_node(db, striker)["superseded_by"] is None


# The same service in other words: no frame word shared, so the words cannot say which attribute
# changed; a judge can. Beside it, a plan the judge also calls an update.
REWORDED = ("The Vantage monorepo contains 37 microservices. It deploys to Fly.io.",
            "After the consolidation, Vantage is down to 22 services.")
PLANNED = ("The Harbin fleet runs 40 trucks.", "Harbin will cut the fleet to 30 trucks next year.")


@pytest.mark.parametrize("trusted", [False, True])
def test_a_trusted_judge_reads_which_attribute_changed_and_the_words_keep_every_fact(
        db, instance, judge_env, monkeypatch, trusted):
    monkeypatch.setenv("CURATOR_JUDGE_TRUSTED", str(trusted).lower())
    older, newer = insert(db, node(text=REWORDED[0], created_at=NOW - timedelta(days=9)),
                          node(text=REWORDED[1], created_at=NOW - timedelta(days=4)))
    fleet, plan = insert(db, node(text=PLANNED[0], created_at=NOW - timedelta(days=9)),
                         node(text=PLANNED[1], created_at=NOW - timedelta(days=4)))
    step2 = _step2_judged(db, instance, judge_env, {frozenset(REWORDED): "update", frozenset(PLANNED): "update"})
    assert step2["judge_update"] == 2
    # The plan replaces nothing yet, trusted or not.
    assert fetch_node(db, fleet)["superseded_by"] is None and fetch_node(db, plan)["superseded_by"] is None
    if not trusted:  # the default: the words must find the attribute, and do not
        assert step2["superseded"] == 0 and fetch_node(db, older)["superseded_by"] is None
        return
    assert step2["superseded"] == 1 and str(fetch_node(db, older)["superseded_by"]) == newer
    # Nothing of the older memory leaves current memory: the newer one carries what it did not say.
    assert fetch_node(db, newer)["pointer_summary"] == REWORDED[1] + " It deploys to Fly.io."
    assert _current(db) == {REWORDED[1] + " It deploys to Fly.io.", *PLANNED}


# A knowledge-update stream as public ones write it: one template per relation, a new value later.
STREAM = [
    ("Eddie Marsh died in the city of Leeds.", "Eddie Marsh died in the city of York."),  # once-only
    ("The official language of Veloria is French.", "The official language of Veloria is Persian."),
    ("Tomas Ruiz plays the position of left back.", "Tomas Ruiz plays the position of goalkeeper."),
    ("Ada Voss visited the city of Leeds.", "Ada Voss visited the city of York."),  # two visits
]


def _stream(db) -> list[tuple[str, str]]:
    return [insert(db, node(text=old, created_at=NOW - timedelta(days=30 - n)),
                   node(text=new, created_at=NOW - timedelta(days=5 - n)))
            for n, (old, new) in enumerate(STREAM)]


def test_a_knowledge_update_stream_keeps_the_newest_value_current_where_the_words_are_sure(db, instance):
    ids = _stream(db)
    assert run_cycle(instance).success
    superseded = {STREAM[n][0] for n, (older, _) in enumerate(ids) if fetch_node(db, older)["superseded_by"]}
    # A death happens once; an official language is one attribute, whatever kinds its values are.
    # Which position a player holds may be two ("owns billing" / "owns search"): linked, for the
    # judge. Two visits are two events.
    assert superseded == {STREAM[0][0], STREAM[1][0]}
    assert _current(db) == {STREAM[0][1], STREAM[1][1], *STREAM[2], *STREAM[3]}


def test_a_judge_reads_which_of_two_objects_holds_and_the_words_show_one_replaced_the_other(
        db, instance, judge_env, monkeypatch):
    monkeypatch.setenv("CURATOR_JUDGE_BAND_LOW", "0.6")
    older, newer = insert(db, node(text=STREAM[2][0], created_at=NOW - timedelta(days=9)),
                          node(text=STREAM[2][1], created_at=NOW - timedelta(days=4)))
    step2 = _step2_judged(db, instance, judge_env, {frozenset(STREAM[2]): "update"})
    assert (step2["judge_update"], step2["judge_updates_refused"], step2["superseded"]) == (1, 0, 1)
    assert str(fetch_node(db, older)["superseded_by"]) == newer


# --------------------------------------------------------------------------- a successor that changed


def _check(db, result, name: str) -> dict:
    """The check's outcome as the cycle row keeps it, after asserting Dagster recorded the same."""
    [kept] = [check for check in cycle_row(db, result.run_id)["checks"] if check["name"] == name]
    [evaluation] = [e for e in result.get_asset_check_evaluations() if e.check_name == name]
    assert evaluation.passed == kept["passed"]
    return kept


@pytest.mark.parametrize("change", [
    "UPDATE memory_nodes SET archived_at = now() WHERE id = %(newer)s",
    "UPDATE memory_nodes SET tenant_id = 'globex' WHERE id = %(newer)s",
    "UPDATE memory_nodes SET namespace = 'elsewhere' WHERE id = %(newer)s",
    "UPDATE memory_nodes SET pointer_summary = 'The Kestrel team moved to the Lisbon office.' WHERE id = %(newer)s",
], ids=["archived", "moved to another tenant", "moved to another namespace", "edited"])
def test_a_supersession_its_successor_no_longer_holds_fails_the_check_until_a_cycle_undoes_it(db, instance, change):
    older, newer = _update(db)
    assert run_cycle(instance).success
    assert str(fetch_node(db, older)["superseded_by"]) == newer
    assert _check(db, run_cycle(instance), "supersessions_hold")["passed"]
    db.execute(change, {"newer": newer})
    # A cycle whose step 2 did not run (a selection, a failed step): the check names it.
    skipped = run_cycle(instance, op_selection=[
        "reclassify_stale", "summarize_verbose", "revectorize", "mark_stale_confidence", "sync_graph",
        "associate_concepts", "log_curation_activity"])
    failed = _check(db, skipped, "supersessions_hold")
    assert not failed["passed"] and older in failed["description"], failed
    # The next whole cycle puts the older memory back, records it and counts it.
    repaired = run_cycle(instance)
    assert _check(db, repaired, "supersessions_hold")["passed"]
    assert cycle_row(db, repaired.run_id)["steps"]["consolidate_duplicates"]["supersessions_undone"] == 1
    assert OLD in _current(db)
    [reason] = db.execute("SELECT reason FROM node_revisions WHERE node_id = %s ORDER BY id DESC LIMIT 1",
                          (older,)).fetchone()
    assert reason["supersession_undone"]["superseded_by"] == newer


def test_undoing_a_sync_that_followed_a_moved_successor_leaves_its_edge_alone(db, instance, database_url):
    """A successor an agent moved to another namespace: that namespace's step 6 moves its vertex
    and retracts its `supersedes` edge in the old namespace. Undoing that run cannot bring the
    edge back live (it would cross namespaces): it is left alone and said, and the undo succeeds."""
    older, newer = _update(db)
    assert run_cycle(instance).success
    db.execute("UPDATE memory_nodes SET namespace = 'elsewhere' WHERE id = %s", (newer,))
    moved = run_cycle(instance, "acme", "elsewhere")
    assert moved.success
    assert db.execute("SELECT retracted_at IS NOT NULL FROM graph_edges WHERE label = 'supersedes'").fetchone() == (True,)
    reports = undo_run(database_url, moved.run_id)
    conflicts = [row for report in reports for row in report.conflicts if row["kind"] == "edge"]
    assert [row["changed_since"] for row in conflicts] == [["a vertex moved to another tenant or namespace"]]
    assert db.execute("SELECT retracted_at IS NOT NULL FROM graph_edges WHERE label = 'supersedes'").fetchone() == (True,)


def test_a_long_successor_is_not_cut_short_by_a_summary_that_would_drop_its_newer_value(db, instance):
    """Step 3's offline summary cuts a long, rarely recalled text at 200 characters. Cutting the
    memory that supersedes another could drop its newer value, and then neither value would be
    current: the successor stays whole; a long memory nobody hides behind is still summarized."""
    preamble = ("The Kestrel team keeps its design notes in the shared wiki, reviews them every Tuesday morning, "
                "and archives the ones that are older than a quarter. Its standup is at half past nine, its retro "
                "is on Friday afternoons, and its on-call rotation changes every week. Its backlog is groomed by "
                "the product lead, its releases go out behind feature flags, and its incident reviews are written "
                "up in the wiki before the next planning meeting. New joiners pair with a buddy for their first month, and every visitor signs in at the front desk.")
    older, newer, other = insert(
        db,
        node(text=OLD, created_at=NOW - timedelta(days=40), recall_count=0),
        node(text=f"{preamble} {NEW}", created_at=NOW - timedelta(days=3), recall_count=0),
        node(text=preamble.replace("Kestrel", "Heron"), recall_count=0),
    )
    result = run_cycle(instance)
    assert result.success
    assert str(fetch_node(db, older)["superseded_by"]) == newer
    assert fetch_node(db, newer)["pointer_summary"].endswith(NEW)
    assert fetch_node(db, other)["pointer_summary"].endswith("…")
    assert NEW in " ".join(_current(db))
    assert cycle_row(db, result.run_id)["steps"]["summarize_verbose"]["summarized"] == 1


def _superseded_again_in_sales(db, instance) -> tuple[str, str, str]:
    """A supersession drawn in acme/support, taken back there when its successor moved to
    acme/sales, then made again in acme/sales once the older memory followed it. Returns the
    older and newer ids and the first run's id."""
    older, newer = _update(db)
    first = run_cycle(instance)
    assert first.success
    db.execute("UPDATE memory_nodes SET namespace = 'sales' WHERE id = %s", (newer,))
    assert run_cycle(instance).success
    assert fetch_node(db, older)["superseded_by"] is None
    db.execute("UPDATE memory_nodes SET namespace = 'sales' WHERE id = %s", (older,))
    assert run_cycle(instance, "acme", "sales").success
    return older, newer, first.run_id


def _live_supersedes_edges(db) -> list[tuple]:
    return db.execute("SELECT source_id::text, target_id::text, tenant_id, namespace FROM graph_edges"
                      " WHERE label = 'supersedes' AND retracted_at IS NULL").fetchall()


def test_a_supersession_made_again_after_both_memories_moved_namespace_is_drawn_in_their_new_one(db, instance):
    """The soak's case (seed 204559). In acme/sales the pair is an update again: its edge (the
    same two nodes and label, so the same row) must come back in acme/sales, not be revived in
    acme/support, which the graph refuses and which failed the whole cycle."""
    older, newer, _ = _superseded_again_in_sales(db, instance)
    assert str(fetch_node(db, older)["superseded_by"]) == newer
    assert _live_supersedes_edges(db) == [(newer, older, "acme", "sales")]


@pytest.mark.parametrize("force", [False, True])
def test_undoing_the_first_supersession_leaves_its_edge_where_it_was_made_again(db, instance, database_url, force):
    """The same seed, further on: undoing the acme/support run that first drew the edge must not
    retract it now that it stands in acme/sales for a supersession made there. An undo writes
    only in the namespace the run curated, even forced; the edge is listed as moved."""
    older, newer, first_run = _superseded_again_in_sales(db, instance)
    [edge_id] = [str(row[0]) for row in db.execute("SELECT id FROM graph_edges WHERE label = 'supersedes'")]

    reports = undo_run(database_url, first_run, force=force)

    assert _live_supersedes_edges(db) == [(newer, older, "acme", "sales")]
    assert str(fetch_node(db, older)["superseded_by"]) == newer
    assert {"kind": "edge", "id": edge_id, "moved_to": "acme:sales"} in [row for r in reports for row in r.moved]


def test_undoing_the_cycle_that_took_a_supersession_back_never_points_across_namespaces(db, instance, database_url):
    """The soak's case (seed 141273). The successor moved to acme/sales, so a cycle took the
    supersession back; undoing that cycle would point the older memory at a successor of
    another namespace. Held back (`successor_moved`): the older memory stays current, and the
    next cycle runs."""
    older, newer = _update(db)
    assert run_cycle(instance).success
    db.execute("UPDATE memory_nodes SET namespace = 'sales' WHERE id = %s", (newer,))
    took_back = run_cycle(instance)
    assert took_back.success and fetch_node(db, older)["superseded_by"] is None

    [report] = undo_run(database_url, took_back.run_id)

    assert [(row["id"], row["reason"], row["moved_to"]) for row in report.held] == [(older, "successor_moved", "acme:sales")]
    assert fetch_node(db, older)["superseded_by"] is None and OLD in _current(db)
    assert run_cycle(instance).success


def test_a_superseded_memory_pointing_into_another_namespace_does_not_fail_the_graph_sync(db, instance):
    """An agent (or a bug) can leave an archived memory superseded by a memory of another
    namespace: step 2 re-checks only active ones, and the graph refuses an edge across
    namespaces. The cycle must still run, drawing no such edge."""
    older, newer = _update(db)
    assert run_cycle(instance).success
    db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (older,))
    db.execute("UPDATE memory_nodes SET namespace = 'sales' WHERE id = %s", (newer,))
    assert run_cycle(instance, "acme", "sales").success  # the successor's vertex follows it
    # An edit puts the older memory in acme/support's next graph sync.
    db.execute("UPDATE memory_nodes SET pointer_summary = pointer_summary || ' ' WHERE id = %s", (older,))

    assert run_cycle(instance).success
    assert _live_supersedes_edges(db) == []

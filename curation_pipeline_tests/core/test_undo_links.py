"""The rule that holds back an undo's restores which would strand a merged node's text."""

from __future__ import annotations

from curation_pipeline.core.undo_links import Link, NodeNow, Restore, held_back

ACTIVE = Link(False)


def into(keeper: str) -> Link:
    return Link(True, keeper)


def test_a_keeper_put_back_to_before_the_run_is_held_while_a_later_merge_points_at_it():
    now = {"keeper": NodeNow(ACTIVE),
           "later": NodeNow(into("keeper"), link_before_run=ACTIVE, linked_by="run-b"),
           "earlier": NodeNow(into("keeper"), link_before_run=into("keeper"))}
    held = held_back({"keeper": Restore(ACTIVE, relinks=False, rewrites_text=True)}, now)
    assert list(held) == ["keeper"]
    assert (held["keeper"].reason, held["keeper"].nodes, held["keeper"].runs) == ("merged_since", ["later"], ["run-b"])


def test_merges_from_before_the_run_and_nodes_restored_with_the_keeper_do_not_hold_it():
    now = {"keeper": NodeNow(ACTIVE),
           "earlier": NodeNow(into("keeper"), link_before_run=into("keeper")),
           "never_revised": NodeNow(into("keeper")),  # imported archived: as it was
           "absorbed": NodeNow(into("keeper"), link_before_run=ACTIVE)}
    restores = {"keeper": Restore(ACTIVE, relinks=False, rewrites_text=True),
                "absorbed": Restore(ACTIVE, relinks=True, rewrites_text=False)}
    assert held_back(restores, now) == {}


BEFORE_RUN = "Dana Reyes prefers email. Her manager is Sam Okafor."
MERGED_IN = "Her badge number is 4471."


def test_a_node_written_into_the_keeper_after_the_run_started_holds_it_unless_the_old_text_says_it():
    # No revision links an imported node: only when it came into the store tells it apart.
    restores = {"keeper": Restore(ACTIVE, relinks=False, rewrites_text=True, text=BEFORE_RUN)}

    def now_with(text: str, *, existed: bool) -> dict:
        return {"keeper": NodeNow(ACTIVE, text=f"{BEFORE_RUN} {MERGED_IN}"),
                "imported": NodeNow(into("keeper"), existed_before_run=existed, text=text)}

    held = held_back(restores, now_with(MERGED_IN, existed=False))
    assert (held["keeper"].reason, held["keeper"].nodes) == ("written_into_since", ["imported"])
    # Counter-examples: the keeper said it before the run (in words a merge would accept), or
    # the node was there before the run (its link then is its link now).
    assert held_back(restores, now_with("Dana Reyes prefers email.", existed=False)) == {}
    assert held_back(restores, now_with("Her manager is Sam Okafor", existed=False)) == {}
    assert held_back(restores, now_with(MERGED_IN, existed=True)) == {}
    # Moved by later runs and back (its link when written decides), it still has no run to
    # undo first; written active and merged in by a later run, it names that run.
    moved_back = now_with(MERGED_IN, existed=False)
    moved_back["imported"] = NodeNow(into("keeper"), link_before_run=into("keeper"), existed_before_run=False,
                                     text=MERGED_IN, linked_by="undo-of-run-b")
    assert held_back(restores, moved_back)["keeper"].reason == "written_into_since"
    merged_later = now_with(MERGED_IN, existed=False)
    merged_later["imported"] = NodeNow(into("keeper"), link_before_run=ACTIVE, existed_before_run=False,
                                       text=MERGED_IN, linked_by="run-b")
    held = held_back(restores, merged_later)["keeper"]
    assert (held.reason, held.runs) == ("merged_since", ["run-b"])
    # A number the old text does not have is not said by it.
    badge = {"keeper": Restore(ACTIVE, relinks=False, rewrites_text=True, text=f"{BEFORE_RUN} {MERGED_IN}")}
    assert held_back(badge, now_with("Her badge number is 4471.", existed=False)) == {}
    assert "keeper" in held_back(badge, now_with("Her badge number is 4472.", existed=False))


def test_a_node_pointing_at_the_keeper_before_the_run_but_edited_since_holds_it():
    now = {"keeper": NodeNow(ACTIVE),
           "edited": NodeNow(into("keeper"), link_before_run=into("keeper"), text_as_before_run=False)}
    held = held_back({"keeper": Restore(ACTIVE, relinks=False, rewrites_text=True)}, now)
    assert held["keeper"].reason == "merged_since"


def test_a_keeper_restore_that_only_touches_other_columns_is_never_held():
    now = {"keeper": NodeNow(ACTIVE), "later": NodeNow(into("keeper"), link_before_run=ACTIVE)}
    assert held_back({"keeper": Restore(ACTIVE, relinks=False, rewrites_text=False)}, now) == {}


def test_archiving_again_into_a_keeper_whose_text_moved_on_is_held():
    now = {"absorbed": NodeNow(ACTIVE), "keeper": NodeNow(ACTIVE, text_as_before_run=False)}
    held = held_back({"absorbed": Restore(into("keeper"), relinks=True, rewrites_text=False)}, now)
    assert held["absorbed"].reason == "keeper_changed" and held["absorbed"].nodes == ["keeper"]
    # ... but not when the keeper's text comes back with it, or never moved.
    restores = {"absorbed": Restore(into("keeper"), relinks=True, rewrites_text=False),
                "keeper": Restore(ACTIVE, relinks=False, rewrites_text=True)}
    assert held_back(restores, now) == {}
    now["keeper"] = NodeNow(ACTIVE, text_as_before_run=True)
    assert held_back({"absorbed": Restore(into("keeper"), relinks=True, rewrites_text=False)}, now) == {}


def test_what_the_undo_recorded_about_the_keepers_text_decides_over_its_history():
    # The keeper's history says its text moved on (an agent edit before the undone undo), but
    # the undone undo recorded that text when it took the node out: it is unchanged since.
    now = {"absorbed": NodeNow(ACTIVE), "keeper": NodeNow(ACTIVE, text_as_before_run=False)}
    kept = Restore(into("keeper"), relinks=True, rewrites_text=False, keeper_text_kept=True)
    assert held_back({"absorbed": kept}, now) == {}
    now["keeper"] = NodeNow(ACTIVE, text_as_before_run=True)
    moved = Restore(into("keeper"), relinks=True, rewrites_text=False, keeper_text_kept=False)
    assert held_back({"absorbed": moved}, now)["absorbed"].reason == "keeper_changed"


def test_a_node_edited_since_it_was_taken_out_is_not_archived_again():
    now = {"absorbed": NodeNow(ACTIVE), "keeper": NodeNow(ACTIVE)}
    restores = {"absorbed": Restore(into("keeper"), relinks=True, rewrites_text=False, text_changed_since_run=True),
                "keeper": Restore(ACTIVE, relinks=False, rewrites_text=True)}
    assert {node_id: hold.reason for node_id, hold in held_back(restores, now).items()} == {"absorbed": "node_changed"}


def test_no_chain_may_end_at_an_archived_node():
    # Pointing a node at a keeper that is archived (and stays so) is held back ...
    now = {"absorbed": NodeNow(ACTIVE), "keeper": NodeNow(into("other")), "other": NodeNow(ACTIVE)}
    held = held_back({"absorbed": Restore(into("keeper"), relinks=True, rewrites_text=False)}, now)
    assert held["absorbed"].reason == "keeper_archived"
    # ... and so is archiving a node that another still points at.
    now = {"keeper": NodeNow(ACTIVE), "later": NodeNow(into("keeper")), "other": NodeNow(ACTIVE)}
    held = held_back({"keeper": Restore(into("other"), relinks=True, rewrites_text=False)}, now)
    assert held["keeper"].reason == "keeper_archived" and held["keeper"].nodes == ["later"]


def test_holding_one_restore_back_can_hold_back_another():
    # The keeper is held (a later merge points at it); the absorbed node would be archived
    # into it again, but its text does not come back, so that restore is held too.
    now = {"keeper": NodeNow(ACTIVE, text_as_before_run=False),
           "later": NodeNow(into("keeper"), link_before_run=ACTIVE, linked_by="run-b"),
           "absorbed": NodeNow(ACTIVE)}
    restores = {"keeper": Restore(ACTIVE, relinks=False, rewrites_text=True),
                "absorbed": Restore(into("keeper"), relinks=True, rewrites_text=False)}
    held = held_back(restores, now)
    assert {node_id: hold.reason for node_id, hold in held.items()} == {
        "keeper": "merged_since", "absorbed": "keeper_changed"}


def test_putting_back_the_text_of_a_node_merged_since_is_held():
    """The soak's case (seed 141273, 80 actions): a run summarized a node, a later run merged the
    summary into a keeper; undoing the first run would put the node's long text back while it is
    archived, and the keeper holds only the summary. The node is held back, naming the merge."""
    now = {"keeper": NodeNow(ACTIVE),
           "summarized": NodeNow(into("keeper"), link_before_run=ACTIVE, linked_by="run-b")}
    held = held_back({"summarized": Restore(into("keeper"), relinks=False, rewrites_text=True)}, now)
    assert list(held) == ["summarized"]
    assert (held["summarized"].reason, held["summarized"].nodes, held["summarized"].runs) == (
        "merged_into_since", ["keeper"], ["run-b"])


def test_putting_back_the_text_of_a_node_archived_into_the_same_keeper_before_the_run_is_not_held():
    """Counter-example: the node was in that keeper with that text before the run (its text as
    before the run is what the keeper took in), so the restore strands nothing."""
    now = {"keeper": NodeNow(ACTIVE), "absorbed": NodeNow(into("keeper"), link_before_run=into("keeper"))}
    assert held_back({"absorbed": Restore(into("keeper"), relinks=False, rewrites_text=True)}, now) == {}

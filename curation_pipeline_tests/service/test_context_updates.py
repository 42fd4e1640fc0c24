"""A memory that names no subject of its own, read with the memory written just before it
(core/context_updates.py, store/context_pairs.py), on the real store with step 2 run directly."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from curation_pipeline.core.context_updates import context_update, needs_context
from curation_pipeline_tests.conftest import NOW, fetch_node, insert, node
from curation_pipeline_tests.service.test_steps_direct import _step_2, _step_2_config


def _current(db) -> set[str]:
    return {row[0] for row in db.execute("SELECT pointer_summary FROM current_memory WHERE tenant_id = 'acme'")}


def _at(minutes: int):
    return NOW - timedelta(days=1) + timedelta(minutes=minutes)


def test_make_that_updates_the_memory_written_just_before_it_and_says_what_it_means(db, database_url):
    older, newer = insert(db, node(text="The budget is 50k.", created_at=_at(0)),
                          node(text="Make that 150k.", created_at=_at(2)))
    counts = [_step_2(database_url, _step_2_config()) for _ in range(3)]
    assert fetch_node(db, older)["superseded_by"] == uuid.UUID(newer)
    # Current memory says 150k of the budget, once, and no longer 50k.
    assert _current(db) == {"Make that 150k. The budget is 150k."}
    assert sum(c["superseded"] for c in counts) == 1


def test_a_place_and_room_without_a_subject(db, database_url):
    older, newer = insert(db, node(text="The meeting is in the Seattle office, room 302.", created_at=_at(0)),
                          node(text="Portland office, room 1.", created_at=_at(1)))
    [_step_2(database_url, _step_2_config()) for _ in range(3)]
    assert fetch_node(db, older)["superseded_by"] == uuid.UUID(newer)
    assert _current(db) == {"Portland office, room 1. The meeting is in the Portland office, room 1."}


@pytest.mark.parametrize(("memories", "why"), [
    ([("The budget is 50k.", 0), ("Make that 150k.", 24 * 60)], "a day later: not the memory just before it"),
    ([("The budget is 50k.", 0), ("The team offsite is in Lisbon.", 1), ("Make that 150k.", 2)],
     "another memory was written in between"),
    ([("The travel budget is $5,000 and the hotel budget is $3,000.", 0), ("Make that $4,000.", 1)],
     "two amounts before it: which one changed is not said"),
    ([("The standup is at 9:00.", 0), ("Lunch at 12:30.", 1)], "it speaks of something else"),
])
def test_when_the_memory_before_it_does_not_say_which_value_changed_nothing_is_superseded(
        db, database_url, memories, why):
    insert(db, *[node(text=text, created_at=_at(minutes)) for text, minutes in memories])
    [_step_2(database_url, _step_2_config()) for _ in range(2)]
    assert _current(db) == {text for text, _ in memories}, why


@pytest.mark.parametrize(("text", "needs"), [
    ("Make that 150k.", True), ("Actually, 9:30.", True), ("Portland office, room 1.", True),
    ("The budget is 150k.", False),  # a subject and a verb of its own
    ("ok, thanks!", False),  # no value
    ("Make that 150k. And the headcount is 7, with two contractors from Lisbon.", False),  # more than one sentence
])
def test_which_memories_need_the_one_before_them(text, needs):
    assert needs_context(text) is needs


def test_a_speakers_turn_is_read_without_its_label():
    check = context_update("Jon: The budget is 50k.", "Jon: Make that 150k.")
    assert check is not None and check.carried_text == "Jon: Make that 150k. The budget is 150k."


def test_a_capitalised_reply_is_no_new_name_for_the_memory_before_it():
    # "Sounds" opens the turn capitalised, as a name would: the words around it are not the
    # earlier memory's, so nothing is replaced.
    assert context_update("The meeting is with Dana.", "Sounds good!") is None

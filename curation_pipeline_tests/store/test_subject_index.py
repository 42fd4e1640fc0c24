"""The subject index of step 2 (core/subjects.subject_keys, store/subject_index.py) on the real
store: what each memory is keyed by, and the pairs that share a key however far apart their
vectors are."""

from __future__ import annotations

import pytest

from curation_pipeline.core.scope import Scope
from curation_pipeline.core.subjects import subject_keys
from curation_pipeline.store import subject_index
from curation_pipeline_tests.conftest import EMBEDDER, insert, node

SCOPE = Scope("test-run", "acme", "support", "consolidate_duplicates")


@pytest.mark.parametrize(("text", "key"), [
    # A lone name that opens its sentence is its subject when a verb follows it.
    ("Telegram was developed by Telegram FZ-LLC.", "name:telegram"),
    ("Greg helped me negotiate a $5,000 signing bonus.", "name:greg"),
    ("Rosa does Mondays instead now.", "name:rosa"),
    ("Kira graduated from Edinburgh with a law degree.", "name:kira"),
])
def test_a_lone_name_that_opens_its_sentence_before_a_verb_is_a_subject(text, key):
    assert key in subject_keys(text)


@pytest.mark.parametrize(("text", "word"), [
    # Counter-examples: a word capitalised only because it opens the note is no name, whether it
    # is the note's verb or a common noun with no verb after it.
    ("Booked a table at Nopa for Friday.", "booked"),
    ("Paid $480 for the pottery course.", "paid"),
    ("Dentist appointment moved to Friday.", "dentist"),
    ("Scheduled the review for May 3.", "scheduled"),
    ("Lease on the Dunmore apartment runs 6 months.", "lease"),
])
def test_a_word_that_only_opens_its_note_is_no_subject(text, word):
    assert f"name:{word}" not in subject_keys(text)


def _pairs(db) -> set[frozenset[str]]:
    subject_index.refresh_keys(db, SCOPE, None, subject_keys)
    found = subject_index.pairs_by_subject(db, SCOPE, None, model=EMBEDDER.name, per_node=8, max_share=0.05)
    return {frozenset(row) for row in found.select("low_id", "high_id").rows()}


def test_two_values_of_one_named_subject_are_paired_however_far_apart_their_words(db):
    # Nothing but the opening name ties the two: the values are other names, the verbs differ.
    first, second = insert(db, node(text="Telegram was developed by Telegram FZ-LLC."),
                           node(text="Telegram is now maintained by a Dubai studio."))
    booked = insert(db, node(text="Booked a table at Nopa for Friday."),
                    node(text="Booked a flight to Oslo for June."))
    pairs = _pairs(db)
    assert frozenset((first, second)) in pairs
    # Counter-example: two notes that open on the same verb are about two things.
    assert frozenset(booked) not in pairs

"""Denials (core/denials.py): two denials, and a denial of the past against the event, are no
newer value of each other; each entry with counter-examples that stay updates."""

from __future__ import annotations

import pytest

from curation_pipeline.core.clauses import text_clauses
from curation_pipeline.core.denials import denies, denies_the_past
from curation_pipeline.core.judged_updates import judged_update
from curation_pipeline.core.supersession import UPDATE, compare_versions

# (entry, older, newer): the words alone must not supersede the older memory.
NO_NEWER_VALUE = [
    ("two denials, another name", "I have never used a GPU.", "I have never used Alpine Linux."),
    ("two denials, another code", "The Cascade API does not accept v1 tokens.",
     "The Cascade API does not accept v2 tokens."),
    ("two denials, the newer says no longer", "I no longer use Docker.", "I no longer use Podman."),
    ("two denials, the newer says now", "The gym does not open before 6:00.", "The gym now does not open before 7:00."),
    ("the event, then its denial", "Increased my savings contributions in April.",
     "I have never increased my savings contributions."),
    ("the event, then its denial", "I moved my standup to Tuesdays in June.", "I have never moved my standup."),
    ("a denial, then the event in a change verb", "I have never changed my router password.",
     "Changed my router password on May 2."),
    # A change denied: the value it names did not come (set S's look-alikes; S077 was taken by
    # an always-"update" judge before).
    ("a change denied", "Price of the Ardent Basic plan is $12 per month.",
     "Didn't raise the Ardent Basic plan price to $15 after all."),
    ("a change denied, not yet", "The Ravelston kiln runs at 1,200°C.", "Haven't lowered the Ravelston kiln to 1,100°C yet."),
    ("a change denied, passive", "Deadline for the Galloway grant application is March 1.",
     "The Galloway grant deadline was not extended to March 15, despite rumors."),
]

# (entry, older, newer): alike, and still an update.
STILL_UPDATES = [
    ("a state turned, no denial of the past", "The Lisbon office is open on Sundays.",
     "The Lisbon office is not open on Sundays."),
    ("a state turned the other way", "Kira Sorensen is not a member of the architecture board.",
     "Kira Sorensen is a member of the architecture board."),
    ("a denial of the past, the newer says it changed", "The Lisbon office has not opened on Sundays.",
     "The Lisbon office opens on Sundays now."),
    ("not yet, said", "The Tarn router firmware has not been updated yet.",
     "The Tarn router firmware was updated to 2.1 on May 3."),
    ("never, a habit", "The gym never opens on Sundays.", "The gym opens on Sundays from 9:00."),
    ("without: a thing denied, not the verb", "The report is due May 3 without the appendix.",
     "The report is due May 10 without the appendix."),
    ("no: a thing denied, not the verb", "Kai's flight lands at 18:40 with no checked bags.",
     "Kai's flight lands at 20:15 with no checked bags."),
    ("the old value denied, not the change", "Standup is at 9:30am.", "Standup was moved to 10am, not 9:30am."),
]


@pytest.mark.parametrize(("entry", "older", "newer"), NO_NEWER_VALUE, ids=[c[0] for c in NO_NEWER_VALUE])
def test_a_denial_is_no_newer_value_for_the_words_alone(entry, older, newer):
    check = compare_versions(older, newer)
    assert check.verdict != UPDATE and check.updates == ()  # not even part of an update


@pytest.mark.parametrize(("entry", "older", "newer"), STILL_UPDATES, ids=[c[0] for c in STILL_UPDATES])
def test_a_state_that_turned_or_a_change_said_is_still_an_update(entry, older, newer):
    assert compare_versions(older, newer).verdict == UPDATE


def test_a_marked_correction_of_the_event_is_not_refused_as_a_denial():
    # "Correction:" says the older memory was wrong; without it the pair is only linked.
    marked = compare_versions("Raised the team's on-call pay in March.", "Correction: we never raised the team's on-call pay.")
    plain = compare_versions("Raised the team's on-call pay in March.", "We never raised the team's on-call pay.")
    assert [u.changed for u in marked.updates] == [("polarity",)]
    assert plain.updates == ()


@pytest.mark.parametrize(("text", "over_the_past", "a_denial"), [
    ("I have never used a GPU.", True, True),
    ("Mira never attended the Kyoto workshop.", True, True),
    ("The gym never opens on Sundays.", False, True),  # a habit
    ("Noor has not visited Lyon.", False, True),  # not yet
    ("We didn't ship the beta to Helix Labs.", False, True),
    ("The Lisbon office is not open on Sundays.", False, True),  # a state
    ("The report is due May 3 without the appendix.", False, False),  # a thing denied
    ("Noor has visited Lyon twice.", False, False),
    ("The Never Land Pirates show was created in Canada.", False, False),  # a word of a name
])
def test_a_denial_of_the_past_is_never_with_a_verb_of_the_past(text, over_the_past, a_denial):
    [piece] = [p for s in text_clauses(text) for p in s.pieces()]
    assert denies_the_past(piece) is over_the_past
    assert denies(piece) is a_denial


@pytest.mark.parametrize(("entry", "older", "newer"), NO_NEWER_VALUE, ids=[c[0] for c in NO_NEWER_VALUE])
def test_a_judges_update_of_a_denial_is_refused_by_the_texts(entry, older, newer):
    # A judge (an LLM) may call such a pair an update; the texts give no reason for it.
    assert not judged_update(older, newer).taken


def test_a_judges_update_of_a_state_that_turned_is_taken():
    assert judged_update("The Lisbon office is open on Sundays.", "The Lisbon office is not open on Sundays.").taken


def test_not_yet_unsaid_is_no_denial_and_a_judges_update_is_taken():
    # "has not paid" is not so yet, no denial of the past: a judge's "update" is taken. Offline
    # the words leave the pair, as for any two past events; this case once passed offline only
    # because "May" was read as the modal, which made "paid the May invoice" a state.
    older, newer = "Omar has not paid the May invoice.", "Omar paid the May invoice on June 3."
    assert judged_update(older, newer).taken
    assert compare_versions("Omar has not paid the March invoice.", "Omar paid the March invoice on June 3.").verdict \
        == compare_versions(older, newer).verdict

"""Denials: clauses that say something is not so, and why they are no newer value. Pure.

A value replaces another when both cannot hold at once. Two shapes of denial break that, and
each is linked (step 6b), never superseded, offline or on a judge's "update" (judged_updates.py),
unless the newer clause says the change ("now", "no longer", "anymore", or a memory opened by
"Correction:"):

- **two denials**: "I have never used a GPU." / "I have never used Alpine Linux." deny two
  things, and both hold; "The API does not accept v1 tokens." / "... v2 tokens." the same. A
  denial with another value is no new value of the denial.
- **a denial of the past against the event**: "Attended the Kyoto design workshop in May." /
  "I have never attended a design workshop.", or the other way round. "Never", "didn't" and
  "haven't" speak of all past time, and the past does not change: the two contradict each other,
  and which one is true is for the user to say, not for the later date. (A state can change:
  "The Lisbon office is open on Sundays." / "The Lisbon office is not open on Sundays." is no
  denial of the past, and is still read as a change of polarity. Nor is "The firmware has not
  been updated yet.": "yet" waits for the event, and "... was updated to 2.1" is its news.)

Tests and counter-examples: curation_pipeline_tests/core/test_denials.py.
"""

from __future__ import annotations

from curation_pipeline.core.clauses import Piece
from curation_pipeline.core.meaning_markers import NEGATION

# Words that deny over all past time ("I have never ...", "We didn't ..."), and the auxiliaries
# that do so before "not" ("did not", "have not").
_PAST_DENIALS = frozenset({"never", "didn't", "didnt", "haven't", "havent", "hasn't", "hasnt", "hadn't", "hadnt"})
_PAST_AUXILIARIES = frozenset({"did", "have", "has", "had"})
# Words of a newer clause that say the change itself: then a denial is a new state ("I no longer
# use Docker", "I don't drink coffee anymore", "The gym now doesn't open before 7:00").
_CHANGE_SAID = frozenset({"now", "currently", "longer", "anymore", "nowadays"})


def _words(piece: Piece) -> list[str]:
    return [t.lower for t in piece.tokens if t.kind != "punct"]


def denies(piece: Piece) -> bool:
    return any(marker.category == NEGATION for marker in piece.markers)


def denies_the_past(piece: Piece) -> bool:
    """Whether the clause denies over all past time: "I have never used a GPU", "We didn't ship
    the beta", "has not visited Lyon". "is not open on Sundays" denies a state, not the past;
    "has not been updated yet" waits for the event."""
    words = _words(piece)
    if "yet" in words:
        return False
    return any(word in _PAST_DENIALS or (word in _PAST_AUXILIARIES and following == "not")
               for word, following in zip(words, [*words[1:], ""]))


def says_the_change(piece: Piece) -> bool:
    return bool(_CHANGE_SAID & set(_words(piece)))


def no_newer_value(old: Piece, new: Piece, *, corrected: bool = False) -> bool:
    """Whether `new` cannot be a newer value of `old` for the words alone: two denials, or a
    denial of the past against the event (module docstring), and `new` does not say that
    something changed (`corrected`: the newer memory opened with "Correction:" or the like)."""
    if corrected or says_the_change(new):
        return False
    if denies(old) and denies(new):
        return True
    return denies(old) != denies(new) and (denies_the_past(old) or denies_the_past(new))

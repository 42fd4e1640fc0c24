"""Denials: clauses that say something is not so, and why they are no newer value. Pure.

A value replaces another when both cannot hold at once. Three shapes of denial break that, and
each is linked (step 6b), never superseded, offline or on a judge's "update" (judged_updates.py):

- **two denials**: "I have never used a GPU." / "I have never used Alpine Linux." deny two
  things, and both hold; "The API does not accept v1 tokens." / "... v2 tokens." the same; and
  "I no longer use Docker." / "I no longer use Podman.": the newer denial says Podman changed,
  not Docker. A denial with another value is no new value of the denial. A denial is a verb's:
  "not", "n't", "never", "no longer". "due May 3 without the appendix" / "due May 10 without
  the appendix" is a new date, and "without" no denial of it.
- **a denial of the past against the event**: "Increased my savings contributions in April." /
  "I have never increased my savings contributions.", or the other way round. "Never" with a
  verb of the past ("have never attended", "never used") speaks of all past time, and the past
  does not change: the two contradict each other, and which one is true is for the user to say,
  not for the later date. Unless the newer clause says the change ("I have never used Docker."
  / "I now use Docker for every project."). What is not so *yet* is no such denial: "Omar has not
  paid the May invoice." / "Omar paid the May invoice on June 3." is its news, and "The gym never
  opens on Sundays." a habit, a state that may change ("The gym opens on Sundays from 9:00.").

- **a change denied**: "Price of the plan is $12 per month." / "Didn't raise the plan price to
  $15 after all." The value the newer clause names is the one that did not come, so the older
  value still holds; so with "Haven't lowered the kiln to 1,100°C yet" and "The deadline was not
  extended to March 15". The denial stands right before a verb of change: "Standup was moved to
  10am, not 9:30am" denies the old value, and is an update.

A newer memory that says it corrects the older (an opener of change_cues.CORRECTION_OPENERS:
"Correction:", "Update:", "Actually,", ...; or a value it names as the old one, "instead of X")
is read as a correction, and neither rule applies.

Tests and counter-examples: curation_pipeline_tests/core/test_denials.py.
"""

from __future__ import annotations

from curation_pipeline.core.change_cues import CHANGE_ROOTS
from curation_pipeline.core.clauses import Piece
from curation_pipeline.core.meaning_markers import NEGATION
from curation_pipeline.core.sentence_tokens import root
from curation_pipeline.core.subjects import past_form

# Negation words that deny the verb; "without", "no", "none" deny a thing ("with no checked
# bags", "without the appendix"), which a new value of the clause leaves as it was.
_VERB_DENIALS = frozenset({"not", "never", "no longer"})
_PERFECT = frozenset({"have", "has", "had", "'ve", "'d"})
# Words of a newer clause that say the change itself ("I now use Docker").
_CHANGE_SAID = frozenset({"now", "currently", "longer", "anymore", "nowadays"})


def _words(piece: Piece) -> list[str]:
    return [t.lower for t in piece.tokens if t.kind != "punct"]


def denies(piece: Piece) -> bool:
    """Whether the clause denies its verb: "does not accept", "hasn't paid", "never used", "no
    longer use"; not "without the appendix", "no checked bags", nor a word of a name ("Jake and
    the Never Land Pirates was created in ...": a capital inside the clause)."""
    named = {t.lower for n, t in enumerate(piece.tokens) if n > 0 and t.text[:1].isupper()}
    return any(marker.category == NEGATION and marker.word.lower() not in named
               and (marker.word.lower() in _VERB_DENIALS or marker.word.lower().endswith("n't"))
               for marker in piece.markers)


def denies_the_past(piece: Piece) -> bool:
    """Whether the clause denies over all past time: "never" after "have" or before a verb of the
    past ("I have never used a GPU", "Mira never attended the workshop"). "has not paid" is not
    yet; "never opens on Sundays" is a habit."""
    words = _words(piece)
    return any(word == "never" and (before in _PERFECT or past_form(after))
               for before, word, after in zip(["", *words], words, [*words[1:], ""]))


def denies_a_change(piece: Piece) -> bool:
    """Whether the clause denies a verb of change: "Didn't raise the plan price to $15 after
    all", "Haven't lowered the kiln to 1,100°C yet", "We did not move standup to 10am". The
    value it names is the one that did not come; the older value still holds. Not a denied state
    ("The gym no longer opens on Sundays"), which is news of its own."""
    words = _words(piece)
    # The denial stands right before the verb it denies: "Standup was moved to 10am, not 9:30"
    # denies the old value, not the change.
    return any((word in _VERB_DENIALS or word.endswith("n't")) and any(root(w) in CHANGE_ROOTS for w in words[n + 1:n + 3])
               for n, word in enumerate(words))


def says_the_change(piece: Piece) -> bool:
    return bool(_CHANGE_SAID & set(_words(piece)))


def no_newer_value(old: Piece, new: Piece, *, corrected: bool = False) -> bool:
    """Whether `new` cannot be a newer value of `old` for the words alone: two denials, or a
    denial of the past against the event that `new` does not say changed (module docstring).
    `corrected`: the newer memory says it corrects the older one."""
    if corrected:
        return False
    if denies(old) and denies(new):
        return True
    if denies(new) and not denies(old) and denies_a_change(new):
        return True
    return denies(old) != denies(new) and (denies_the_past(old) or denies_the_past(new)) and not says_the_change(new)

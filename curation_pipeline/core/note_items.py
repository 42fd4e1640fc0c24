"""An item of a note's list, read as a value of what the note is about. Pure.

Agents often write a note as its topic and a list: "Spotify family plan, $16.99 a month, billed
on the 5th, 4 members." The item "$16.99 a month" has no word of its own that says what it is
the value of: it is the plan's. A newer memory that gives the plan a new value of that kind
("Spotify family plan price is now $19.99 a month.") speaks of the same thing, though the item
and the newer clause share no word.

So an item without a word of a frame (only values, their units and small words) is read with
the frame and the subject of its sentence's first clause, the note's topic, when:

- the item follows a comma, a semicolon or a colon (not words in brackets), and the topic has
  words of a frame ("Spotify family plan"; not "Saturday, June 15");
- no other clause of the older memory has a value of any kind the item has (units aside):
  "Storage unit at SecureStore, 10x10 ft, $120 a month, $360 paid for the first quarter." has
  two amounts, and which one a newer amount replaces is not for the words to say;
- the newer clause says every word of the topic but its verbs ("Signed up for the spring 10K"
  / "The spring 10K was moved to ..."): "Netflix is now $6.99 a month for my parents' basic
  plan" names another plan than "Netflix standard plan, $15.49 a month";
- and the newer clause says that something changed ("is now", "was moved to": change_cues.py).
  "Also bought a stool from IKEA for $25." is one more purchase, not a new price.

Offline (supersession.py) and on a judge's "update" (judged_updates.py), the words must still
show a value of the item's kind replaced, by one value of the kind in the newer clause offline,
and the rest of the note carried as written (value_cut.without_item). Tests and
counter-examples: curation_pipeline_tests/core/test_judged_updates.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from curation_pipeline.core.clauses import Piece
from curation_pipeline.core.subjects import verb_like_opening

if TYPE_CHECKING:  # supersession.py reads items too; the shapes come from it
    from curation_pipeline.core.supersession import Shape

# Kinds of value that say what an amount is counted in, not a value of their own.
_UNIT_KINDS = frozenset({"time unit"})


@dataclass(frozen=True)
class NoteItem:
    """An item of a note read as a value of its topic."""

    shape: Shape  # the item's values with the topic's frame and subject
    topic: frozenset[str]  # the topic's frame words but its verbs

    def of_its_values(self, changed: Sequence[str]) -> bool:
        """Whether every change ("number:money '16.99' -> '19.99'") is of a kind of value the
        item states: not its polarity, nor what the newer clause says of something else."""
        return all(any(change.startswith(f"{kind} ") for kind in self.shape.values) for change in changed)

    def updated_by(self, piece: Piece, piece_shape: Shape) -> bool:
        """Whether a newer clause (and its shape) that gives the item a new value speaks of this
        topic and says that something changed."""
        return self.topic <= piece.keys and piece_shape.cued


# Particles that go with the verb before them ("signed up for", "checked out").
_PARTICLES = frozenset("up down out off in on back over".split())


def _verb_words(topic: Piece) -> set[str]:
    """The keys of the topic's verbs and of a particle right after one."""
    words, after_verb = set(), False
    for n, token in enumerate(topic.tokens):
        # The note's opening verb ("Signed", "Booked"), or a participle after ("... approved").
        verb = verb_like_opening(token) if n == 0 else len(token.lower) > 4 and token.lower.endswith("ed")
        if verb or after_verb and token.lower in _PARTICLES:
            words.update(token.keys)
        after_verb = verb
    return words


def _listed(claim: Piece) -> bool:
    """The claim stands in its sentence after a comma, a semicolon or a colon: an item of a
    list, not words in brackets ("Deployed final Docker image (130MB) to AWS ECR")."""
    sentence = claim.context or claim.text
    at = sentence.find(claim.text)
    return at > 0 and sentence[:at].rstrip()[-1:] in (",", ";", ":")


def note_item(claims: Sequence[Piece], shapes: Sequence[Shape], n: int) -> NoteItem | None:
    """Claim `n` of an older memory's claims (with their shapes) read as an item of its note
    (see the module), or None when it is no such item."""
    claim, own = claims[n], shapes[n]
    if own.frame or claim.first == 0 or not _listed(claim):
        return None
    topic = next((m for m, c in enumerate(claims) if c.sentence == claim.sentence and c.first == 0), None)
    if topic is None:
        return None
    about = shapes[topic]
    kinds = set(own.values) - _UNIT_KINDS
    if not about.frame or not kinds:
        return None
    if any(kinds & set(other.values) for m, other in enumerate(shapes) if m != n):
        return None
    words = about.frame - _verb_words(claims[topic])
    if not words:
        return None
    return NoteItem(replace(own, frame=about.frame, subject=about.subject, head=about.frame), words)

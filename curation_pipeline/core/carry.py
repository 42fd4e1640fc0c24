"""What a newer memory takes over from the one it supersedes: the older clauses it neither says
nor updates. Pure.

"The Zotero library now contains 45 sources, tagged by theme and date, improving retrieval speed
by 40%." and a later "The Zotero library now includes 52 sources." are an update of the count,
but superseding the older memory as it is would hide that the library is tagged by theme and
date. Leaving both current keeps the outdated 45 beside the 52. So the newer memory carries what
only the older one said, and the older one is superseded: current memory says the new count and
everything else, each once, and the older memory keeps its words, with the time it stopped being
current. Carried:

- **a statement of its own** (the first clause of its sentence, or one after a semicolon, with the
  clauses that continue it): appended as a sentence ("Estimated 3 sprints of 2 weeks each.");
- **a continuation** of a clause the newer memory updates or says ("and is deprecated", "by phone
  and email", "tagged by theme and date", "using Postgres 16", "per self-assessment"): added to
  the newer sentence that updates or says that clause, before its final stop, so it stays said of
  the same thing ("... now writes invoices ... at 03:00 UTC, and is deprecated.").

Never carried, so the update stays partial and both memories stay current: a clause that says
when, why or on what condition the older value held ("after the initial test run on March 27",
"because ...", "unless ...", "which ..."), which moved to another value could say something else;
a continuation after an updated clause that names a month or a year ("on March 3", "checked on
the bank's app, February", "March 12, 9:30am" after "rescheduled to March 19"), which dated the
older value and would misdate the new one, or say two dates (not a deadline ahead, "aiming for
50 by September"; supersession.items_carried may still carry the note without its replaced item);
a continuation after an updated clause with a number of the kind its replaced value was
("Completed 7 geometry proofs, scoring 6 correct", "3 hours studying piano scales, including 1
hour on arpeggios"), a part or a result of the old value that would be read against the new one
(not a value aimed at: "aiming to reach 8 hours by May");
a clause cut inside brackets ("Should I start with coin toss problems (P"), which is no
sentence; and a statement whose object goes on in the clause that changed ("Balanced work" of
"Balanced work and crypto by dedicating 45 minutes daily to market research"), which alone would
say less than the older memory did. When a judge said "update" and the newer memory says the
rest of the object ("Wrote load tests for checkout | and payment services, passing 90% ..." /
"The load tests for checkout and payment services now pass 96% ..."), the statement is carried
with it, whole; offline the words alone would let a quiz of another topic replace the older
memory's ("... recursive formula definitions | and induction, quiz score rose ..." / "my logic
induction quiz score increased to 98%"), as BEAM's development chats showed.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from curation_pipeline.core.clauses import Piece
from curation_pipeline.core.subjects import is_verb, verb_by_shape
from curation_pipeline.core.text import append_sentence
from curation_pipeline.core.value_words import value_class

# A clause opening with one of these says when, why, on what condition or of what the clause
# before it holds: never carried to another clause.
_SUBORDINATE = frozenset("""
after before until till since because when whenever while once if unless although though whereas
which who whom whose where that so whereby
""".split())
# A clause opening with one of these (or an -ing / -ed word) continues the one before it.
_CONTINUING = frozenset("with by via using including for through in on at as per across alongside".split())


@dataclass(frozen=True)
class Carried:
    """Older words the newer memory takes over: a sentence of their own (`host` None), or words
    added to the newer sentence `host`."""

    text: str
    host: str | None = None

    def record(self) -> dict:
        return {"clause": self.text, **({"added_to": self.host} if self.host else {})}


def _opening(piece: Piece) -> str:
    return next((t.lower for t in piece.tokens if t.kind != "punct"), "")


def _after_semicolon(piece: Piece) -> bool:
    context = piece.context or piece.text
    at = context.find(piece.text)
    before = context[:at].rstrip() if at > 0 else ""
    return before.endswith((";", "；", ":"))


def _starts_statement(piece: Piece) -> bool:
    return piece.first == 0 or _after_semicolon(piece)


def _continues(piece: Piece) -> bool:
    """A continuation that says something of its own: a phrase opened by a preposition ("by
    phone and email", "using Postgres 16") or a participle ("tagged by theme"), or a coordinated
    clause with a verb ("and is deprecated"). A bare list item ("and navigation") only completes
    the words before it, which the update replaced: it is not carried."""
    word = _opening(piece)
    if word in ("and", "or", "plus"):
        return any(is_verb(t) or (t.kind == "word" and t.lower.endswith(("ed", "ing")))
                   for t in piece.tokens[1:])
    return word in _CONTINUING or word.endswith(("ing", "ed"))


def _dated(piece: Piece) -> bool:
    """Whether a clause names a month or a year ("on March 3", "February", "in 2023"): a date.
    A weekday or a time of day may say when something recurs ("delivered Saturdays"), and a date
    after "by", "until" or "before" is a deadline ahead ("aiming for 50 by September")."""
    tokens = [t for t in piece.tokens if t.kind != "punct" or t.text in ",;"]
    return any((value_class(t.lower, t.keys[0]) == "month" or re.fullmatch(r"(19|20)\d\d", t.text))
               and not (n and tokens[n - 1].lower in _DEADLINES) for n, t in enumerate(tokens) if t.keys)


_DEADLINES = frozenset("by until till before due".split())


def _part_of_the_changed(piece: Piece, updated: Piece) -> bool:
    """Whether a clause after an updated one states a number of a kind the updated clause states
    too ("scoring 6 correct" after "Completed 7 geometry proofs", "including 1 hour on
    arpeggios" after "3 hours studying piano scales"): a part or a result of the replaced value,
    which carried onto the new one would be read against it ("completed 9 proofs, scoring 6
    correct"). A number of another kind is another attribute ("2 screens" after "$15.49 a
    month") and is carried, as is a value aimed at ("aiming for 50 by September"); a date is
    _dated's."""
    if _opening(piece) in _AIMS:
        return False  # a value aimed at, still ahead: "aiming for 50 by September" of 25 and of 30
    # supersession imports this module: its reading of value kinds is imported when first asked.
    from curation_pipeline.core.supersession import shape
    kinds = {kind for kind in shape(updated).values if kind.startswith("number")} - _MOMENT_KINDS
    return bool(kinds & set(shape(piece).values))


_MOMENT_KINDS = frozenset({"number:date", "number:time", "number:year"})
# Words that open a clause of a value aimed at, not reached: "aiming to increase to 7 hours".
_AIMS = frozenset("aiming aim aims targeting hoping planning".split())


def _span(first: Piece, last: Piece) -> str:
    """The words of an older sentence from `first` to `last` (two claims of it), as written."""
    context = first.context or first.text
    start = context.find(first.text)
    end = context.find(last.text, max(start, 0)) + len(last.text)
    if start < 0 or end < start:
        return first.text
    # The brackets the span opens close with it: "... during the audit (see the runbook)".
    while end < len(context) and context[end] in ")]}" and _opened(context[start:end]) > 0:
        end += 1
    return context[start:end]


def _opened(text: str) -> int:
    """How many brackets `text` leaves open (negative: it closes one it never opened)."""
    depth = 0
    for ch in text:
        depth += (ch in "([{") - (ch in ")]}")
        if depth < 0:
            return depth
    return depth


def carried_clauses(claims: Sequence[Piece], left: Sequence[int], hosts: Mapping[int, Piece | None],
                    said: Collection[int] = (), updated: Collection[int] = ()) -> tuple[Carried, ...] | None:
    """What the newer memory must take over for the older `claims` numbered in `left` (neither
    said nor updated) to stay current, or None when one of them cannot be carried (see the module
    docstring). `hosts`: for each other claim, the newer piece that updates or says it; `said`:
    those the newer memory says (not updates), for a judge's "update" only (see above);
    `updated`: those the newer memory gives a new value, after which a clause that names a month
    or a year ("on March 3") is never carried: it dated the older value, and would misdate the
    new one."""
    carried: list[Carried] = []
    left_set = set(left)
    n = 0
    while n < len(claims):
        if n not in left_set:
            n += 1
            continue
        end = n
        while end + 1 in left_set and claims[end + 1].sentence == claims[n].sentence \
                and not _starts_statement(claims[end + 1]):
            end += 1  # a statement and the clauses that continue it go together
        first = claims[n]
        if any(_opening(claims[m]) in _SUBORDINATE for m in range(n, end + 1)):
            return None
        if _starts_statement(first) and _object_goes_on(claims, end, left_set):
            if end + 1 not in said:
                return None  # "Balanced work" of "Balanced work and crypto by ...": half an object
            # "Wrote integration tests for fetcher" of "... for fetcher and database interaction,
            # passing 95% ...": the rest of the object is said by the newer memory too, and goes
            # with the statement, whole.
            end += 1
        text = _span(first, claims[end])
        if _opened(text) != 0:
            return None  # "Should I start with coin toss problems (P": a clause cut inside a formula
        if _starts_statement(first):
            carried.append(Carried(as_sentence(text)))
        elif _continues(first) and n > 0 and claims[n - 1].sentence == first.sentence \
                and hosts.get(n - 1) is not None:
            if n - 1 in updated and any(_dated(claims[m]) or _part_of_the_changed(claims[m], claims[n - 1])
                                        for m in range(n, end + 1)):
                # "on March 3", "checked on Credit Karma, February": when the older value held
                # or was taken; after the new value it would misdate it, or say two dates. And
                # "scoring 6 correct" of 7 problems: after 9 it would misstate the score.
                return None
            carried.append(Carried(text.strip(), hosts[n - 1].context or hosts[n - 1].text))
        else:
            return None
        n = end + 1
    return tuple(carried)


def _object_goes_on(claims: Sequence[Piece], end: int, left: set[int]) -> bool:
    """Whether the claim after claims[end], in its sentence and not carried with it, goes on
    with its object: "and" or "or" and a plain word, no verb ("Balanced work | and crypto by
    dedicating 45 minutes daily ..."). Carried alone, "Balanced work." would say less than the
    older memory did, and nothing would say the rest."""
    following = end + 1
    if following >= len(claims) or following in left or claims[following].sentence != claims[end].sentence:
        return False
    words = [t for t in claims[following].tokens if t.kind != "punct"]
    if len(words) < 2 or words[0].lower not in ("and", "or") or words[1].kind != "word" or not words[1].keys:
        return False
    # "and works from Lisbon" opens a clause of its own: its verb, by the words' list or its shape.
    verb = is_verb(words[1]) or words[1].lower.endswith(("ed", "ing")) or verb_by_shape(words, 1, after_a_link=True)
    return not verb


def as_sentence(text: str) -> str:
    """`text` as a sentence of its own: capitalised, with a final stop."""
    text = text.strip().rstrip(",;:")
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?", "。")) else text + "."


def _extended(sentence: str, words: Sequence[str]) -> str:
    body = sentence.rstrip()
    end = body[-1] if body and body[-1] in ".!?…" else ""
    body = body[:-1].rstrip() if end else body
    return f"{body}, {', '.join(w.strip().lstrip(',').strip() for w in words)}{end}"


def carry_into(newer: str, carried: Sequence[Carried]) -> str:
    """The newer memory's text with the carried words: each continuation added to its host
    sentence, each statement appended."""
    text = newer
    by_host: dict[str, list[str]] = {}
    for item in carried:
        if item.host is not None:
            by_host.setdefault(item.host, []).append(item.text)
    for host, words in by_host.items():
        at = text.find(host)
        if at < 0:
            text = append_sentence(text, as_sentence(", ".join(words)))
        else:
            text = text[:at] + _extended(host, words) + text[at + len(host):]
    for item in carried:
        if item.host is None:
            text = append_sentence(text, item.text)
    return text

"""The words that say a value changed: a closed vocabulary, each entry with a test and a
counter-example (curation_pipeline_tests/core/test_change_cues.py). Pure.

Real updates are rarely the old sentence with one value swapped. They are events ("The Zoom call
was moved to April 22 at 11 AM", "The gallery now includes 10 cards", "The number of commits has
grown to 165") or marked corrections ("Update: ...", "Correction: ...", "Actually, ..."). This
module finds such a *change statement* in a clause: where its cue is, what comes before it (the
attribute that changed) and where its new value starts. It says nothing about which older memory
it updates: supersession.py still needs the shared attribute and an older value of the same kind
that the new one replaces. When unsure, nothing is superseded.

The entries:

- **change verbs** followed, within a few words, by "to", "for", "at" or "until" and a value
  ("moved to", "was extended to", "increased from 5 to 7", "has grown to", "was cut to", "was
  renamed to", "was promoted to", "postponed ... until May 20"), or by an owner's plain noun
  phrase and "to" ("increased my daily water intake goal to 3 liters"; a comma, a value, a
  preposition or another owner in the phrase ends the search: "reduced my time on social media
  to ..." and "raised my son's allowance to ..." may name another thing): the value after "to"
  is the new one, a value after "from" the old one, which must be the older memory's ("query
  time reduced from 700ms to 200ms" updates no "reduced from 500ms to 150ms" of another table);
  "to over 200 members" sets 200. The noun phrase may also open with a name or hold names and
  codes ("Improved Falcon's API p95 latency to 180ms", "Upgraded the Nimbus staging cluster to
  Kubernetes 1.29"): supersession.py finds each of them in the older sentence. After "a" or
  "an" a change word is an adjective ("a delayed reply") and says nothing changed; after "to" or
  a modal it is asked for or planned ("asked me to cut my talk to 20 minutes", "will raise the
  rent to ...", "may be pushed back to ..."), not done. A particle may follow the verb ("moved
  up to", "pushed back to"); a phrase "for ..." or "of ..." after the owner's noun says which
  one ("my savings goal for the house"), every word of which supersession.py finds in the older
  sentence; and the verb may be in -ing, opening a clause after an event's comma ("received a
  raise, increasing my annual salary to $80,000", "..., further boosting my accuracy to 95%"):
  supersession.py then asks that the event be of the older sentence's thing;
- **hedges**: "might", "could", "maybe", "perhaps", "possibly", "may" before a verb, and a change
  verb not done: the clause says a value that may hold, or will once the change is made, and
  replaces nothing (`hedged`);
- **"down to", "up to"** and a number, after a form of "be" or "now", opening the note, or
  after "got" or "brought" ("is down to 41 open issues", "Got the bundle down to 310KB"): not
  "supports up to 50 users" (a ceiling), nor "was down to 20 last December" (a past value);
- **"now"** before a value ("now includes 10 cards", "now averaging around 250ms", "aiming now for
  April 5", "now reaching 95%"); and "reached" / "reaching" a value;
- **"no longer"**, "not ... anymore": the statement is no longer true (its polarity changed:
  supersession.py compares polarity already);
- **stops**: "quit coffee", "stopped the newsletter", "gave up sugar", "dropped out of the
  marathon" end what the older clause says its subject does with that object; "left Acme" and
  "resigned from Acme" end only employment ("works at Acme"), "sold the Corolla" and "gave away
  the Corolla" only possession ("drives a Corolla"). A stop followed by a preposition is no stop
  ("stopped by the office", "quit on Friday");
- **moves**: "moved to Berlin", "relocated to Berlin" give a new place to where the subject lives
  ("lives in Lisbon", "is based in Lisbon"), and to nothing else ("moved the meeting to Berlin"
  is a change verb with an object, see above);
- **correction markers** that open a memory: "Update:", "Correction:", "Actually,", "Make that",
  "Scratch that", "I meant";
- **by how much**: a number after "by" that follows a change word ("reduced my bench press
  weight by 5 kg", "improving my confidence by 30%") is the amount of the change, not a value
  of the attribute a newer value could replace (`change_amounts`);
- **a named old value**: "(the old value was X)", "(previously X)", "(was X)", "instead of X",
  "(the $100 was last year's price)": X is old, whatever else the memory says.
- **a plan carried out**: a note that opens on a plan ("Scheduled the boiler service for October
  12", "Booked the MOT test for March 4"; not one that recurs: "every Saturday") is replaced by
  its outcome ("The scheduled boiler service was completed on October 10", "The firmware update
  scheduled for July 18 was installed on July 17"): "was" or "were" and a verb of doing it
  ("completed", "held", "done", "installed", "finished", "performed", "conducted", "delivered"),
  not of something done to the plan ("was confirmed on May 2", "was paid"), and not hedged.
  The planned value named in the outcome ("scheduled for July 18") is its old one
  (`plan_carried_out`, `names_the_plan`);
- **a value told as past**: "a year ago", "last year", "used to", "back in 2021", "at the time",
  and a thing's first value ("originally", "initially", "at first", "at launch", "at the start")
  in a clause that tells no change: the value held then ("A year ago the nightly build took 25
  minutes", "My rent used to be $1,200"), and replaces no current one (`told_as_past`). A change
  told with when it was made is current from then on ("Two weeks ago we moved standup to 9:30",
  "Last month the gym raised its fee to $49");
- **once-only events** of a named subject: "was born", "died", and what was made: "was
  founded", "was established", "was incorporated" (not "founded a startup": who founds may found
  again). Two past events of one kind are two events ("Completed 5 problems" / "Completed 8
  problems"), but a person is born and dies
  once: "Eddie Durham died in New York City." / "Eddie Durham died in Gatchina." is a corrected
  place. Only of a subject that is a name: "The nightly build died at 3 AM." may happen again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from curation_pipeline.core.sentence_tokens import Token, root, tokenize
from curation_pipeline.core.subjects import WEEKDAYS
from curation_pipeline.core.text import split_sentences

CHANGE_VERBS = frozenset("""
moved move changed change switched switch shifted shift pushed rescheduled postponed delayed
extended increased increase decreased decrease raised lowered reduced cut adjusted updated
bumped grown grew grow rose risen dropped fell fallen renamed promoted upgraded downgraded
relocated migrated transferred expanded improved climbed revised amended
upped trimmed slashed boosted capped hiked rebooked resized shortened lengthened doubled halved
tripled moves optimized tuned
""".split())
# The verbs' roots: a plain form ("raise", "lower") is the same verb as its past form.
CHANGE_ROOTS = frozenset(root(word) for word in CHANGE_VERBS)
# "is down to 41 open issues", "is up to 8 paying customers", "Got the bundle down to 310KB":
# a count or measure that fell or rose to a number. Only after a form of "be", "now" or a verb
# that brought it there, or opening the clause: "supports up to 50 users" is a ceiling, no change.
_DIRECTIONS = frozenset({"down", "up"})
_BROUGHT = frozenset("is are 's been now got get gets brought".split())  # not "was down to 20 last December"
# After a change verb, within this many words: the word that introduces the new value.
_TO_WORDS = frozenset({"to", "for", "at", "into", "until"})
_TO_REACH = 4
# "now", "reached": the value that follows is the current one.
NOW_WORDS = frozenset({"now", "currently", "reached", "reaching", "reaches"})
# Stops, each with the verbs an older clause must have for the stop to end it (None: any verb).
EMPLOYMENT_VERBS = frozenset("work works working employed".split())
POSSESSION_VERBS = frozenset("own owns has have drive drives ride rides".split())
STOP_PHRASES: dict[tuple[str, ...], frozenset[str] | None] = {
    ("quit",): None, ("quitted",): None, ("stopped",): None, ("gave", "up"): None, ("given", "up"): None,
    ("dropped", "out", "of"): None, ("ceased",): None, ("discontinued",): None,
    ("left",): EMPLOYMENT_VERBS, ("resigned", "from"): EMPLOYMENT_VERBS,
    ("sold",): POSSESSION_VERBS, ("gave", "away"): POSSESSION_VERBS,
}
# Moves, and the verbs (with "in" or "at" after them) of the place they change.
RESIDENCE_VERBS = frozenset("live lives living based resides reside located".split())
MOVE_PHRASES = (("moved", "to"), ("moved", "back", "to"), ("relocated", "to"), ("moving", "to"))
# After a stop these words open an adverbial, not the object it ends.
_NOT_AN_OBJECT = frozenset("by at in on for from after before to with during".split())
# Events that happen once to whom they happen: where and when each has one value.
ONCE_ONLY_VERBS = frozenset({"born", "died"})
# Said of what was made: it was founded once ("Netflix was founded in 1997"); not of who made it
# ("Ana founded a startup in 2015" and "... a charity in 2019" are two foundings).
_ONCE_ONLY_PASSIVES = frozenset({"born", "founded", "established", "incorporated"})
# Openers of a memory that corrects what was said before it.
CORRECTION_OPENERS = (("update",), ("updated",), ("correction",), ("actually",), ("make", "that"),
                      ("scratch", "that"), ("i", "meant"), ("sorry",), ("edit",), ("change", "of", "plans"))
# Words that name the value after them as the old one.
_OLD_VALUE_WORDS = (("instead", "of"), ("previously",), ("formerly",), ("was",), ("old", "value", "was"),
                    ("used", "to", "be"))


@dataclass(frozen=True)
class Stop:
    """A clause that ends something: its subject is said before `cue_at`, what it ends from
    `object_from` to the end of the clause, and `verbs` are the older verbs it can end."""

    cue: str
    cue_at: int
    object_from: int
    verbs: frozenset[str] | None


def stop_statement(tokens: Sequence[Token]) -> Stop | None:
    """The stop a clause says ("Ana quit coffee"), or None."""
    words = _words(tokens)
    for n in range(len(words)):
        for phrase, verbs in STOP_PHRASES.items():
            if tuple(words[n:n + len(phrase)]) != phrase:
                continue
            start = n + len(phrase)
            if start < len(words) and words[start] not in _NOT_AN_OBJECT and tokens[start].kind != "punct":
                return Stop(" ".join(phrase), n, start, verbs)
    return None


def once_only_event(tokens: Sequence[Token], subject_end: int) -> bool:
    """Whether a clause tells a once-only event of a named subject: "Eddie Durham died in ...",
    "Ada Lovelace was born in London" (the subject is tokens[:subject_end])."""
    subject = [t for t in tokens[:subject_end] if t.kind != "punct"]
    if not subject or not all(t.is_name for t in subject):
        return False
    verb = [t.lower for t in tokens[subject_end:subject_end + 2]]
    return bool(verb) and (verb[0] in ONCE_ONLY_VERBS or verb[0] in ("was", "were") and verb[1:2] and verb[1] in _ONCE_ONLY_PASSIVES)


def move_statement(tokens: Sequence[Token]) -> tuple[int, int] | None:
    """Where a clause says its subject moved ("Maya moved to Berlin"): the position of the cue
    and of the place after it; None for anything else."""
    words = _words(tokens)
    for n in range(len(words)):
        for phrase in MOVE_PHRASES:
            if tuple(words[n:n + len(phrase)]) == phrase and n + len(phrase) < len(tokens) \
                    and tokens[n + len(phrase)].is_name:
                return n, n + len(phrase)
    return None


@dataclass(frozen=True)
class ChangeStatement:
    """Where a clause says that something changed (token positions in the clause)."""

    cue: str  # the cue as written
    cue_at: int  # the attribute that changed is said before this
    values_from: int  # the new values are said from here ...
    values_to: int  # ... to here: "moved to April 22 at 11 AM" (not "to accommodate ...", "by May 13")
    old_values: tuple[int, int] | None = None  # a range the clause names as the old value ("from 5")


# What a newer memory says besides its values, left out when it is compared with an older one:
# a correction marker that opens it, and a value it names as the old one, which must neither
# restate the older memory ("9:30 (previously 9:00)" does not say "9:00") nor count as new.
_OPENER = re.compile(r"^\s*(?:(?:update|updated|correction|actually|sorry|edit|change of plans?)\s*[:,\-–—]"
                     r"|scratch that\s*[:,\-–—]?|i meant\b)\s*", re.IGNORECASE)
_NAMED_OLD = (
    re.compile(r"\s*\((?:the\s+)?(?:old\s+value\s+was|previously|formerly|was|used\s+to\s+be)\b[^()]*\)", re.IGNORECASE),
    re.compile(r"\s*\([^()]*\b(?:was|were)\s+(?:last\s+(?:year|month|week)'s|the\s+old|the\s+previous)\b[^()]*\)",
               re.IGNORECASE),
    re.compile(r"\s+instead\s+of\s+(?:[^,.;:()]|[.,:](?=\d))+", re.IGNORECASE),
)


def as_compared(text: str) -> str:
    """`text` without an opening correction marker and the values it names as old ones."""
    text = _OPENER.sub("", text, count=1)
    for pattern in _NAMED_OLD:
        text = pattern.sub("", text)
    return text


def _words(tokens: Sequence[Token]) -> list[str]:
    return [t.lower for t in tokens]


def change_amounts(tokens: Sequence[Token]) -> set[int]:
    """The positions of values that say by how much something changed: the numbers right after
    "by" that follows a change word within a few words ("reduced my bench press weight by 5 kg",
    "improving my confidence by 30%"). Such a value is no value of the attribute: the older
    memory does not say what the weight or the confidence was."""
    words = _words(tokens)
    amounts: set[int] = set()
    for n, word in enumerate(words):
        if word != "by" or not any(_changes(w) for w in words[max(0, n - _TO_REACH - 1):n]):
            continue
        m = n + 1
        while m < len(tokens) and tokens[m].kind == "number":
            amounts.add(m)
            m += 1
    return amounts


def _changes(word: str) -> bool:
    """Whether a word says something changed: a change verb, or its form in -ing ("improving")."""
    return word in CHANGE_VERBS or word.endswith("ing") and f"{word[:-3]}ed" in CHANGE_VERBS


def opens_with_correction(tokens: Sequence[Token]) -> bool:
    """Whether a memory opens with a correction marker ("Update: ...", "Actually, ...")."""
    words = [t.lower for t in tokens if t.kind != "punct"]
    return any(tuple(words[:len(opener)]) == opener for opener in CORRECTION_OPENERS)


def old_value_range(tokens: Sequence[Token]) -> tuple[int, int] | None:
    """The positions of a value the clause names as the old one: "(the old value was X)",
    "(previously X)", "instead of X", "from X to Y" (X)."""
    words = _words(tokens)
    for n, word in enumerate(words):
        if word == "from":
            to = next((m for m in range(n + 1, min(len(words), n + 6)) if words[m] == "to"), None)
            if to is not None and any(t.kind == "number" for t in tokens[n + 1:to]):
                return n + 1, to
        for phrase in _OLD_VALUE_WORDS:
            if tuple(words[n:n + len(phrase)]) == phrase and _inside_brackets(tokens, n) or (
                    phrase == ("instead", "of") and tuple(words[n:n + 2]) == phrase):
                start = n + len(phrase)
                end = next((m for m in range(start, len(tokens)) if tokens[m].text in ")," or tokens[m].ends_clause
                            and tokens[m].kind == "punct"), len(tokens))
                if end > start:
                    return start, end
    return None


def _inside_brackets(tokens: Sequence[Token], n: int) -> bool:
    opened = max((m for m in range(n) if tokens[m].text == "("), default=-1)
    closed = max((m for m in range(n) if tokens[m].text == ")"), default=-1)
    return opened > closed


def says_it_changed(text: str) -> bool:
    """Whether a memory says that something changed, in any of its sentences: a change
    statement, a stop, a move, or a correction opener ("The scheduled Zoom call ... was moved to
    April 22", "Actually, ..."). Which older memory it changes the words may not see: step 2
    asks the judge about its pairs whatever their cosine."""
    for n, sentence in enumerate(split_sentences(text)):
        tokens = tokenize(sentence)
        if (n == 0 and opens_with_correction(tokens)) or change_statement(tokens) is not None \
                or _changed_to(tokens) or stop_statement(tokens) is not None or move_statement(tokens) is not None:
            return True
    return False


def _changed_to(tokens: Sequence[Token]) -> bool:
    """A change verb with "to" or "from" after it, whatever follows ("was renamed to main")."""
    words = _words(tokens)
    return any(word in CHANGE_VERBS and set(words[n + 1:n + 1 + _TO_REACH]) & (_TO_WORDS | {"from"})
               for n, word in enumerate(words))


def adjective_use(tokens: Sequence[Token], n: int) -> bool:
    """Whether the change word at `n` describes a new thing rather than says one changed: right
    after "a" or "an" ("Apologized for a delayed response to Rachael's text": no response was
    delayed to a new value; "the updated budget" does speak of the one that changed)."""
    if n == 0 or tokens[n - 1].lower not in ("a", "an"):
        return False
    return tokens[n - 1].text != "A" or n == 1  # "Plan A moved to June 3": a name's letter


def change_statement(tokens: Sequence[Token]) -> ChangeStatement | None:
    """The change statement of a clause, or None (see the module docstring): a change verb with
    "to" and a value after it, or "now" / "reached" before a value. A change word after "a" or
    "an" is an adjective (`adjective_use`), no change verb."""
    words = _words(tokens)
    for n, word in enumerate(words):
        if (word in CHANGE_VERBS or _a_participle(words, n)) and not adjective_use(tokens, n) \
                and not _not_done(words, n):
            to = next((m for m in range(n + 1, min(len(words), n + 1 + _TO_REACH)) if words[m] in _TO_WORDS), None)
            if to is None and n + 1 < len(words) and (words[n + 1] in _OWNED or _a_name(tokens[n + 1])):
                to = _to_after_owned_phrase(tokens, n + 1)
            if to is not None:
                start, end = _target(tokens, to + 1)
                if end > start:
                    old = old_value_range(tokens[n:to + 1])
                    return ChangeStatement(tokens[n].text, n, start, end,
                                           (old[0] + n, old[1] + n) if old is not None else None)
        if word in NOW_WORDS:
            start, end = _target(tokens, n + 1)
            if end > start:
                return ChangeStatement(tokens[n].text, n, start, end)
        if word in _DIRECTIONS and words[n + 1:n + 2] == ["to"] and _brought_there(words, n):
            start, end = _target(tokens, n + 2)
            if end > start and tokens[start].kind == "number":
                return ChangeStatement(tokens[n].text, n, start, end)
    return None


# Before a change verb: it is asked for, planned or possible, not done ("asked me to cut my talk
# to 20 minutes", "will raise the rent to ...", "might move the retro to 3pm").
_NOT_DONE = frozenset("to will would should could might may must can shall".split())


def _not_done(words: Sequence[str], n: int) -> bool:
    """Whether the change verb at `n` is asked for, planned, possible or denied: after "to", a
    modal ("will", "we'll", "they'd"), or a negation ("was not extended", "Haven't lowered")."""
    return _planned(words, n) or any(word in ("not", "never") or word.endswith("n't") for word in words[max(0, n - 2):n])


def _planned(words: Sequence[str], n: int) -> bool:
    """Whether the change verb at `n` follows "to" or a modal, over auxiliaries ("may be pushed
    back to", "will likely be moved to", "to be raised to")."""
    m = n - 1
    while m > 0 and words[m] in _AUXILIARIES:
        m -= 1
    return n > 0 and (words[m] in _NOT_DONE or words[m].endswith(("'ll", "'d")))


# Between a modal and its change verb: "may be pushed back", "will have been moved", "could
# also get cut". ("has been moved" is done: "has" is no modal.)
_AUXILIARIES = frozenset("be been get have also likely probably possibly soon then further".split())


# Words that say a value may hold, not that it does: "The appointment might be on March 27".
# ("may" only before a verb: "in May" is a month.)
_MAYBE = frozenset("might could maybe perhaps possibly".split())
_AFTER_MAY = frozenset("be have not also get need want change move".split())


def hedged(tokens: Sequence[Token]) -> bool:
    """Whether a clause says its value may hold, or will hold once a change not yet made is
    made: "The appointment might be moved to March 27", "may be pushed back to", "will be moved
    to", "could be on Friday". Such a value replaces nothing yet."""
    words = _words(tokens)
    if any(word in _MAYBE or word == "may" and words[n + 1:n + 2] and words[n + 1] in _AFTER_MAY
           for n, word in enumerate(words)):
        return True
    # A verb after a modal is in its plain form, which the list (of past forms mostly) may not
    # hold: "will raise the rent to", "must lower the pH target to 6.8". Not after "to": "was
    # extended to 20 minutes to further reduce API calls" says what the done change is for.
    return any((word in CHANGE_VERBS or root(word) in CHANGE_ROOTS and _after_a_modal(words, n))
               and not adjective_use(tokens, n) and _planned(words, n) for n, word in enumerate(words))


def _after_a_modal(words: Sequence[str], n: int) -> bool:
    m = n - 1
    while m > 0 and words[m] in _AUXILIARIES:
        m -= 1
    return n > 0 and (words[m] in _NOT_DONE - {"to"} or words[m].endswith(("'ll", "'d")))


def _a_participle(words: Sequence[str], n: int) -> bool:
    """A change verb in -ing opening a clause that tells what an event did, after a comma
    ("received a raise, increasing my annual salary to $80,000"; "Added Redis caching, reducing
    p95 latency to 120ms"), or opening a clause cut there (clauses.py cuts at that comma). Not
    after a verb ("considering increasing my budget to $800": a plan), nor a gerund that is the
    subject of its sentence: supersession.py reads it only in a clause that does not open one."""
    return words[n].endswith("ing") and _changes(words[n]) and after_a_clause(words, n)


# Between a clause's comma and its -ing verb: "..., further boosting my accuracy to 95%".
_PARTICIPLE_ADVERBS = frozenset("further also thereby greatly significantly slightly steadily".split())


def after_a_clause(words: Sequence[str], n: int) -> bool:
    """Whether the word at `n` opens a clause that follows another: it opens the clause (cut at
    the comma, clauses.py) or comes right after a comma, or after one adverb that does
    ("further boosting")."""
    if n > 0 and words[n - 1] in _PARTICIPLE_ADVERBS:
        n -= 1
    return n == 0 or words[n - 1] == ","


def _brought_there(words: Sequence[str], n: int) -> bool:
    """Whether "down" or "up" at `n` says where a value went: it opens the clause ("Down to
    79.5 kg"), follows a form of "be" or "now" ("is down to 41"), or a verb that brought it
    there comes before it ("Got Glimmer's bundle down to 310KB"). "supports up to 50 users"
    and "costs up to $40" set a ceiling."""
    return n == 0 or words[n - 1] in _BROUGHT or any(word in ("got", "get", "gets", "brought") for word in words[:n])


# "increased my daily water intake goal to 3 liters": the words between the verb and "to" are
# the attribute, read up to this many words after an owner.
_OWNED = frozenset("my our your his her their its the".split())
_OWNED_REACH = 7


def _to_after_owned_phrase(tokens: Sequence[Token], start: int) -> int | None:
    """The "to" that ends a plain noun phrase opened by an owner or a name at `start` ("my daily
    water intake goal to", "Falcon's API p95 latency to", "the Nimbus staging cluster to"), or
    None: a comma, a number, a date or another preposition first ends the search ("increased my
    hours at the clinic to ..." names another thing than the hours). A name inside the phrase
    says whose attribute it is, and supersession.py finds that name in the older sentence or
    reads the clause as of another thing; an owner that is no name ("my son's") it cannot
    check, so the search ends there."""
    for m in range(start + 1 - _a_name(tokens[start]), min(len(tokens), start + 1 + _OWNED_REACH)):
        token = tokens[m]
        if token.lower in _TO_WORDS:
            return m
        if _a_name(token):
            continue
        if token.lower in _OF_WHICH and m > start + 1:
            continue  # "my capital allocation for real estate investing": supersession.py finds each word said
        if token.kind != "word" or _is_value(token) or token.lower in _PHRASE_BREAKS \
                or token.text.endswith(("'s", "’s")):
            return None  # "raised my son's weekly allowance to ...": whose allowance is the question
    return None


def _a_name(token: Token) -> bool:
    """A name or a code inside an attribute's phrase ("Falcon's", "API", "p95"), not a date."""
    return token.kind == "word" and token.lower not in _MONTHS and (
        token.is_name or any(c.isdigit() for c in token.text)) and token.lower not in _TO_WORDS


_PHRASE_BREAKS = frozenset("with for of from into onto about at in on by and or but".split())
# Inside an owner's phrase, after its noun: which of them ("my savings goal for the car"). Every
# word after it must be in the older sentence (supersession.py), or it is another thing.
_OF_WHICH = frozenset({"for", "of"})


# Words that end what a cue sets: an adverbial after the new value ("by May 13", "after review"),
# a reason ("reflecting ...", "due to ..."), or a purpose ("to accommodate ...").
_TARGET_ENDS = frozenset("""by after before since because due reflecting following given thanks so while
when which who as over within during""".split())


_LINKS = frozenset("to with for of from into onto about".split())
# Before a value: how near it is ("over 200 members").
_ABOUT = frozenset("over about around approximately roughly nearly almost".split())


def _is_value(token: Token) -> bool:
    """A number, a name, a month, or a code ("v3", "db.r6g.large": a word with a digit)."""
    return token.kind == "number" or (token.is_name and bool(token.keys)) or token.lower in _MONTHS \
        or (token.kind == "word" and any(c.isdigit() for c in token.text))


def _target(tokens: Sequence[Token], start: int) -> tuple[int, int]:
    """Where the value a cue sets is said: from `start` (over a verb that only introduces it:
    "adjusted to accommodate 1,200 calls", "now includes 10 cards", "now averaging around 250ms")
    to the first word that ends it. Empty when no value is said there ("to comply with ...")."""
    n = start
    if n + 1 < len(tokens) and tokens[n].lower in _ABOUT and _is_value(tokens[n + 1]):
        n += 1  # "has grown to over 200 members", "to about 30"
    start = n
    while n < len(tokens) and n < start + 2 and tokens[n].kind == "word" and not _is_value(tokens[n]) \
            and tokens[n].lower not in _TARGET_ENDS and tokens[n].lower not in _LINKS:
        n += 1  # "includes", "averaging around", "accommodate" (not "comply with ...")
    if n > start and n < len(tokens) and not _is_value(tokens[n]) and tokens[n].lower not in ("a", "an", "the"):
        return start, start  # a verb that introduces no value: "to comply with StreamWave's ..."
    end = n
    while end < len(tokens) and tokens[end].lower not in _TARGET_ENDS and not (
            tokens[end].kind == "punct" and tokens[end].text != "-") and not (
            tokens[end].lower == "to" and end + 1 < len(tokens) and not _is_value(tokens[end + 1])):
        end += 1
    if not any(_is_value(t) for t in tokens[n:end]):
        return start, start
    return n, end


_MONTHS = frozenset("""january february march april may june july august september october november
december jan feb mar apr jun jul aug sep sept oct nov dec""".split())


# A plan's words, and the words of doing what was planned.
PLAN_WORDS = frozenset("scheduled planned booked slated arranged".split())
_DONE_WORDS = frozenset("completed held done installed finished performed conducted delivered".split())
# Words that make a plan recur: one time done on another day leaves it as it was.
_RECURRING = frozenset("every each weekly daily monthly fortnightly biweekly".split())


def a_plan(tokens: Sequence[Token]) -> bool:
    """Whether a note opens on a plan of one time: a plan word, then "for" or "on" and a when,
    and no word that makes it recur ("Scheduled the boiler service for October 12"; not
    "Scheduled piano lessons every Saturday")."""
    words = _words(tokens)
    if not words or words[0] not in PLAN_WORDS or _RECURRING & set(words) \
            or any(word.endswith("s") and word[:-1] in WEEKDAYS for word in words):
        return False
    return any(word in ("for", "on") and (following in _WHEN_WORDS | _MONTHS or following[:1].isdigit())
               for word, following in zip(words, words[1:]))


def carried_out(tokens: Sequence[Token]) -> bool:
    """Whether a clause says something was done: "was" or "were" and a verb of doing it
    ("was completed on October 10"), not hedged ("might be completed")."""
    words = _words(tokens)
    return not hedged(tokens) and any(word in ("was", "were") and following in _DONE_WORDS
                                      for word, following in zip(words, words[1:]))


def plan_carried_out(older: Sequence[Token], newer: Sequence[Token]) -> bool:
    """Whether the newer clause tells the older note's plan done (see the module docstring)."""
    return a_plan(older) and carried_out(newer)


def names_the_plan(tokens: Sequence[Token]) -> bool:
    """Whether a clause names what was planned before telling it done: "The firmware update
    scheduled for July 18 was installed on July 17" (July 18 is the old value)."""
    words = _words(tokens)
    done = next((n for n, (word, following) in enumerate(zip(words, words[1:]))
                 if word in ("was", "were") and following in _DONE_WORDS), None)
    return done is not None and carried_out(tokens) and any(
        word in PLAN_WORDS and following in ("for", "on") for word, following in zip(words[:done], words[1:done]))


_WHEN_WORDS = WEEKDAYS | frozenset("today tomorrow tonight next".split())


# "last year", "last summer": a span before this one.
_PAST_SPANS = frozenset("""year month week summer winter spring autumn fall season quarter semester term
time""".split())


def told_as_past(tokens: Sequence[Token]) -> bool:
    """Whether a clause tells its value as one that held before ("a year ago", "last year",
    "used to", "back in 2021", "at the time"; see the module docstring). Whether it tells a
    change too is the caller's to ask."""
    words = _words(tokens)
    pairs = list(zip(words, words[1:]))
    return "ago" in words[1:] or ("used", "to") in pairs or ("back", "in") in pairs \
        or bool(_AT_FIRST & set(words)) or ("at", "first") in pairs or ("at", "launch") in pairs \
        or any(word == "last" and following in _PAST_SPANS for word, following in pairs) \
        or any(words[n:n + 3] in (["at", "the", "time"], ["at", "the", "start"]) for n in range(len(words))) \
        or any(word == "at" and following in _OWNERS_OF_A_PEAK and then == "peak"
               for word, following, then in zip(words, words[1:], words[2:]))


# "had 80 volunteers at its peak in 2020": the most it ever had, not what it has now.
_OWNERS_OF_A_PEAK = frozenset("its their the his her our my".split())


# Words that tell the value a thing had at its start: "originally 40 GB", "initially 3 members".
_AT_FIRST = frozenset({"originally", "initially"})

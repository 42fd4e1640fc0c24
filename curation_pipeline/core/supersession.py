"""Does a newer memory give a new value for what an older one says? Offline and conservative. Pure.

"The office printer is on floor 3." and, a week later, "The office printer is on floor 5." are
not duplicates to merge into one self-contradictory node, nor two equally current facts: the
newer one supersedes the older (the store marks the older `superseded`, keeps it, and leaves it
out of `current_memory`). This module decides, per pair (older by `created_at`, newer):

- each clause of the older text (clauses.py) is **restated** when the newer text covers it
  (coverage.py), **updated** when a clause of the newer text has the same *frame* and a
  different *value*, or else **left**;
- **frame**: the clause's content words other than its values and the words that announce a
  change ("now", "moved", "changed", "anymore", ...); two clauses of one frame say something of
  the same kind;
- **subject**: the names and codes that say what the clause is about: those before its verb
  ("is", "has", "moved", ...; its first word when it has none) and after "for", "of", "at". A
  changed subject is another thing, not an update: "exp-0412 reached MAPE 11.8%" and "exp-0413
  reached MAPE 12.1%" are two experiments, "Maria Chen leads payments" and "Oliver Chen leads
  payments" two people, "the export for Cedar Bank" and "the export for Maple Bank" two exports;
- **value**: a number, date or time, URL, e-mail address, identifier, a name outside the subject,
  a value word (value_words.py: weekday, unit of time, channel, status, ...), or the polarity of
  the clause (an added or removed "not", "no longer");
- a value is **replaced** when both clauses have values of that kind and they differ; a value
  only one side has is added detail, not a change. A change of polarity is a change, except
  where a denial gives no newer value (denials.py: two denials, or a denial of the past against
  the event, unless the newer clause says it changed).

The pair is an **update** when at least one older clause is updated and every other one is
restated: the newer memory says everything the older said, with some values changed. An update
that leaves some older clause unsaid is **partial**: superseding would hide a fact that is still
current, and merging would say two values side by side, so such a pair is neither (it is
reported, and linked by the judge or step 6b). When unsure, nothing is superseded: a clause
whose identifier or name changed together with another value is a different thing described
alike ("Deploys to eu-west-1 happen on Mondays" / "... us-east-1 ... Wednesdays"), not an update.
Such a **look-alike** pair (the same kind of statement about another thing, or about another
attribute of the same thing, with other values) is not merged either: one node would say two
values side by side. Nor is a pair one of whose texts already says two values of one thing (a
text of earlier merges): nothing tells which of its values is the older.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from curation_pipeline.core.carry import Carried, as_sentence, carried_clauses, carry_into
from curation_pipeline.core.change_cues import (
    CHANGE_VERBS,
    NOW_WORDS,
    ONCE_ONLY_VERBS,
    RESIDENCE_VERBS,
    adjective_use,
    after_a_clause,
    as_compared,
    change_amounts,
    change_statement,
    hedged,
    move_statement,
    names_the_plan,
    old_value_range,
    once_only_event,
    plan_carried_out,
    stop_statement,
    told_as_past,
)
from curation_pipeline.core.clauses import Piece, text_clauses
from curation_pipeline.core.coverage import KeptText, Semantic, uncovered
from curation_pipeline.core.denials import no_newer_value
from curation_pipeline.core.many_holders import holds_many, memberships_of_two_kinds, says_one_more
from curation_pipeline.core.meaning_markers import NEGATION
from curation_pipeline.core.measures import DIMENSIONS, is_measurement, measurement_kind, unit_of
from curation_pipeline.core.note_items import note_item
from curation_pipeline.core.noun_kinds import another_kind_of, which_value
from curation_pipeline.core.number_kinds import CLOCK, HOUR, number_kind
from curation_pipeline.core.sentence_tokens import root, tokenize
from curation_pipeline.core.speakers import without_speaker, without_vocative
from curation_pipeline.core.subjects import (
    MONTH_WORDS,
    WEEKDAYS,
    is_verb,
    naming_numbers,
    numbered_in_name,
    other_persons,
    own_subject,
    past_event,
    past_form,
    record_codes,
    subject_end,
    tail_keys,
    tail_start,
    verb_like_opening,
)
from curation_pipeline.core.value_cut import without_item, without_value
from curation_pipeline.core.value_words import ORDINALS, value_class

UPDATE, PARTIAL, LOOK_ALIKE, NONE = "update", "partial", "look-alike", "none"
# Clauses of one text compared at most: a longer text (a list of hundreds of items) is not
# compared clause by clause with another (see compare_versions).
MAX_CLAUSES_COMPARED = 120

# Words that announce a change rather than say what changed.
_CHANGE_CUES = frozenset("""
now new newly currently anymore longer moved move changed change switched switch updated update
replaced replace instead previously formerly earlier former latest today effective raised
lowered increased decreased reduced rescheduled renamed relocated migrated grew grown cut pushed
postponed shifted transferred passed went became become dropped rose fell extended
""".split()) | CHANGE_VERBS | NOW_WORDS
# A name after these words says whose or which thing the clause is about ("the export for Cedar
# Bank", "the deploy of the Rhodium service", "our contact at Driftwood Press"): part of the subject.
_OF_WHICH = frozenset({"for", "of", "at"})
# Value classes whose word, before a noun, names the thing ("phone number", "staging cluster").
_MODIFYING_CLASSES = frozenset({"channel", "environment", "status"})
# Status words that are also common verbs: a status only after a form of "be" ("is live").
_ALSO_VERBS = frozenset({"live"})
_DOERS = frozenset("i we you they he she who to still now also".split())
_PERSON_SUBJECTS = frozenset("i we you they he she".split())
# Status words that, after a person, still give a thing its state: "I paused my Netflix
# subscription" / "I resumed my Netflix subscription". Other status words after a person say what
# they did ("I scheduled 4 study sessions", "I completed the beginner course" / "I started the
# intermediate course": two courses, no state of one replaced).
_ON_OFF = frozenset("paused resumed cancelled canceled suspended opened closed".split())
_OWNERS = frozenset("my our your his her their its the this these those".split())
# Adverbs that say how sure or how much, not what: "I definitely will" and "It definitely isn't"
# have no frame in common (LoCoMo: two small-talk turns read as a change of polarity).
_FILLERS = frozenset("""definitely really actually just totally absolutely probably certainly literally very
recently slightly further""".split())
# Kinds that name a thing rather than measure it: a change of one of these together with
# another value describes another thing.
_NAMING_KINDS = frozenset({"identifier", "name"})


@dataclass(frozen=True)
class Shape:
    """A clause as frame and values."""

    frame: frozenset[str]
    values: dict[str, Counter]  # kind -> the values of that kind (their keys)
    subject: frozenset[tuple[str, str]]  # (kind, value) of the values that say what it is about
    negated: int  # negation markers
    tail: frozenset[str] = frozenset()  # the keys of its last words: the object, or the value it states
    head: frozenset[str] = frozenset()  # its frame words before those last words
    functional: bool = False  # "The <attribute> of <thing> is <value>": one value at a time
    cued: bool = False  # it says that something changed ("now", "moved to", "Update:")

    @property
    def identity(self) -> frozenset[str]:
        """What the clause is about and what kind of thing it says of it: its frame words and
        its subject's values. Two clauses of one identity say something of the same thing."""
        return self.frame | {value for _, value in self.subject}


@dataclass(frozen=True)
class ClauseUpdate:
    old: Piece
    new: Piece
    changed: tuple[str, ...]  # "number '3' -> '5'", "polarity"
    left: tuple[str, ...] = ()  # kinds of value the old clause states that the new one does not

    def record(self) -> dict:
        return {"old": self.old.text, "new": self.new.text, "changed": list(self.changed)}


@dataclass(frozen=True)
class VersionCheck:
    verdict: str  # UPDATE | PARTIAL | NONE
    updates: tuple[ClauseUpdate, ...] = ()
    left: tuple[Piece, ...] = ()  # older clauses neither restated nor updated
    too_long: bool = False  # not compared: over MAX_CLAUSES_COMPARED clauses
    carried: tuple[Carried, ...] = ()  # older clauses the newer memory takes over (carry.py)
    carried_text: str | None = None  # the newer memory's text with them


def _kind(token, following, previous=None, opening: bool = False) -> str | None:
    """The value kind of a token, None for a frame word. A number's kind says what it counts:
    a percentage, an amount of money, a time of day, a date, a year or a plain count, so that
    "$200" is never taken for the new value of "April 18"."""
    if token.kind == "number":
        return number_kind(token, following, previous)
    if token.kind in ("url", "email"):
        return token.kind
    if token.kind != "word" or not token.keys:
        return None
    measured = measurement_kind(token.text)
    if measured is not None:
        return measured  # "180ms", "512MB": a value of what it measures, not a code
    if HOUR.fullmatch(token.text.casefold()):
        return "number:time"  # "10am" is the hour "10:00am" is, not a code
    if any(ch.isdigit() for ch in token.text) or token.text.startswith("#"):
        return "identifier"
    if opening and verb_like_opening(token):
        return None  # "Completed 8 problems", "Scheduled a call": the note's verb
    word_class = value_class(token.lower, token.keys[0])
    if word_class == "ordinal" and token.lower in ("second", "seconds") and previous is not None \
            and previous.kind == "number":
        word_class = "time unit"  # "90 seconds": a duration's unit, as "5 minutes" is; not "the second floor"
    elif word_class == "ordinal" and token.lower not in ORDINALS:
        word_class = None  # "lasts 18 months", "two thirds": a verb or a fraction shares the ordinal's root
    if word_class == "status" and token.lower in _ALSO_VERBS and previous is not None \
            and (previous.lower in _DOERS or previous.is_name):
        word_class = None  # "I live in Berlin": a verb; "the site is live", "unblocked and live": a status
    if word_class == "status" and previous is not None and previous.lower in _OWNERS:
        word_class = None  # "review my draft", "the open house": a thing, not its status
    if word_class == "status" and previous is not None and previous.lower in _PERSON_SUBJECTS \
            and token.lower not in _ON_OFF:
        word_class = None  # "I scheduled 4 study sessions", "I completed the course": what I did
    if word_class == "month" and following is not None and following.kind == "word" and past_form(following.lower) \
            and not (previous is not None and previous.lower in _MONTH_LINKS):
        return "name"  # "April apologized for a missed lesson": a person; not "in April moved to ..."
    if word_class == "colour" and token.is_name and following is not None and following.is_name:
        return "name"  # "the Green Party", "Red Bull", "Black Sabbath": a word of a name
    if word_class is not None:
        modifies = (word_class in _MODIFYING_CLASSES and following is not None and following.kind == "word"
                    and following.keys and value_class(following.lower, following.keys[0]) is None)
        return None if modifies else word_class
    if token.is_name and not (opening and verb_like_opening(token)):
        return "name"
    return None


# Words before a month that make it a date, whatever verb follows ("in April ...", "since May ...").
_MONTH_LINKS = frozenset("in on since by until till from to during through of before after early mid late".split())


def _after_of_which(tokens, n: int) -> bool:
    """Whether token n is in a "for/of/at ..." phrase (over articles and other names)."""
    for before in range(n - 1, -1, -1):
        word = tokens[before]
        if word.lower in _OF_WHICH:
            return True
        if not (word.is_name or word.lower in ("the", "a", "an") or word.kind == "number"):
            return False
    return False


def _state_word(tokens, n: int) -> str | None:
    """"is on" / "is off" at the end of a clause, and "under way": states, though "on", "off",
    "under" and "way" are common words."""
    word = tokens[n].lower
    if word in ("on", "off") and (n + 1 == len(tokens) or tokens[n + 1].ends_clause) and n > 0 \
            and tokens[n - 1].lower in ("is", "are", "was", "were", "be", "been", "turned", "switched", "set"):
        return word
    if word == "way" and n > 0 and tokens[n - 1].lower == "under":
        return "underway"
    return None


def _cue_word(tokens, n: int) -> bool:
    """Whether the word at `n` says that something changed: a word of _CHANGE_CUES, but not one
    written as a name inside the clause, beside another name, after "named" or ending the clause
    after "is" ("a daughter named Rose Flynn", "Tom Fell", "My neighbour is Rose": no "rose to"
    or "fell to"). A title's capitals say nothing ("Standup Is Now on Fridays")."""
    token = tokens[n]
    if token.lower not in _CHANGE_CUES:
        return False
    if n and token.text[:1].isupper() and not token.text.isupper() and n + 1 < len(tokens) \
            and tokens[n + 1].is_name and tokens[n + 1].lower not in _CHANGE_CUES:
        return False  # a word of a name inside the clause: "the New York Stock Exchange"
    if n == 0 or not token.is_name or token.text.isupper():
        return True
    previous, following = tokens[n - 1], tokens[n + 1] if n + 1 < len(tokens) else None
    named = (previous.lower in ("named", "called")
             or (following is not None and following.kind == "word" and following.is_name
                 and following.lower not in _CHANGE_CUES)
             or (n > 1 and previous.is_name and previous.lower not in _CHANGE_CUES)
             or ((following is None or following.ends_clause) and previous.lower in ("is", "was")))
    return not named  # "Rose Chase", "Tom Fell", "My neighbour is Rose."


def shape(piece: Piece) -> Shape:
    return _shape(piece)


@lru_cache(maxsize=16384)
def _shape(piece: Piece) -> Shape:
    tokens = piece.tokens
    end_of_subject = subject_end(tokens)
    has_verb = end_of_subject < len(tokens) and (is_verb(tokens[end_of_subject])
                                                 or tokens[end_of_subject].lower in ONCE_ONLY_VERBS)
    codes = {token.lstrip("#`").lower() for kind, token in piece.facts if kind == "identifier"}
    in_names = naming_numbers(tokens)
    # In an event the record it happened on is part of what happened ("postponed the rollout on
    # ticket T-1073"); in a state it is the value ("is tracked in ticket NET-118").
    records = record_codes(tokens) if past_event(piece) else set()
    in_names |= records
    frame: set[str] = set()
    head: set[str] = set()
    last_words = tail_start(tokens)
    values: dict[str, Counter] = {}
    subject: set[tuple[str, str]] = set()
    for n, token in enumerate(tokens):
        state = _state_word(tokens, n)
        if state is not None:
            values.setdefault("status", Counter())[state] += 1
            continue
        if not token.keys or _cue_word(tokens, n) or token.lower in CLOCK or token.lower in _FILLERS:
            continue
        if token.lower in ("up", "down") and n and tokens[n - 1].lower in _GO_WORDS:
            continue  # "went up to $275": a particle of the verb, no word of what changed; not
            # "can hold up to 10,000" (a ceiling) nor "dining out"
        following = next((t for t in tokens[n + 1:] if t.lower not in _CHANGE_CUES), None)
        code = token.lower in codes and not is_measurement(token.text) and not HOUR.fullmatch(token.lower)
        kind = "name" if n in in_names and numbered_in_name(tokens, n) else "identifier" if code or n in in_names else _kind(
            token, following, tokens[n - 1] if n else None, opening=n == 0 and piece.first == 0)
        if kind is None:
            frame.update(token.keys)
            if n < last_words:
                head.update(token.keys)
            continue
        values.setdefault(kind, Counter()).update(token.keys)
        # A name or code before the verb, or in a "for/of/at ..." phrase of the subject (or of a
        # clause without a verb), says what the clause is about.
        of_which = _after_of_which(tokens, n) and (n < end_of_subject or not has_verb)
        # A length joined to its noun ("The 30-day return window") names which one, as a code does.
        naming = kind in _NAMING_KINDS or kind == "number:duration" and "-" in token.text
        if naming and (n < end_of_subject or of_which or n in records):
            subject.update((kind, key) for key in token.keys)
    negated = sum(1 for m in piece.markers if m.category == NEGATION)
    cued = any(_cue_word(tokens, n) and not adjective_use(tokens, n) for n in range(len(tokens))) \
        or names_the_plan(tokens)
    return Shape(frozenset(frame), values, frozenset(subject), negated, tail_keys(tokens), frozenset(head),
                 _functional(tokens, end_of_subject, cued), cued)


def _functional(tokens, end_of_subject: int, cued: bool = False) -> bool:
    """Whether a clause states the one value of an attribute: "The genre of music X plays is rock
    music", "Priya's manager is Tom", "The capital of X is Y" (a definite attribute, then "is"),
    where a new value replaces the old; or any definite subject when the clause says it changed
    ("The default branch was renamed to main"). "Dana is allergic to peanuts" or "Dana owns
    billing" may hold beside another value: not functional."""
    if end_of_subject >= len(tokens) or tokens[end_of_subject].lower not in ("is", "are", "was", "were"):
        return False
    before = [t for t in tokens[:end_of_subject] if t.kind == "word"]
    if not before:
        return False
    # An attribute, not a thing: "The genre of ...", "Priya's manager", "our plan's tier". "The
    # Marlowe build server is fast" / "... is quick" says how a thing is, in synonyms.
    definite = before[0].lower in ("the", "our", "their", "his", "her", "its", "my", "your")
    possessive = any(t.text.endswith(("'s", "’s")) for t in before)
    of_something = any(t.lower == "of" for t in before)
    return (definite and (of_something or cued) or possessive) and any(t.keys for t in before)


def value_changes(old: Shape, new: Shape) -> tuple[list[str], bool]:
    """What changed between two clauses of one frame: each kind whose values were replaced
    (some old value is gone: values only added are detail), and the polarity. And whether a
    changed value is one that says what the clause is about (then it is another thing)."""
    changed, about_another = [], False
    for kind in sorted(set(old.values) & set(new.values)):
        gone = old.values[kind] - new.values[kind]
        if not gone:
            continue
        came = new.values[kind] - old.values[kind]
        changed.append(f"{kind} {', '.join(sorted(old.values[kind]))!r} -> {', '.join(sorted(new.values[kind]))!r}")
        touched = {(kind, value) for value in (*gone, *came)}
        # A value both subjects name, in clauses that state one attribute's value, is no other
        # thing: "The official language of Slovak Socialist Republic is Slovak" / "... is
        # German" drops one "Slovak", not the subject's. Elsewhere ("P(A), P(B|A)" / "P(4,2)",
        # "The Boston Globe covers Boston." / "... covers New England.") the values are all
        # there is to tell two things apart.
        named = old.subject ^ new.subject if old.functional and new.functional else old.subject | new.subject
        about_another |= bool(touched & named)
    if (old.negated > 0) != (new.negated > 0):
        changed.append("polarity")
    return changed, about_another


def values_left(old: Shape, new: Shape) -> list[str]:
    """The kinds of value the older clause states that the newer one does not state at all:
    "... at 02:00 UTC, and is deprecated" against "... now at 03:00 UTC" leaves the status. An
    update that leaves them is partial: superseding would hide them."""
    return sorted(set(old.values) - set(new.values))


def object_swap(old: Shape, new: Shape) -> bool:
    """The same frame with another object or stated value at its end ("Dana owns billing" /
    "Dana owns search", "... is rock music" / "... is rap rock"): each side's last words are gone
    from the other, and all the rest is the same."""
    gone, came = old.tail - new.tail, new.tail - old.tail
    # Without a verb or subject before them, two objects are only two phrases ("and battery
    # life" / "and battery features"): no frame to swap an object of.
    return bool(gone and came and old.head) and old.head == new.head and old.subject == new.subject


# The kinds of value that together say when one event happens: a date and a time that change
# together, in words that say they moved ("April 21 at 3 PM" / "moved to April 22 at 11 AM"), are
# one new moment. A weekday and a time may be another slot ("at 8:00 on weekends").
_ONE_MOMENT = frozenset({"number:date", "month", "number:time"})


# Words before a date that say when a measure was taken ("since March 3", "as of May 15"), not
# what was measured.
_MEASURED_ON = frozenset({"since", "of", "on", "in", "by", "through"})
_DATE_KINDS = frozenset({"number:date", "month"})


def _dates_say_when(tokens) -> bool:
    """Whether every date of a clause stands after the value it dates and a word that says when
    ("79 kg as of May 15", "120 stars on March 3"): "The deadline is April 1" has a date for its
    value, and "The workshop on May 3 has 12 signups" a date that says which workshop."""
    dates = [n for n, t in enumerate(tokens) if t.lower.rstrip(".") in MONTH_WORDS]
    measured = next((n for n, t in enumerate(tokens)
                     if t.kind == "number" and n - 1 not in dates and n + 1 not in dates), None)
    return bool(dates) and measured is not None and all(
        n > measured and tokens[n - 1].lower in _MEASURED_ON for n in dates)


def _measured_when(update: ClauseUpdate) -> bool:
    """Whether an update gives a new measure taken at a new date ("Dana's weight was 82 kg as of
    March 3" / "Dana's weight is now 79 kg as of May 15"): the dates say when, so the measure is
    the only value of the thing that changed. The newer clause must say the new value ("now",
    "reached", "decreased to"): "Completed 6 new woodworking projects in November" counts
    another month's projects, not a new count of September's 4."""
    if change_statement(update.new.tokens) is None:
        return False
    kinds = _kinds(update.changed)
    measures = kinds - _DATE_KINDS
    return bool(kinds & _DATE_KINDS) and bool(measures) and all(kind.split(":")[0] == "number" for kind in measures) \
        and _dates_say_when(update.old.tokens) and _dates_say_when(update.new.tokens)


def _kinds(changed: Sequence[str]) -> set[str]:
    return {change.split(" ", 1)[0] for change in changed}


def _unsure(changed: Sequence[str], *, cued: bool = False) -> bool:
    """A change that may be another thing described alike: a name or code changed together with
    another value; or, without a word that says something changed, two kinds of value at once
    ("The gym opens at 6:00 on weekdays." / "... at 8:00 on weekends.": another time of another
    day, not a new opening time)."""
    kinds = _kinds(changed) - {"polarity"}
    return len(kinds) > 1 and (bool(kinds & _NAMING_KINDS) or not cued)


@lru_cache(maxsize=16384)
def sentence_subject(sentence: str) -> frozenset[str]:
    """The names and codes a sentence opens with, before its verb or colon: "Monarch Retail" of
    "Monarch Retail is evaluating ...; the budget is about $343,000", "Ablation exp-2787" of
    "Ablation exp-2787: removing ...". They say what each of its clauses is about."""
    tokens = tokenize(sentence)
    if tokens and tokens[0].lower.endswith("ed") and verb_like_opening(tokens[0]):
        # "Accepted Leslie's introduction offer, scheduled ...": the note's own past action;
        # the names after it are what it was done to, not what the sentence is about.
        return frozenset()
    # "Run exp-7469 diverged ...": a verb-like word, then the thing the sentence is about.
    start = 1 if tokens and verb_like_opening(tokens[0]) else 0
    named = frozenset(key for t in tokens[start:subject_end(tokens)]
                      if (t.is_name and value_class(t.lower, t.keys[0]) not in ("month", "weekday")) or _code(t)
                      for key in t.keys)
    if named:
        return named
    first_clause = next((n for n, t in enumerate(tokens) if t.kind == "punct"), len(tokens))
    return frozenset(key for t in tokens[start:first_clause] if _code(t) for key in t.keys)


def _code(token) -> bool:
    return token.kind == "word" and any(ch.isdigit() for ch in token.text) and not is_measurement(token.text)


def _of_another_thing(old: Piece, new: Piece) -> bool:
    """Whether the two clauses' sentences open with other names: then "the budget is about
    $180,000" of Orbital Foods' evaluation is no new value of "the budget is about $343,000" of
    Monarch Retail's, and "Ablation exp-4969" is another ablation than "Ablation exp-2787". Two
    clauses that open on two persons ("He'll drive 2 kids" / "She'll drive 3 kids") are of two."""
    if other_persons(old.tokens, new.tokens):
        return True
    before, after = sentence_subject(old.context or old.text), sentence_subject(new.context or new.text)
    if not (before and after) or before == after:
        return False
    # A capital that opens a sentence reads as a name: "Initial API key obtained ..." and "The
    # API key's daily quota ..." name the same key. "Monarch Retail Europe" is not "Monarch Retail".
    opening_before = _opening_key(old.context or old.text) - after
    opening_after = _opening_key(new.context or new.text) - before
    return before - opening_before != after - opening_after


@lru_cache(maxsize=16384)
def _opening_key(sentence: str) -> frozenset[str]:
    """The key of the word that opens a sentence, if it is a plain capitalised word (which may
    be a name or only capitalised); a code ("exp-9117: ...") always names the thing."""
    first = next((t for t in tokenize(sentence) if t.keys), None)
    if first is None or first.kind != "word" or not first.text.isalpha() or not first.text[:1].isupper():
        return frozenset()
    return frozenset(first.keys)


# Writing that is mathematics: an operator or a function of a variable ("E(X^2) = 91/6 ≈ 15.17",
# "P(A ∪ B)", "y(2) ≈ 350"). Its numbers are terms of a formula, no value of an attribute. "≈"
# and "≤" alone are a note's "about" and "at most" ("Monthly rent ≈ $1,200").
_MATH = re.compile(r"[\^∪∩Σ∑∫√]|\b[A-Za-z]{1,3}\([A-Za-z0-9][^()]*\)\s*[=≈]")


# Arithmetic between numbers ("(−2+6)/2"): with "=", a calculation.
_ARITHMETIC = re.compile(r"[\d)]\s*[+−×*]\s*[\d(−]")


def writes_math(piece: Piece) -> bool:
    """Whether a clause writes a formula: "E(X^2) = (1^2+...+6^2)/6" is not a value a
    "Var(X) = E(X^2) - [E(X)]^2" of another formula replaces, nor "M = ((−2+6)/2, ...) = (2,1)"
    one of "M = ((2+8)/2, ...) = (5,7)". "batch size = 32" is no formula."""
    return _MATH.search(piece.text) is not None or "=" in piece.text and _ARITHMETIC.search(piece.text) is not None


def _may_update(old: Piece, newer: Sequence[Piece], corrected: bool) -> list[Piece]:
    """The newer clauses that may give the older clause a new value: asserted, of the same
    thing and time, not one more of many."""
    return [new for new in newer
            if not unasserted(new) and not held_before(old, new) and not scoped(old, new)
            and not writes_math(new) and not _of_another_thing(old, new) and not another_kind_of(old, new, names=True)
            and not no_newer_value(old, new, corrected=corrected) and not one_more_of_many(old, new, corrected)
            and not _after_another_event(old, new)]


def _item_update(claims: Sequence[Piece], shapes: Sequence[Shape], n: int, newer: Sequence[Piece],
                 corrected: bool = False) -> ClauseUpdate | None:
    """An item of a note's list given a new value (core/note_items.py): "Spotify family plan,
    $16.99 a month, billed on the 5th." / "The Spotify family plan price is now $19.99 a
    month.". The newer clause names the note's topic, says it changed, and has one value of
    each kind it replaces. `shapes`: the claims' shapes."""
    item = note_item(claims, shapes, n)
    if item is None or writes_math(claims[n]):
        return None
    for new in _may_update(claims[n], newer, corrected):
        new_shape = shape(new)
        if not item.updated_by(new, new_shape):
            continue
        changed, about_another = value_changes(item.shape, new_shape)
        if changed and not about_another and not _unsure(changed, cued=True) \
                and item.of_its_values(changed) \
                and all(len(new_shape.values[kind]) == 1 for kind in _kinds(changed) if kind in new_shape.values):
            return ClauseUpdate(claims[n], new, tuple(changed))
    return None


def _update_of(old: Piece, newer: Sequence[Piece], corrected: bool = False) -> ClauseUpdate | None:
    old_shape = shape(old)
    if not old_shape.identity or writes_math(old):
        return None
    newer = _may_update(old, newer, corrected)
    for new in newer:
        new_shape = shape(new)
        if new_shape.identity == old_shape.identity and stands_alone(old) and stands_alone(new) \
                and (not (past_event(old) or past_event(new)) or _event_cued(new)
                     or _once_only(old) and _once_only(new)):
            # Two past events of one kind with other numbers are two events ("Completed 5 coin
            # toss problems" / "Completed 8 ..."; "Held sprint retrospective May 18" / "... July
            # 3"), not a new value, unless a cue says so or the event happens once (a birth, a
            # death); and a clause that continues another ("4 correct", "and Canadian markets")
            # is read only with it.
            changed, about_another = value_changes(old_shape, new_shape)
            if denies_another_value(new_shape, changed):
                changed = []  # "The grant deadline was not extended to March 15" sets no date
            if _only_amounts_gone(old, new, old_shape, new_shape):
                changed = []  # "Increased the dose by 25 mg." says no dose "... to 100 mg" replaces
            once_only = _once_only(old) and _once_only(new) and not _event_cued(new)
            if once_only and any(not (new_shape.values[kind] - old_shape.values[kind]) for kind in _kinds(changed)
                                 if kind != "polarity"):
                # A once-only event corrects a value with one of its kind: "was born in Chicago" /
                # "was born in 1906" says when, and leaves where unsaid.
                changed = []
            if changed and not about_another and not _unsure(changed, cued=new_shape.cued):
                # A kind of value left unsaid as a value may be said in other words: "Monthly"
                # in "$500/month", "Project Falcon" in "Falcon's".
                said = said_keys(new.tokens, old.tokens)
                left = [kind for kind in values_left(old_shape, new_shape) if not set(old_shape.values[kind]) <= said]
                return ClauseUpdate(old, new, tuple(changed), tuple(left))
        swap = functional_swap(old, new)
        if swap is not None:
            return swap
    # Of the newer clauses that say the change, the one that leaves the fewest of the older
    # clause's values unsaid ("... increased to 5 between April 25 and May 1, 2024").
    events = [update for new in newer for find in (_event_update, _stop_update, _move_update, _state_after_setting)
              if (update := find(old, new)) is not None]
    return min(events, key=lambda update: len(update.left)) if events else None


def denies_another_value(new: Shape, changed: Sequence[str]) -> bool:
    """Whether a negated newer clause names another value than the older one: it says what is
    not so ("was not extended to March 15"), not what is. "The cafe is no longer open on
    Sundays" turns the same values over: that is a change."""
    return new.negated > 0 and "polarity" in changed and len(changed) > 1


@lru_cache(maxsize=16384)
def _sentence_tokens(sentence: str) -> tuple:
    """A clause's sentence, tokenized once for every pair it is in (scoped, unasserted)."""
    return tuple(tokenize(sentence))


def held_before(old: Piece, new: Piece) -> bool:
    """Whether the newer clause tells its value as one that held before, and no change ("A year
    ago the nightly build took 25 minutes", "At launch the archive was 40 GB": told_as_past),
    while the older one tells a value now: then it replaces nothing. Both told so speak of the
    same past ("Breaking Bad originally aired on AMC." / "... on HBO." corrects it)."""
    return told_as_past(new.tokens) and not told_as_past(old.tokens) and not shape(new).cued \
        and change_statement(new.tokens) is None


def unasserted(piece: Piece) -> bool:
    """Whether a clause states no value as holding: its sentence asks ("Should we move the
    freeze to 3pm?"), is a condition ("If the Berlin folks join, we'll move standup to 8am") or
    an open question ("... whether the budget goes to $250"), or the clause hedges it ("might
    be moved to March 27", "will be moved to": change_cues.hedged)."""
    if asks(piece) or hedged(piece.tokens):
        return True
    words = [t.lower for t in _sentence_tokens(piece.context or piece.text) if t.kind != "punct"]
    # "Marta will decide whether the budget goes to $250": an open question, no value said.
    return bool(words) and words[0] in ("if", "unless") or "if" in words or "whether" in words


# Words that open a span of time a value holds in, beside another that holds the rest of the time.
_SPAN_WORDS = frozenset({"during", "throughout"})
# ... and the spans ("during Black Friday week", "throughout the summer"); not "during workouts",
# "during distributed training": how or what for, not when instead.
_SPANS = frozenset("""hour hours day days week weeks weekend weekends month months season seasons summer
winter spring autumn fall holiday holidays break quarter semester term sale period""".split())


def scoped(old: Piece, new: Piece) -> bool:
    """Whether the newer clause gives its value for a span or a part the older one does not name:
    "The support line closes at 9pm during Black Friday week" leaves "closes at 6pm" the rule,
    "The Kelvin Museum opens at 9am on Saturdays" leaves "opens at 10am" the other days', and
    "Bumped Node to 20 in the Ashby docs site only" the repository's Node 18."""
    said = {key for t in _sentence_tokens(old.context or old.text) for key in t.keys}
    tokens = _sentence_tokens(new.context or new.text)  # "during ..." may be a clause of its own
    words = [t for t in tokens if t.kind != "punct"]
    # "... in the Ashby docs site only": a value for part of what the older clause speaks of.
    only_part = bool(words) and words[-1].lower == "only" and "only" not in {t.lower for t in old.tokens}
    spans = [n for n, t in enumerate(tokens) if t.lower in _SPAN_WORDS
             and any(following.lower in _SPANS for following in tokens[n + 1:n + 5])]
    return only_part or any(not {key for t in tokens[n + 1:n + 5] for key in t.keys} <= said for n in spans) \
        or _part_of_the_time(old, new)


def _part_of_the_time(old: Piece, new: Piece) -> bool:
    """Some days of the week, or a month, a state holds in that the older clause does not name,
    said in the older clause's words but for its values: "The Kelvin Museum opens at 9am on
    Saturdays" after "... opens at 10am". A clause that says it changed ("now opens at 9am on
    weekdays", "moved to Cape Town in December") gives the new value, whenever it starts; one
    with words of its own ("lives in York after relocating for work in March") says more than
    when the value holds."""
    if shape(new).cued or past_event(new):
        return False
    words = [t for t in new.tokens if t.kind != "punct"]
    older = {t.lower for t in old.tokens}
    span = _some_days(words, older) or _a_month_of_a_state(words, older)
    if span is None:
        return False
    rest = [t for n, t in enumerate(words) if n not in span]
    return all(t.lower in older for t in rest if t.text.isalpha() and not t.is_name)


_PARTS_OF_A_WEEK = frozenset({"weekends", "weekdays"} | {f"{day}s" for day in WEEKDAYS})
# Of a thing that happens once in so many weeks, the day is part of when it is: "The weekly 1:1
# is at 10am" / "... at 2pm on Thursdays".
_WEEKLY = frozenset("weekly fortnightly biweekly week".split())


def _some_days(words, older: set[str]) -> range | None:
    """Where "on Saturdays", "at weekends", "on weekdays" is: days of the week a value holds on,
    when the older clause names no day and nothing weekly (the rest of the week it still holds).
    Days the older clause names too are the value: "works from the office on Mondays" / "... on
    Tuesdays"."""
    if older & (WEEKDAYS | _PARTS_OF_A_WEEK | _WEEKLY | {"weekend", "weekday"}):
        return None
    return next((range(n, n + 2) for n, (word, following) in enumerate(zip(words, words[1:]))
                 if word.lower in ("on", "at") and following.lower in _PARTS_OF_A_WEEK), None)


def _a_month_of_a_state(words, older: set[str]) -> range | None:
    """Where "in December" is, after another value, when the older clause names no month and the
    newer one states, not plans: "Amara Obi works from Cape Town in December" (the rest of the
    year she still works from Nairobi). "The deadline is in December" gives the month as the
    value; "The Q3 offsite will be in Lisbon in September" the date of a plan."""
    if older & MONTH_WORDS or any(t.lower in _PLANNING for t in words):
        return None
    return next((range(n, n + 2) for n, (word, following) in enumerate(zip(words, words[1:]))
                 if word.lower == "in" and following.lower in MONTH_WORDS and following.keys
                 and n and not is_verb(words[n - 1])), None)


_PLANNING = frozenset("will 'll going planned plans plan scheduled next".split())


def one_more_of_many(old: Piece, new: Piece, corrected: bool = False) -> bool:
    """Whether two clauses both state a relation that holds many at once ("Ellen's sister is
    Joan" / "... is Ruth": many_holders.py), or the newer one says it adds one ("also speaks
    French"), and the newer one says no change: one more, not a new value."""
    if corrected or shape(new).cued:
        return False
    return holds_many(old.tokens) and holds_many(new.tokens) or memberships_of_two_kinds(old.tokens, new.tokens) \
        or says_one_more(new.tokens)


def _only_amounts_gone(old: Piece, new: Piece, old_shape: Shape, new_shape: Shape) -> bool:
    """Whether every value of the older clause the newer one does not say is by how much
    something changed (change_cues.change_amounts), and the newer one says no such amount."""
    if change_amounts(new.tokens):
        return False  # "by 2 km each week" / "by 1 km each week": the amount is the value that changed
    amounts = {key for n in change_amounts(old.tokens) for key in old.tokens[n].keys}
    gone = {key for kind, keys in old_shape.values.items() for key in keys if key not in new_shape.values.get(kind, ())}
    return bool(gone) and gone <= amounts


def functional_swap(old: Piece, new: Piece) -> ClauseUpdate | None:
    """One attribute with another stated value, whether or not the two values are of a kind the
    words know ("The official language of France is French" / "... is Persian": a language,
    then a name; "The author of James Bond is Ian Fleming" / "... is various authors"). No
    older value but the stated one may be gone: a value changed before it is another attribute
    or thing."""
    old_shape, new_shape = shape(old), shape(new)
    if new_shape.negated > old_shape.negated:
        return None  # "The deadline was not extended to March 15": what is not so
    if not (new_shape.functional and (old_shape.functional or new_shape.cued and _functional(
            old.tokens, subject_end(old.tokens), cued=True)) and object_swap(old_shape, new_shape)):
        return None
    stated = old_shape.tail | new_shape.tail
    if any(set(values) - set(new_shape.values.get(kind, ())) - stated for kind, values in old_shape.values.items()):
        return None
    change = f"value {' '.join(sorted(old_shape.tail))!r} -> {' '.join(sorted(new_shape.tail))!r}"
    # The replaced value itself is not left unsaid, whatever its kind.
    left = [kind for kind in values_left(old_shape, new_shape) if not set(old_shape.values[kind]) <= old_shape.tail]
    return ClauseUpdate(old, new, (change,), tuple(left))


# Words after a change word that say what it changed to, from or when: "moved to", "rescheduled for".
_CUE_LINKS = frozenset("to from for until till by at on in into".split())


def _event_cued(piece: Piece) -> bool:
    """Whether a clause that tells an event says that a value changed: a cue other than the
    note's own opening verb. "Updated crisis plan on November 5" is one more update of the plan,
    as "Updated crisis plan on August 20" was: two events; "Raised the budget to $3,000" and "I
    extended my rest day ... to two full days" say a new value."""
    tokens = [t for t in piece.tokens if t.kind != "punct"]
    return change_statement(piece.tokens) is not None or any(
        t.lower in _CHANGE_CUES and not adjective_use(tokens, n) and not (n == 0 and piece.first == 0)
        and not _before_its_noun(tokens, n) and not _noun_use(tokens, n) for n, t in enumerate(tokens))


def _before_its_noun(tokens, n: int) -> bool:
    """Whether the change word at `n` stands before the noun it describes, right after a verb or
    an owner ("Reviewed updated Turkish sleep guidelines on October 1" / "... on November 1",
    "Submitted the revised budget on May 3" / "... on May 9": two events of the updated thing,
    no date moved)."""
    following = tokens[n + 1] if n + 1 < len(tokens) else None
    return n > 0 and (verb_like_opening(tokens[n - 1]) or tokens[n - 1].lower in _OWNERS) \
        and following is not None and following.kind == "word" and bool(following.keys) \
        and following.lower not in _CUE_LINKS



# Change words that are nouns as well ("a policy update", "the price change").
_NOUN_FORMS = frozenset("update change move switch shift increase decrease".split())
# Words after which such a word is a verb ("we update", "will change", "to increase").
_BEFORE_A_VERB = frozenset("i we you they to will would can could should must may might did do does not "
                           "never please and or".split())


def _noun_use(tokens, n: int) -> bool:
    """Whether the change word at `n` is a noun after the noun it belongs to, and says no value
    changed: "Followed the council's crypto policy update on June 10" / "... on August 15" are
    two updates of the policy that were followed, as two reviews would be. Not before "to" or
    "from" ("Our prices change to $12"), nor after a doer or "to" ("we update", "to change")."""
    following = tokens[n + 1] if n + 1 < len(tokens) else None
    previous = tokens[n - 1] if n else None
    return tokens[n].lower in _NOUN_FORMS and previous is not None and previous.kind == "word" \
        and bool(previous.keys) and previous.lower not in _BEFORE_A_VERB and not is_verb(previous) \
        and not (following is not None and following.lower in ("to", "from"))


def two_events(old: Piece, new: Piece) -> bool:
    """Whether two clauses tell two events of one kind: both happened ("Declined a $2,000
    project on April 4" / "Declined a $3,000 project on May 25"), no cue in the newer one says a
    value changed, and the event is not one that happens once (a birth, a death), nor a plan and
    its outcome ("Scheduled the boiler service for October 12" / "The scheduled boiler service
    was completed on October 10")."""
    return past_event(old) and past_event(new) and not _event_cued(new) and not (_once_only(old) and _once_only(new)) \
        and not plan_carried_out(old.tokens, new.tokens)


def _once_only(piece: Piece) -> bool:
    return once_only_event(piece.tokens, subject_end(piece.tokens))


def _subject_keys(tokens) -> frozenset[str] | None:
    """The keys of a clause's subject, or None when it is something of a name's ("Maya's
    sister"): then the words after the name are no verb, and the clause is not the name's."""
    subject = tokens[:subject_end(tokens)]
    if any(t.text.endswith(("'s", "’s")) for t in subject):
        return None
    return frozenset(key for t in subject for key in t.keys)


def _plain_state(old: Piece) -> bool:
    """An older clause a stop or a move can end: a current state said on its own, not negated
    and not a past event ("Ana drank coffee yesterday" stays true whatever she does now)."""
    return stands_alone(old) and not shape(old).negated and not past_event(old)


def _stop_update(old: Piece, new: Piece) -> ClauseUpdate | None:
    """A stop (change_cues.py) of what the older clause says: "Ana quit coffee." ends "Ana
    drinks coffee every morning." when both have the same subject, the older clause has the
    stop's object after its subject, and its verb is one the stop can end."""
    stop = stop_statement(new.tokens)
    if stop is None or not _plain_state(old):
        return None
    subject = _subject_keys(old.tokens)
    said_of = frozenset(key for t in new.tokens[:stop.cue_at] for key in t.keys)
    ended = frozenset(key for t in new.tokens[stop.object_from:] for key in t.keys)
    rest = old.tokens[subject_end(old.tokens):]
    if subject is None or said_of != subject or not ended or not ended <= {key for t in rest for key in t.keys}:
        return None
    if stop.verbs is not None and not any(t.lower in stop.verbs for t in rest[:2]):
        return None
    return ClauseUpdate(old, new, (f"polarity ({stop.cue})",))


def _move_update(old: Piece, new: Piece) -> ClauseUpdate | None:
    """A move (change_cues.py): "Maya moved to Berlin." gives "Maya lives in Lisbon." a new
    place when both have the same subject and the older clause says nothing but where it lives."""
    move = move_statement(new.tokens)
    if move is None or not _plain_state(old):
        return None
    cue_at, place_at = move
    end = subject_end(old.tokens)
    rest = [t for t in old.tokens[end:] if t.kind != "punct"]
    verb = next((n for n, t in enumerate(rest[:2]) if t.lower in RESIDENCE_VERBS), None)
    if verb is None or verb + 1 >= len(rest) or rest[verb + 1].lower not in ("in", "at"):
        return None
    old_place = rest[verb + 2:]
    new_place = []
    for token in new.tokens[place_at:]:
        if not token.is_name:
            break
        new_place.append(token)
    said_of = frozenset(key for t in new.tokens[:cue_at] for key in t.keys)
    old_keys = frozenset(key for t in old_place for key in t.keys)
    new_keys = frozenset(key for t in new_place for key in t.keys)
    if said_of != _subject_keys(old.tokens) or not old_place or not all(t.is_name for t in old_place) \
            or old_keys == new_keys:
        return None
    return ClauseUpdate(old, new, (f"place {' '.join(sorted(old_keys))!r} -> {' '.join(sorted(new_keys))!r}",))


# Words of an attribute that say nothing of which one ("the number of designers", "my total").
_GENERIC_ATTRIBUTE = frozenset(root(w) for w in "number amount count total level rate value figure size".split())


def values_of(tokens, opening: bool = False) -> dict[str, Counter]:
    """The values among `tokens`, by kind (as a clause's shape counts them); `opening`: the
    tokens open a sentence."""
    found: dict[str, Counter] = {}
    for n, token in enumerate(tokens):
        if not token.keys or _cue_word(tokens, n) or token.lower in CLOCK:
            continue
        following = tokens[n + 1] if n + 1 < len(tokens) else None
        kind = _kind(token, following, tokens[n - 1] if n else None, opening=opening and n == 0)
        if kind is not None:
            found.setdefault(kind, Counter()).update(token.keys)
    return found


def _event_update(old: Piece, new: Piece) -> ClauseUpdate | None:
    """An update said as an event (change_cues.py): "The scheduled Zoom meeting with Professor
    Danielle was moved to March 22 at 4:30 PM ..." updates "Scheduled a Zoom meeting with
    Professor Danielle on March 22 at 3 PM to review my draft." when

    - the attribute that changed is the older clause's: the head noun of the words before the
      cue ("meeting"; "commits" of "the number of commits") is in it, or the noun after the new
      value is the one after the old value ("10 cards" / "8 cards"); the names and codes before
      the cue are in the older sentence, and their value words in the older clause; a subject
      the newer clause names ("The guest list") shares a word with the older sentence;
    - a value after the cue replaces an older value of the same kind, which the older clause
      states once or next to the attribute;
    - every other value of the older clause is said by the newer one (else the update would
      hide it: the older clause is left, and the pair is partial). Other words of the older
      clause the newer one does not say (WORDS_LEFT: "Hired Maria as a part-time bookkeeper")
      are carried in the older sentence without its replaced value, where it can be cut.
    """
    statement = change_statement(new.tokens)
    if statement is None or _a_goal(old.tokens, new.tokens):
        return None
    if new.first == 0 and statement.cue_at == 0 and statement.cue.casefold().endswith("ing"):
        return None  # "Increasing my budget to $800 would help": a gerund, the subject of a sentence
    before = new.tokens[:statement.cue_at]
    named = values_of(before, new.first == 0)
    old_sentence = tokenize(old.context or old.text)
    sentence_keys = {key for t in old_sentence for key in t.keys}
    # The attribute said between the cue and its new value ("Increased frontend Jest coverage to
    # 88%") names what changed as the words before the cue do.
    named_old = statement.old_values  # "switched from Spanish to Japanese": Spanish is the old value
    attribute_named = values_of([t for n, t in enumerate(new.tokens) if statement.cue_at < n < statement.values_from - 1
                                 and not (named_old and named_old[0] <= n < named_old[1])])
    if not {key for kinds in (named, attribute_named) for kind, keys in kinds.items() if kind in _NAMING_KINDS
            for key in keys} <= sentence_keys:
        return None  # the newer one names another thing
    if not {key for n, t in enumerate(new.tokens) if statement.cue_at < n < statement.values_from - 1
            and t.is_name and not (named_old and named_old[0] <= n < named_old[1]) for key in t.keys} <= sentence_keys:
        return None  # "my average time per Green's theorem problem" is of no Jacobian calculations
    # A note that opens with its own action ("Upgraded the Nimbus staging cluster to ...", "Got
    # Kite's bundle down to ...") has no subject: what follows the verb is what changed, and
    # the names in it are checked above. ("Building 4 is closed" has one.)
    own_action = new.first == 0 and not new.tokens[0].lower.endswith("ing") and verb_like_opening(new.tokens[0])
    subject = frozenset() if own_action else _subject_besides_values(new)
    object_words = _object_words(new, statement)
    changed_object = frozenset(key for t in object_words for key in t.keys)
    if _participle(new, statement) and not (changed_object <= sentence_keys
                                            and not _event_of_another_thing(new, statement, sentence_keys)):
        # A clause in -ing has no subject of its own: every word of what it changed is in the
        # older sentence, and the event before it is of the older sentence's thing. "Joined a
        # cycling club, increasing my weekly riding distance to 60 miles" is not "I run 20 miles
        # a week".
        return None
    of_which = next((n for n, t in enumerate(new.tokens[statement.cue_at + 2:statement.values_from - 1], statement.cue_at + 2)
                     if t.lower in ("for", "of")), None)
    if of_which is not None and not {key for t in new.tokens[of_which:statement.values_from - 1] for key in t.keys} <= sentence_keys:
        return None  # "raised my savings goal for the car to $5,000" is of no goal for the house
    doer = _doer_of_change(new, statement, sentence_keys)
    if subject and not subject & sentence_keys and not doer:
        return None  # "The guest list has grown to 28 attendees" is no funeral's 50 attendees
    old_values = values_of(old.tokens, old.first == 0)
    if any(kind in old_values and not set(keys) & set(old_values[kind])
           for kind, keys in named.items() if kind not in _NAMING_KINDS and not kind.startswith("number")):
        return None  # "the staging cluster" is not the clause about the production one
    if _another_count_of(old.tokens, before, old.text, new.text):
        return None  # "latency under 1,000 concurrent users" is not the one "under 100 concurrent users"
    after = [t for n, t in enumerate(new.tokens) if statement.values_from <= n < statement.values_to
             and not (named_old and named_old[0] <= n < named_old[1])]
    new_values = values_of(after)
    historical = {key for t in old.tokens[slice(*old_value_range(old.tokens) or (0, 0))] for key in t.keys}
    # By how much the older event changed a value ("reduced ... by 5 kg") is no value a new one replaces.
    amounts = {key for n in change_amounts(old.tokens) for key in old.tokens[n].keys}
    # A name or code the newer clause says before its cue is what it speaks of: were it
    # replaced, the clause would speak of another thing. "Riverstone Bank moved its headquarters
    # to Lyon" gives no new value to "a 31% discount for Riverstone Bank". (A date there names
    # the old value: "The webinar on September 10 was rescheduled to September 17".)
    spoken_of = {key for t in before for key in t.keys}
    said_anywhere = said_keys(new.tokens, old.tokens)
    # Not a value named as the old one: "switched from Spanish to Japanese".
    from_at = next((n for n in range(statement.cue_at, statement.values_from) if new.tokens[n].lower == "from"),
                   statement.values_from)
    still_said = {key for n, t in enumerate(new.tokens) for key in t.keys
                  if not from_at < n < statement.values_from and not (named_old and named_old[0] <= n < named_old[1])}
    changed, gone_all, came_all, ambiguous = [], set(), set(), set()  # came_all: new numbers
    for kind in sorted(set(old_values) & set(new_values)):
        gone = set(old_values[kind] - new_values[kind]) - historical - amounts
        if kind in _NAMING_KINDS and gone & spoken_of:
            return None
        if not kind.startswith("number"):
            # A name or a unit the newer clause still says elsewhere is not replaced: "Updated the
            # chat UI to React 18.2" keeps the UI; "Increased daily meditation to 20 minutes"
            # keeps "daily", and is no new value of "twice daily".
            gone -= still_said
        came = set(new_values[kind] - old_values[kind])
        if not gone or not came:
            continue
        changed.append(f"{kind} {', '.join(sorted(old_values[kind]))!r} -> {', '.join(sorted(new_values[kind]))!r}")
        gone_all |= gone
        if kind.startswith("number"):
            came_all |= came
        if len(gone) > 1:
            ambiguous |= gone
    if not changed or _unsure(changed, cued=True):
        return None
    if named_old:
        # "... query time reduced from 700ms to 200ms" names its own old value: it updates a
        # clause that says 700ms, not one of another table's "reduced from 500ms to 150ms".
        from_keys = {key for t in new.tokens[named_old[0]:named_old[1]] for key in t.keys}
        if not from_keys & ({key for t in old.tokens for key in t.keys} - historical):
            return None
    phrase = _attribute_phrase(new.tokens[statement.cue_at + 1:statement.values_from]) if doer else \
        _attribute_phrase(before) or _attribute_phrase(new.tokens[statement.cue_at + 1:statement.values_from])
    head = frozenset(key for t in phrase for key in t.keys)
    if _another_attribute(old, new.tokens[:statement.values_from], phrase, old_sentence, sentence_keys):
        return None
    # What the new values count: of those that replace an old one ("120ms under 20 concurrent
    # requests": the 20 requests were there before, and say nothing of what 120ms is).
    new_units = {_unit_after(after, k, new.text) for k in came_all}
    new_units.discard(None)
    if head and not head & sentence_keys and not _count_the_same_thing(old, gone_all, new_units):
        # The newer memory names what changed, and the older one never does: "Increased deadlift
        # max to 70 kg" gives no new value to "increased squat weight from 40 kg to 48 kg", nor
        # "weekly walking distance" to a clinic "12 km from home", though both count kilograms
        # or kilometres. What both count, if not a unit of measure, names it ("increased my
        # practice sessions to 12 conditional probability problems" / "Completed 8 conditional
        # probability problems").
        return None
    # The object of a change verb (not the words after "now": "now averaging around 140MB").
    object_phrase = _attribute_phrase([t for t in object_words if not t.is_name]) \
        if statement.cue.casefold() in CHANGE_VERBS else ()
    if object_phrase and not any(set(t.keys) <= sentence_keys for t in object_phrase) \
            and not _count_the_same_thing(old, gone_all, new_units):
        return None  # "Coach Brennan moved the team dinner to 7pm" gives his practice time no new value
    for key in gone_all:
        if _an_example(old.tokens, key):
            return None  # "prefer models like DistilGPT-2": an example of a kind, no attribute's value
        state = _state_of_count(old.tokens, key)
        if state and not state & said_anywhere:
            return None  # "840 tests passing" / "down to 12 tests failing": another count
        # What the old value counts ("8 cards", "4 interview prep sessions") is what changed:
        # the attribute's head noun, or what the new value counts; a value that counts another
        # thing than the new one is another value.
        unit = _unit_after(old.tokens, key, old.text)
        # The noun counted, if the newer clause never says it, is another attribute: "1,000+
        # user interactions" are no "number of users".
        counted = set(_unit_run(old.tokens, key, old.text)[-1:])
        if unit is not None and (any(not unit & other for other in new_units)
                                 or not (unit & head and counted & said_anywhere
                                         or any(unit & other for other in new_units))):
            return None
        if unit is None and (new_units or not (head and head <= old.keys)):
            return None
    if ambiguous and not (head and all(_bound(old.tokens, key, head) for key in ambiguous)):
        return None  # two old values of one kind: which one changed nothing tells
    left = sorted({kind for kind, keys in old_values.items()
                   for key in keys if key not in said_anywhere and key not in gone_all and key not in historical})
    if _words_left(old, said_anywhere, old_values):
        left.append(WORDS_LEFT)
    return ClauseUpdate(old, new, tuple(changed), tuple(left))


# Words that say what kind of thing the name after them is ("Project Falcon", "Team Nova"):
# the name said alone ("Falcon's API p95 latency") says them too.
_NAME_HEADS = frozenset({"project", "team", "app", "operation", "program", "programme", "initiative"})


# Change verbs said as done: "Draft policy: increase the minimum length to 12" proposes.
_DONE_CHANGES = frozenset(verb for verb in CHANGE_VERBS if verb.endswith("ed")) | {"cut", "grew", "rose", "fell"}


def _object_words(new: Piece, statement) -> list:
    """The words of a change verb's object, up to "to" or "from" (tokens with keys)."""
    words = []
    for n, token in enumerate(new.tokens[statement.cue_at + 1:statement.values_from - 1]):
        if token.lower in ("from", "to"):
            break  # "switched from Spanish to Japanese": no object, the old value
        if n == 0 and token.lower in _PARTICLES:
            continue  # "was moved up to March 18", "pushed back to May 3": part of the verb
        if token.kind == "word" and token.keys:
            words.append(token)
    return words


def _doer_of_change(new: Piece, statement, sentence_keys: set[str]) -> bool:
    """Whether the words before a change verb name who made the change, and its object names the
    older attribute: "PyCon organizers cut my talk slot to 25 minutes" is of "My PyCon talk
    slot", "My doctor increased my lisinopril to 20 mg" of "My lisinopril dose is 10 mg";
    "Riverstone Bank moved its headquarters to Lyon" names no attribute of "a 31% discount for
    Riverstone Bank". Every word of the object is the older sentence's, and a plain noun among
    them: "cut the lightning talk slots to 5 minutes" is not of "My talk slot"."""
    object_words = _object_words(new, statement)
    return statement.cue.casefold() in CHANGE_VERBS and any(t.keys for t in new.tokens[:statement.cue_at]) \
        and any(not t.is_name for t in object_words) and {key for t in object_words for key in t.keys} <= sentence_keys


def _participle(new: Piece, statement) -> bool:
    """Whether the change is said by a clause in -ing that follows another: "..., increasing my
    annual salary to $80,000" (change_cues._a_participle), in this piece or before it."""
    return statement.cue.casefold().endswith("ing") and (statement.cue_at > 0 or new.first > 0)


def _after_another_event(old: Piece, new: Piece) -> bool:
    """Whether the newer clause is a clause in -ing whose event is of another thing than the
    older sentence's (`_event_of_another_thing`), however the older clause says its value: "I
    have now completed 6 variation of parameters problems, improving average accuracy to 91%"
    gives no accuracy of "7 second-order ODE problems, improving my average accuracy to 92%"."""
    tokens = new.tokens
    words = [t.lower for t in tokens]
    for n, word in enumerate(words):
        if not (word.endswith("ing") and after_a_clause(words, n)):
            continue
        statement = change_statement(tokens[n:])
        if statement is not None and statement.cue_at == 0 and statement.cue.casefold().endswith("ing") \
                and (new.first > 0 or any(t.keys for t in tokens[:n])):
            statement = replace(statement, cue_at=n, values_from=statement.values_from + n, values_to=statement.values_to + n)
            return _event_of_another_thing(new, statement, {key for t in tokenize(old.context or old.text) for key in t.keys})
    return False


def _event_of_another_thing(new: Piece, statement, sentence_keys: set[str]) -> bool:
    """Whether the event a clause in -ing follows is of a thing the older sentence does not say,
    so that what the clause changed is that thing's:

    - "its" or "their" of the thing the event names last: "Added Redis caching to the search
      API, reducing its p95 latency to 120ms" is the search API's, not the checkout API's;
    - a name in the event's subject: "The planned New Year's Eve dinner reservation was
      upgraded ..., increasing the cost to $150" is no cost of a candlelit dinner at home;
    - an event with a count of its own: "Recently, I completed 10 vector field problems,
      improving my average time to 15 minutes" is no time on Jacobian calculations.
    """
    context = new.context or new.text
    before = (*tokenize(context[:context.find(new.text)] if new.text in context else ""), *new.tokens[:statement.cue_at])
    words = [t for t in before if t.kind != "punct"]
    if any(t.lower in ("its", "their") for t in new.tokens[1:statement.values_from]):
        n = len(words)
        while n > 0 and words[n - 1].lower not in _NP_ENDS and words[n - 1].lower not in _DETERMINERS:
            n -= 1
        thing = {key for t in words[n:] for key in t.keys}
        if thing and not thing <= sentence_keys:
            return True
    verb = next((n for n, t in enumerate(words) if is_verb(t) or n == 0 and verb_like_opening(t)), len(words))
    if not {key for t in words[:verb] if t.is_name for key in t.keys} <= sentence_keys:
        return True
    if any(t.kind == "number" for t in words):
        said = {key for t in words if t.kind == "word" and not is_verb(t) and not (t is words[0] and verb_like_opening(t))
                and t.lower not in _ADVERBS for key in t.keys}
        return not said <= sentence_keys
    return False


def said_keys(tokens, older_tokens=()) -> set[str]:
    """The keys a clause says: its words', the period of a rate ("$500/month" says the month of
    "Monthly grocery budget"), and the kind word of an older name whose name it says ("Falcon's"
    says "Project Falcon"). Any other word of a name is its own ("Anna Lee" / "Anna Kim")."""
    said = {key for t in tokens for key in t.keys}
    said |= {key.rsplit("/", 1)[1] for key in said if "/" in key and key.rsplit("/", 1)[1].isalpha()}
    said |= {head.keys[0] for head, name in zip(older_tokens, older_tokens[1:])
             if head.is_name and head.lower in _NAME_HEADS and name.is_name and set(name.keys) & said}
    return said


def _another_count_of(old_tokens, before, old_text: str, new_text: str) -> bool:
    """Whether a count the newer clause says before its cue ("under 1,000 concurrent users")
    counts what a count of the older clause counts, with another number: the condition of the
    measure, which says it is another measure."""
    for token in before:
        if token.kind != "number" or not token.keys:
            continue
        unit = _unit_after(before, token.keys[0], new_text)
        if unit is None:
            continue
        for other in old_tokens:
            if other.kind == "number" and other.keys and other.keys[0] != token.keys[0] \
                    and _unit_after(old_tokens, other.keys[0], old_text) == unit:
                return True
    return False


def _count_the_same_thing(old: Piece, gone: set[str], new_units: set[frozenset[str]]) -> bool:
    """Whether every old value that changed counts a thing, not a unit of measure, that a new
    value counts too ("8 conditional probability problems" / "12 conditional probability
    problems"; not "48 kg" / "70 kg")."""
    units = [_unit_after(old.tokens, key, old.text) for key in gone]
    return bool(units) and all(unit is not None and not any(unit_of(word) for word in unit)
                               and any(unit & other for other in new_units) for unit in units)


# A ClauseUpdate's `left` kind for an older clause's own words that the newer clause does not
# say: what the older event did besides setting the value.
WORDS_LEFT = "words"


def _words_left(old: Piece, said: set[str], old_values: dict[str, Counter]) -> bool:
    """Whether the older clause says words besides its values and its opening verb that the
    newer clause does not: "Hired Maria as a part-time bookkeeper at 15 hours a week" / "Maria's
    hours were increased to 20 hours a week" replaces the hours; that she was hired as a
    part-time bookkeeper still holds, and superseding the older clause whole would hide it.
    "Set sprint deadline April 1" / "The sprint deadline was adjusted to April 5" leaves only
    the verb of setting it."""
    values = {key for keys in old_values.values() for key in keys}
    tokens = [t for t in old.tokens if t.keys]
    if old.first == 0 and tokens and tokens[0] is old.tokens[0] and verb_like_opening(tokens[0]):
        tokens = tokens[1:]
    return any(key not in said and key not in values for t in tokens for key in t.keys)


def names_another_subject(old: Piece, new: Piece) -> bool:
    """Whether the newer clause names a subject of its own, besides its values, none of whose
    words the older sentence says: "The guest list has grown to 28 attendees" is not of a
    funeral "with 50 attendees"; "The hotel rate ... was adjusted" is of "Booked hotel rooms
    ..."; in "Tom Ridley is the new office manager" the subject is the new value. Who made a
    change is no subject of it (`_doer_of_change`)."""
    subject = _subject_besides_values(new)
    if not subject:
        return False
    sentence_keys = {key for t in tokenize(old.context or old.text) for key in t.keys}
    statement = change_statement(new.tokens)
    if statement is not None and statement.cue.casefold() in _DONE_CHANGES and _doer_of_change(new, statement, sentence_keys):
        return False  # "The landlord raised my rent to ...": who changed it, not what changed
    return not subject & sentence_keys


def _subject_besides_values(piece: Piece) -> frozenset[str]:
    """The keys of a clause's own subject that are none of its values."""
    values = {key for keys in values_of(piece.tokens, piece.first == 0).values() for key in keys}
    return own_subject(piece.tokens) - values


def _state_after_setting(old: Piece, new: Piece) -> ClauseUpdate | None:
    """A value an older event set, and the value a newer clause says it has now: "increased
    maxmemory to 512MB" is outdated by "The Redis cache now has a maxmemory setting of 1GB" when

    - the older clause says a change verb, the attribute it set ("maxmemory"; "my budget
      ceiling"; the words before the cue when none follow it) and one value of one kind after
      "to";
    - the newer clause says that something changed ("now", or a change verb), names the
      attribute, and gives it one other value of that kind, after it and within three words
      ("maxmemory setting of 1GB"; not "300MB of its maxmemory": what is used of a limit);
    - the newer clause's subject and names are the older sentence's ("the catering budget" is
      not "the budget"), and so are its value words ("the production cache" is not "the staging
      cache") and the words before the attribute ("my graphing quiz score");
    - the older value is no goal ("aiming to increase to 7 hours": `_a_goal`).
    """
    statement = change_statement(old.tokens)
    if statement is None or not shape(new).cued or _a_goal(old.tokens, new.tokens):
        return None
    set_values = values_of(old.tokens[statement.values_from:statement.values_to])
    if len(set_values) != 1:
        return None
    (kind, keys), = set_values.items()
    if not kind.startswith("number") or len(keys) != 1:
        return None
    (old_value,) = keys
    attribute = _attribute_head(old.tokens[statement.cue_at + 1:statement.values_from]) \
        or _attribute_head(old.tokens[:statement.cue_at])
    new_values = values_of(new.tokens, new.first == 0)
    if not attribute or not attribute <= new.keys or len(new_values.get(kind, ())) != 1:
        return None
    (new_value,) = new_values[kind]
    if new_value == old_value or old_value in new.keys:
        return None
    if any(new_value in new.tokens[n].keys for n in change_amounts(new.tokens)):
        return None  # "reducing latency by 25ms" says by how much, no latency "to 50ms" had
    sentence_keys = {key for t in tokenize(old.context or old.text) for key in t.keys}
    if _another_modifier(old.tokens, new.tokens, attribute) or not _modifiers(new.tokens, attribute) <= sentence_keys:
        return None  # "my graphing quiz score" is not "my quiz score ... on conic section properties"
    if not _attribute_head(new.tokens[:subject_end(new.tokens)]) <= sentence_keys:
        return None  # "The catering budget is now $500" is not the budget raised to $3,000
    old_values = values_of(old.tokens, old.first == 0)
    for other, other_keys in new_values.items():
        if other in _NAMING_KINDS and not set(other_keys) <= sentence_keys:
            return None  # the newer one names another thing
        if other not in _NAMING_KINDS and not other.startswith("number") \
                and other in old_values and not set(other_keys) & set(old_values[other]):
            return None
    if not _after_attribute(new.tokens, new_value, attribute):
        return None
    counts = _unit_after(new.tokens, new_value, new.text)
    if counts is not None and not counts & (_unit_after(old.tokens, old_value, old.text) or frozenset()):
        return None  # "now includes 4 vegetarian guests" counts some of the list, not the list
    said = {key for t in new.tokens for key in t.keys}
    left = sorted({other for other, other_keys in old_values.items() if other != kind
                   for key in other_keys if key not in said})
    return ClauseUpdate(old, new, (f"{kind} {old_value!r} -> {new_value!r}",), tuple(left))


# Words that make a value a goal: "Targeting API response time under 300ms" stays the target
# when "The average API response time is now 180ms".
_GOAL_WORDS = frozenset("target targets targeting targeted aim aims aiming goal goals objective".split())


def _a_goal(old_tokens, new_tokens) -> bool:
    """Whether the older clause states a goal and the newer one speaks of no goal: an actual
    value does not replace a target ("The response time target is now 250ms" does)."""
    def says_goal(tokens):
        return any(t.lower in _GOAL_WORDS for t in tokens)
    return says_goal(old_tokens) and not says_goal(new_tokens)


def _modifier(tokens, head: frozenset[str]) -> frozenset[str] | None:
    """The keys of the plain word right before the first word of `head` in `tokens` ("homework"
    of "Scott's homework completion rate"), or None (no such word: a name, a number, nothing)."""
    for n, token in enumerate(tokens):
        if set(token.keys) & head:
            before = tokens[n - 1] if n else None
            if before is None or before.kind != "word" or not before.keys or before.is_name \
                    or set(before.keys) & head or before.text.endswith(("'s", "’s")):
                return None
            return frozenset(before.keys)
    return None


def _modifiers(tokens, head: frozenset[str]) -> frozenset[str]:
    """The keys of the plain words right before the first word of `head` ("graphing" of "my
    graphing quiz score"), back to the first word that is not one."""
    for n, token in enumerate(tokens):
        if set(token.keys) & head:
            run: set[str] = set()
            for before in reversed(tokens[:n]):
                if before.kind != "word" or not before.keys or is_verb(before):
                    break
                run.update(before.keys)
            return frozenset(run)
    return frozenset()


def _another_modifier(old_tokens, new_tokens, head: frozenset[str]) -> bool:
    """Whether the two clauses put another plain word before the same attribute: "Scott's chore
    completion rate" is not "Scott's homework completion rate", though the head of both is
    "completion rate". A word on one side only ("unit test coverage" / "65% test coverage") is
    no other thing."""
    if not head:
        return False
    old, new = _modifier(old_tokens, head), _modifier(new_tokens, head)
    return old is not None and new is not None and old != new


def _after_attribute(tokens, key: str, attribute: frozenset[str], reach: int = 3) -> bool:
    """Whether the value `key` follows a word of the attribute within `reach` words."""
    for n, token in enumerate(tokens):
        if key in token.keys:
            return any(set(t.keys) & attribute for t in tokens[max(0, n - reach):n])
    return False


_DETERMINERS = frozenset("the a an my our your his her their its this that these those".split())
_PERSONS = frozenset("i we you he she they".split())
_NP_ENDS = frozenset("with for of in on at to from by into about after before during under over".split())
# Adverbs that end an attribute's noun phrase: "The appointment originally scheduled for ...".
_ADVERBS = frozenset("""originally initially previously currently recently already just now also further
still finally eventually officially temporarily""".split())
# Right after a change verb, a word of the verb: "moved up to", "pushed back to", "scaled down to".
_PARTICLES = frozenset("up down back forward ahead out".split())
# Verbs whose "up" or "down" says a value changed: "went up to", "came down to".
_GO_WORDS = frozenset("go goes going gone went come comes coming came".split())


def _attribute_head(tokens) -> frozenset[str]:
    """The keys of the head noun of the words before a change cue: "The scheduled Zoom meeting
    with Professor Danielle" -> meeting; "The number of commits merged into ..." -> commits;
    "The API key's daily quota" -> quota. Empty when they name nothing ("I recently")."""
    return frozenset(key for t in _attribute_phrase(tokens) for key in t.keys)


def _another_attribute(old: Piece, attribute_tokens, phrase: tuple, old_sentence, sentence_keys: set[str]) -> bool:
    """Whether the words the newer clause names its attribute with (`attribute_tokens`, up to its
    new value; `phrase`: the attribute's noun and the word before it) make it another attribute
    than the older clause's: another plain word before the same noun, in the older clause or
    its sentence, or kind words an older sentence of several clauses never says."""
    head = frozenset(key for t in phrase for key in t.keys)
    return _another_modifier(old.tokens, attribute_tokens, head) \
        or _another_word_before_the_noun(old_sentence, phrase, sentence_keys) \
        or len(text_clauses(old.context or old.text)[0].clauses) > 1 \
        and _kind_never_said(attribute_tokens, head, sentence_keys)


def _kind_never_said(new_tokens, head: frozenset[str], sentence_keys: set[str]) -> bool:
    """Whether the newer clause names the attribute with plain words before it, none of which
    the older sentence says: "my strong induction quiz score increased to 96%" is no new score
    of "Improved understanding of divisibility properties, quiz score rose from 70% to 85%",
    whose other clause says what the score was of. (Asked only of an older sentence of more than
    one clause: "Squat max is 100 kg" / "Increased back squat max to 110 kg" says more of one.)"""
    kinds = {key for key in _modifiers(new_tokens, head) if key not in _GENERIC_ATTRIBUTE} - head
    return bool(kinds) and not kinds & sentence_keys


# Which-value words that still say which thing: "the evening dose" is not "the morning dose".
_TIMES_OF_DAY = frozenset("morning afternoon evening night nightly weekday weekend".split())


def _another_word_before_the_noun(old_tokens, phrase: tuple, sentence_keys: set[str]) -> bool:
    """Whether the newer clause puts a word the older sentence never says before the noun of the
    attribute, and the older sentence puts another plain word before it: "Increased deadlift max
    to 70 kg" is not "nearing pre-injury max" of the bench press. "The Lambda function memory"
    may be the "Lambda memory" (no plain word before it)."""
    if len(phrase) != 2 or set(phrase[0].keys) & sentence_keys \
            or which_value(phrase[0]) and phrase[0].lower not in _TIMES_OF_DAY:
        return False  # "The API key's daily quota" is the "1,000 calls/day quota"; not "evening dose"
    noun = set(phrase[1].keys)
    at = next((n for n, token in enumerate(old_tokens) if set(token.keys) & noun), None)
    if not at:
        return False
    before = old_tokens[at - 1]  # a capital that opens the sentence is its first word, no name
    if which_value(before) or before.lower in _TIMES_OF_DAY:
        # "Morning weight is 82 kg" / "Reduced body weight to 80 kg": when it is weighed, not
        # which weight; "the evening dose" is still not "the morning dose".
        return phrase[0].lower in _TIMES_OF_DAY
    return before.kind == "word" and bool(before.keys) and (not before.is_name or at == 1) \
        and not is_verb(before) and not before.text.endswith(("'s", "’s")) and not set(before.keys) & set(phrase[0].keys)


def _attribute_phrase(tokens) -> tuple:
    """The head noun of the words before a change cue and the word before it (tokens; see
    _attribute_head)."""
    words = [t for t in tokens if t.kind != "punct"]
    if words and words[0].lower in _PERSONS:
        return ()  # "I recently adjusted my budget ceiling ...": a doer, no attribute
    # "Got Kite's bundle down to 310KB": the note's own verb opens it; the attribute follows.
    n = 1 if words and not words[0].lower.endswith("ing") and verb_like_opening(words[0]) else 0
    while n < len(words) and words[n].lower in _DETERMINERS:
        n += 1
    phrase = []
    while n < len(words) and words[n].lower not in _NP_ENDS and words[n].lower not in _ADVERBS \
            and not is_verb(words[n]) \
            and not (phrase and words[n].kind == "word" and words[n].lower.endswith(("ed", "ing")) and not words[n].is_name):
        phrase.append(words[n])
        n += 1
    content = [t for t in phrase if t.keys and t.kind == "word"]
    if content and content[-1].keys[-1] in _GENERIC_ATTRIBUTE and n < len(words) and words[n].lower == "of":
        return _attribute_phrase(words[n + 1:])
    # The head and the word before it: "the bounce rate" is not "the pass rate".
    return tuple(content[-2:])


# Words that give what follows as an example of a kind ("models like DistilGPT-2", "such as").
_EXAMPLE_WORDS = frozenset({"like", "including", "e.g", "e.g.", "eg"})


def _an_example(tokens, key: str) -> bool:
    """Whether the value `key` is given as an example ("I prefer lightweight models like
    DistilGPT-2", "tools such as Jest"): an upgrade to GPT-2 large replaces no preference."""
    for n, token in enumerate(tokens):
        if key in token.keys:
            before = [t.lower for t in tokens[max(0, n - 2):n]]
            return bool(before) and (before[-1] in _EXAMPLE_WORDS or before == ["such", "as"])
    return False


def _state_of_count(tokens, key: str) -> frozenset[str]:
    """The participle that says which of the things the value `key` counts: "labeled" of "2
    million rows labeled", "passing" of "840 tests passing", "gzipped" of "480KB gzipped"."""
    for n, token in enumerate(tokens):
        if key not in token.keys:
            continue
        for m in range(n + 1, min(len(tokens), n + 5)):
            following = tokens[m]
            if following.kind != "word" or following.is_name:
                return frozenset()
            if following.lower.endswith(("ed", "ing")) and len(following.lower) > 4:
                after = tokens[m + 1] if m + 1 < len(tokens) else None
                if after is not None and (after.kind == "number" or after.is_name or after.lower in _DETERMINERS):
                    return frozenset()  # "8 cards using Bootstrap": a verb with its own object
                return frozenset(following.keys)
        return frozenset()
    return frozenset()


def _unit_after(tokens, key: str, text: str = "") -> frozenset[str] | None:
    """What the value `key` counts: the last noun of the words right after it ("10 cards" ->
    card, "4 interview prep sessions" -> session, "5 mentees' stories" -> mentee, "1,000
    calls/day quota" -> quota), if any, with the word before it."""
    run = _unit_run(tokens, key, text)
    return frozenset(run[-2:]) if run else None


def _unit_run(tokens, key: str, text: str = "") -> list[str]:
    """The roots of the plain words right after the value `key` (see _unit_after)."""
    for n, token in enumerate(tokens):
        if key not in token.keys:
            continue
        run: list[str] = []
        for following in tokens[n + 1:n + 5]:
            if following.kind != "word" or not following.keys or following.is_name or following.lower in CLOCK \
                    or is_verb(following) or value_class(following.lower, following.keys[0]) is not None:
                break
            run.append(root(following.lower.split("/")[0]))
            if following.text.endswith(("'s", "’s")) or f"{following.text}'" in text or f"{following.text}’" in text:
                break  # "5 mentees' success stories" counts mentees
        return run
    return []


def stands_alone(piece: Piece) -> bool:
    """Whether a clause says what it is about on its own: it opens its sentence or has a subject
    of its own ("and the US cluster has 12 nodes"), unlike "4 correct" or "and Canadian markets"."""
    return piece.first == 0 or bool(own_subject(piece.tokens))


def _bound(tokens, key: str, attribute: set[str], reach: int = 3) -> bool:
    """Whether the value `key` stands within `reach` words of a word of the attribute."""
    for n, token in enumerate(tokens):
        if key in token.keys:
            near = tokens[max(0, n - reach):n + reach + 1]
            if any(set(t.keys) & attribute for t in near):
                return True
    return False


def _look_alike(old: Piece, newer: Sequence[Piece]) -> bool:
    """Whether a clause of the newer text says the same kind of thing of another thing, or
    another attribute of the same thing, with other values: "Ticket SUP-3301 is about a failed
    password reset." / "Ticket SUP-3302 is about ...", "The contract start date is 2025-04-01." /
    "The contract end date is 2027-03-31.", "Dana owns billing." / "Dana owns search.". Two such
    memories are neither one fact nor an update: merging them would say two values side by side."""
    old_shape = shape(old)
    for new in newer:
        new_shape = shape(new)
        shared = old_shape.identity & new_shape.identity
        apart = old_shape.identity ^ new_shape.identity
        if shared and other_persons(old.tokens, new.tokens) and value_changes(old_shape, new_shape)[0]:
            return True  # two persons' values: "Currently he works 40 hours" / "... she works 32 hours"
        if not shared or len(apart) > 2 or 2 * len(shared) < min(len(old_shape.identity), len(new_shape.identity)):
            continue
        # Another thing: a name or code of the subject on each side that the other lacks
        # ("Invoice INV-5521" / "Invoice INV-5522").
        if ((old_shape.identity - new_shape.identity) & {v for _, v in old_shape.subject}
                and (new_shape.identity - old_shape.identity) & {v for _, v in new_shape.subject}):
            return True
        changed = [change for change in value_changes(old_shape, new_shape)[0] if change != "polarity"]
        if changed and len(shared) >= 2:
            return True  # another attribute of the same thing, with another value
        if object_swap(old_shape, new_shape):
            return True  # another object of the same verb: "owns billing" / "owns search"
    return False


def text_claims(text: str) -> list[Piece]:
    """The claims of a text (see _claims) that say something (have content words)."""
    return [c for s in text_clauses(text) for c in _claims(s) if c.keys]


def _claims(sentence) -> list[Piece]:
    """The clauses of an older sentence as claims: a clause of values only that continues a list
    of the clause before it ("on Mondays" + "and Wednesdays") belongs to it; one that says
    something else of it ("... at 02:00 UTC" + "and is deprecated") is a claim of its own."""
    claims: list[tuple[int, int]] = []
    clauses = sentence.clauses
    for n, clause in enumerate(clauses):
        here = shape(clause)
        if claims and not here.frame and set(here.values) & set(shape(sentence.piece(*claims[-1])).values):
            claims[-1] = (claims[-1][0], n)
        elif claims and here.values and not here.frame and claims[-1][1] == n - 1 \
                and ":" in sentence.text[sentence.spans[n - 1][1]:sentence.spans[n][0]]:
            claims[-1] = (claims[-1][0], n)  # "100m personal best: 12.8s": a label and its value
        elif claims and here.values and _opening_word(clause) in _WHEN_WORDS and not own_subject(clause.tokens):
            claims[-1] = (claims[-1][0], n)  # "is available for calls" + "until 17:00 Lisbon time": one claim
        elif claims and claims[-1] == (0, 0) and n == 1 and _bare_names(clauses[0]):
            claims[-1] = (0, n)  # "Carla" + "and I planned ...": one subject
        else:
            claims.append((n, n))
    return [sentence.piece(first, last) for first, last in claims]


# A clause opening with one of these says when the clause before it holds: with a value, it is
# part of that claim ("until 17:00" is the time the availability ends, not a claim of its own).
_WHEN_WORDS = frozenset("until till after before since".split())


def _opening_word(clause: Piece) -> str:
    return next((t.lower for t in clause.tokens if t.kind != "punct"), "")


def _bare_names(clause: Piece) -> bool:
    """A clause of names only, which is the subject of the clause after it ("Carla and I ...")."""
    words = [t for t in clause.tokens if t.keys]
    return bool(words) and all(t.is_name for t in words) and len(words) <= 3


def says_two_values(text: str) -> bool:
    """Whether two sentences of one text give the same kind of statement about the same thing
    with different values (a text of earlier merges, "A [merged: A']"): which of its values is
    the older nothing tells, so such a text is never judged an update, nor updated; and a merge
    whose text would do so does not happen."""
    claims = [(s.index, shape(c)) for s in text_clauses(text) for c in _claims(s) if c.keys]
    return any(first[0] != second[0] and first[1].identity and first[1].identity == second[1].identity
               and value_changes(first[1], second[1])[0]
               for n, first in enumerate(claims) for second in claims[n + 1:])


def _too_long(text: str) -> bool:
    return sum(len(s.bounds) for s in text_clauses(text)) > MAX_CLAUSES_COMPARED


def compare_versions(older: str, newer: str, semantic: Semantic | None = None) -> VersionCheck:
    """Whether `newer` (the later memory) updates `older` (see the module docstring). Two turns of
    one speaker are compared without their label (two speakers' are never compared: step 2)."""
    written = newer  # as the agent wrote it, the speaker's label included: what carrying extends
    # Compared without who says it and whom it addresses ("Wow, Caroline!"), without "Update:"
    # and the values the newer one names as old.
    older = without_vocative(without_speaker(older))
    newer = without_vocative(without_speaker(newer))
    corrected = as_compared(newer) != newer  # "Correction: ...", "(previously X)": it says it changed
    newer = as_compared(newer)
    if _too_long(older) or _too_long(newer):
        # Clause by clause, two long lists cost the product of their clauses (two 8.7 KB comma
        # lists took two minutes): such a pair is not judged an update, and says why.
        return VersionCheck(NONE, too_long=True)
    newer_sentences = text_clauses(newer)
    newer_pieces = [p for s in newer_sentences for p in s.pieces()]
    older_sentences = text_clauses(older)
    older_clauses = [c for s in older_sentences for c in _claims(s) if c.keys]
    said = KeptText(newer_sentences)
    # A clause the newer text says in its own words is restated, not updated.
    restated = {n: said.cover(clause, lexical_only=True) for n, clause in enumerate(older_clauses)}
    older_shapes = [shape(clause) for clause in older_clauses]
    found = {n: None if restated[n].covered else _update_of(clause, newer_pieces, corrected)
                or _item_update(older_clauses, older_shapes, n, newer_pieces, corrected)
             for n, clause in enumerate(older_clauses)}
    updates = tuple(update for update in found.values() if update is not None)
    if updates and (says_two_values(older) or says_two_values(newer)):
        return VersionCheck(LOOK_ALIKE)
    changes = [change for update in updates for change in update.changed]
    if updates and _unsure(changes, cued=all(shape(u.new).cued for u in updates) and (
            _kinds(changes) <= _ONE_MOMENT or all(_measured_when(u) for u in updates))):
        # A name or code changed with other values across the clauses: another thing described
        # alike ("sweep exp-7598 ... 72 hours" / "sweep exp-7139 ... 24 hours"); or two kinds of
        # value at once, unless a date and a time said to have moved ("The gym now opens at 8:00
        # on weekends" is another day's time, not a new one).
        return VersionCheck(LOOK_ALIKE)
    unsaid = [clause for n, clause in enumerate(older_clauses) if found[n] is None and not restated[n].covered]
    if any(_look_alike(clause, newer_pieces) for clause in unsaid):
        # Some clause says the same kind of thing as a newer one of another thing, attribute or
        # object: values moved between subjects ("Dana owns billing, and Sam owns search." /
        # "Dana owns search, and Sam owns billing.") are no restatement, and no sure update.
        return VersionCheck(LOOK_ALIKE)
    if not updates:
        return VersionCheck(NONE)  # most pairs: no frame in common, nothing more to compare
    # A changed value is never "restated", however alike the two clauses sound; an updated
    # clause with a value the newer one does not state is left, and so is a clause neither
    # said nor updated: the newer memory carries it (carry.py) where it safely can, else the
    # update is partial.
    kept = KeptText(newer_sentences, semantic)
    said_by = {n: restated[n].by for n in restated if restated[n].covered}
    rest = [n for n in found if found[n] is None and not restated[n].covered]
    for n, covered in zip(rest, kept.cover_all([older_clauses[n] for n in rest])):
        if covered.covered:
            said_by[n] = covered.by
    entangled = tuple(update.old for update in updates if _entangles(update, set(update.left)))
    left = [n for n in rest if n not in said_by]
    hosts = {n: found[n].new if found[n] is not None else said_by.get(n) for n in range(len(older_clauses))}
    replaced = {n: (update.old, update.new) for n, update in found.items() if update is not None}
    carried = carried_clauses(older_clauses, left, hosts, updated=set(replaced))
    listed = items_carried(older_sentences, older_clauses, replaced, set(said_by), written, newer_pieces)
    if listed is not None and not any(asks(older_clauses[n]) for n in left):
        # Each replaced value was an item of the older note's list: the rest of the note goes
        # as it was written, with its dates where they were.
        return VersionCheck(UPDATE, updates, (), carried=listed, carried_text=carry_into(written, listed))
    if entangled and not any(asks(older_clauses[n]) for n in left):
        # An update of part of a one-sentence memory: the newer one carries the sentence without
        # the phrases of its replaced values (value_cut.py), if each can be cut cleanly.
        sentence = rest_carried(older_sentences, older_clauses, replaced, set(said_by), written, newer_pieces)
        if sentence is not None:
            return VersionCheck(UPDATE, updates, (), carried=sentence, carried_text=carry_into(written, sentence))
        # Words of an event the sentence cannot be cut around were never carried ("I secured 3
        # interviews for executive producer roles" / "The number of interviews secured increased
        # to 5"): the clause is updated as a whole, as before words were weighed.
        entangled = tuple(update.old for update in updates if _entangles(update, set(update.left) - {WORDS_LEFT}))
    if entangled or carried is None or any(asks(older_clauses[n]) for n in left) \
            or _carries_a_rival(carried, newer_pieces):
        # A question is never carried: written into the newer memory it would read as a statement.
        return VersionCheck(PARTIAL, updates, entangled + tuple(older_clauses[n] for n in left))
    return VersionCheck(UPDATE, updates, (), carried=carried,
                        carried_text=carry_into(written, carried) if carried else None)


# Words that open a continuation of a clause, not a statement of its own: "at 2:00 PM ...".
_CONTINUING = frozenset("at on in by for from to until".split())
# Kinds of value that measure one attribute ("87% accuracy", "$40 a seat", "at 09:00"): a carried
# clause with one of them beside a newer clause with another of the same thing says two values.
_RIVAL_KINDS = frozenset({"number:percent", "number:money", "number:time"}
                         | {f"number:{dimension}" for dimension in DIMENSIONS})  # "18GB free" / "26GB free"


def _entangles(update: ClauseUpdate, left: set[str]) -> bool:
    """Whether an update leaves `left` (kinds of value, WORDS_LEFT) of its older clause unsaid.
    The date an outdated measure was taken at is when it held, not a fact left unsaid."""
    return bool(left) and not (_measured_when(update) and left <= _DATE_KINDS)


def _carries_a_rival(carried: Sequence[Carried] | None, newer_pieces: Sequence[Piece]) -> bool:
    """Whether a carried statement gives a share, amount or time of a thing a newer clause
    gives another one of (a frame word in common): "Achieved 13 correct, 87% accuracy." carried
    into "... completed 25 problems with an accuracy exceeding 90%." would say two accuracies."""
    news = [shape(p) for p in newer_pieces if p.keys]
    for item in carried or ():
        pieces = [p for s in text_clauses(item.text) for p in s.pieces() if p.keys]
        # A carried fragment with no frame word at all ("at 2:00 PM at the clinic") says when
        # the newer memory's event is; "Lunch with Priya at 12:30 PM" says when lunch is.
        words = [t for t in tokenize(item.text) if t.kind == "word"]
        fragment = bool(words) and words[0].lower in _CONTINUING and not any(shape(p).frame for p in pieces)
        for piece in pieces:
            old = shape(piece)
            for new in news:
                rivals = _RIVAL_KINDS & set(old.values) & set(new.values)
                # A value the newer clause says too is no rival ("over the 7-day monitoring
                # period" carried beside "... improved to 110ms over the 7-day monitoring period").
                if any(old.values[kind] - new.values[kind] and new.values[kind] - old.values[kind] for kind in rivals) \
                        and (old.frame & new.frame or fragment):
                    return True
                if old.frame and old.frame == new.frame and "number" in old.values and "number" in new.values \
                        and old.values["number"] != new.values["number"]:
                    return True  # "and 12 networking hours weekly" beside "and 18 networking hours weekly"
    return False


def rest_carried(sentences, claims: Sequence[Piece], replaced: dict[int, tuple[Piece, Piece]], said: set[int],
                 newer: str, newer_pieces: Sequence[Piece], *, judged: bool = False) -> tuple[Carried] | None:
    """What the newer memory carries of an older one it updates in part: the older memory's one
    sentence without the phrases of the values its updated claims replaced (`replaced`: claim
    index -> (older piece, newer piece)); None when it has more sentences, when the newer memory
    restates a claim (`said`: carried, it would be said twice), when a phrase cannot be cut
    cleanly (value_cut.py; `judged`: a judge said "update", and a value before its noun may be
    cut too), or when the newer memory with it would say two values of one thing."""
    return _carried_without(sentences, claims, replaced, said, newer, newer_pieces,
                            lambda rest, claim, gone, named: without_value(rest, claim, gone, named, modifiers=judged))


def items_carried(sentences, claims: Sequence[Piece], replaced: dict[int, tuple[Piece, Piece]], said: set[int],
                  newer: str, newer_pieces: Sequence[Piece]) -> tuple[Carried] | None:
    """What the newer memory carries of an older note whose replaced values each stand alone as
    an item of its list (value_cut.without_item): the note without those items ("Finished the
    first draft of the thesis, 14,200 words, on March 3." / "The thesis draft has grown to
    15,100 words." carries "Finished the first draft of the thesis, on March 3."), so that the
    rest stays said as the older memory said it, and "on March 3" dates what it dated, not the
    new count. None when some replaced value is no such item (see rest_carried for the rest)."""
    return _carried_without(sentences, claims, replaced, said, newer, newer_pieces, without_item)


def _carried_without(sentences, claims, replaced, said, newer, newer_pieces, cut) -> tuple[Carried] | None:
    """The one older sentence with each replaced claim's replaced values cut by `cut`, as a
    carried statement; None as rest_carried says."""
    if len(sentences) != 1 or said or not replaced:
        return None
    rest = sentences[0].text
    for n, claim in enumerate(claims):
        if n not in replaced:
            continue
        old, new = (shape(piece) for piece in replaced[n])
        came = [kind for kind in set(old.values) & set(new.values) if new.values[kind] - old.values[kind]]
        gone = {value for kind in came for value in old.values[kind] - new.values[kind]}  # replaced, not only dropped
        if not gone and names_the_plan(replaced[n][1].tokens):
            # The newer clause names the planned value beside the one it was done at ("The MOT
            # test booked for March 4 was done on March 2"): the planned one is gone.
            gone = {value for kind in came for value in old.values[kind]}
        named = {key for token in replaced[n][1].tokens for key in token.keys}
        rest = cut(rest, claim, gone, named) if rest is not None else None
    if not rest or not any(t.keys for t in tokenize(rest)):
        return None
    sentence = (Carried(as_sentence(rest)),)
    if says_two_values(carry_into(newer, sentence)) or _carries_a_rival(sentence, newer_pieces):
        return None
    return sentence


def asks(clause: Piece) -> bool:
    """Whether a clause is of a question: never carried, written into a newer memory it would
    read as a statement."""
    return (clause.context or clause.text).rstrip().endswith("?")


def clauses_an_update_would_hide(older: str, newer: str, semantic: Semantic | None = None) -> list[Piece]:
    """The clauses of `older` that superseding it by `newer` would hide: those `newer` neither
    says (coverage) nor gives another value for (a clause of it shares half of the claim's
    frame and differs in a value, the polarity or its last words): what current memory would no
    longer say ("... and it must never run during the audit" is no part of "The nightly ETL job
    now runs at 02:00."). The tests' and benchmarks' measure of a hidden clause."""
    older_claims = [c for s in text_clauses(older) for c in _claims(s) if c.keys]
    newer_sentences = text_clauses(newer)
    news = [shape(p) for s in newer_sentences for p in s.pieces() if p.keys]
    unsaid = [c.clause for c in KeptText(newer_sentences, semantic).cover_all(older_claims) if not c.covered]
    hidden = []
    for claim in unsaid:
        old = shape(claim)
        answered = any(
            2 * len(old.frame & new.frame) >= min(len(old.frame), len(new.frame)) > 0
            and (value_changes(old, new)[0] or object_swap(old, new) or (old.tail and old.tail != new.tail))
            and not values_left(old, new)
            for new in news)
        if not answered:
            hidden.append(claim)
    return hidden


def still_supersedes(older: str, successor: str, made: dict) -> bool:
    """Whether a supersession still holds now that its successor reads `successor` (see
    store/supersessions.py for when this is asked). It holds while the successor still says
    what made it current: each newer clause the update was found in (`changes`, offline), or the
    successor's text as the judge read it; a supersession with neither recorded holds while the
    words still find the update."""
    said = KeptText.of([successor])
    recorded = [change.get("new") for change in made.get("changes") or [] if change.get("new")]
    if not recorded and made.get("successor_text"):
        recorded = [made["successor_text"]]
    if recorded:
        return not uncovered(recorded, said, lexical_only=True)
    return compare_versions(older, successor).verdict == UPDATE

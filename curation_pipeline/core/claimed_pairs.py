"""An aligned answer's claims, verified one by one: "input clause 3 is said as <these words>". Pure.

A merge or summary request numbers the clauses of its inputs (clauses.py) and the answer says,
for each, the words of its text that say it (`said_as`), or null where a summary leaves the
clause out. Coverage (coverage.py) has to *search* for what says a clause, so it can only find
wordings close to the input's: an active sentence for a passive one, "pays in EUR" for "is
billed in EUR", "is closed" for "does not open" are out of its reach. Here the model shows its
work and the guard only *checks* what it claims, which is a smaller and stricter question:

- the claimed words occur in the answer verbatim;
- they say the clause's facts (names, numbers, dates, codes, case included, as many times as
  the clause says them: fact_tokens.py), its value words (value_words.py), its negation,
  modality, quantifiers and comparisons (meaning_markers.py: the same classes, none more, none
  fewer; a marker of the clause's sentence may reach over it), its antonym sides, none
  reversed, and its names in their roles (name_roles.py); a "not" on one side of a two-state
  pair reads as the other side ("does not open" is "is closed", "is not allowed" is
  "is forbidden"), for those pairs only (`_TWO_STATES`: "does not increase" is not "decreases"),
  and "does not like" as the verb that carries its negation ("dislikes": `_NEGATED_VERBS`);
  a few wordings are read as one by closed rules: "every two weeks" is "fortnightly"
  (`_PERIOD_PHRASES`), "is paid by X" is "X pays" (`_PASSIVE_OF`, the agent first:
  name_roles.agent_swaps), "can be called on" has no modal (`_CONTACT_PARTICIPLES`), "is open
  until 18:00" is "closes at 18:00" (`_UNTIL_PAIR`);
- they say it *about the same thing*: the clause's last words (its object or the value it
  states, subjects.tail_keys) are among them, and the two share a content word that is no name,
  or the embedder finds them at least as alike as the floor for claimed pairs (`claimed_floor`:
  lower than coverage's search threshold, as every word check already holds);
- the claims account for the whole answer: every clause of it lies in some claim, so it adds
  nothing; the claims over one stretch of the answer (a *group*) together have every fact,
  value word and antonym side the stretch has, and its words that no claimer's sentence has are
  plain common words (no name, number, code or value word) that some input has, so one clause
  cannot hide another that adds a fact and no word is swapped for one of the model's own
  ("approves refunds" for "approves invoices"); and each input clause is claimed once (a merge says it once: the guard
  also refuses a merge whose text repeats a clause, coverage.restated_within).

Whatever fails refuses the answer with a reason that names the pair. The checks read only the
two stretches of words of each pair, so a false claim is refused however plausible the answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from curation_pipeline.core.clauses import Piece, sentence_clauses, text_clauses
from curation_pipeline.core.coverage import Semantic
from curation_pipeline.core.fact_tokens import extract_facts, occurrences
from curation_pipeline.core.meaning_markers import (
    ANTONYM,
    COMPARISON,
    MARKER_WORDS,
    MODALITY,
    NEGATION,
    QUANTIFIER,
    Marker,
    find_markers,
    opposite,
)
from curation_pipeline.core.name_roles import agent_swaps, role_swaps
from curation_pipeline.core.sentence_alignment import Sentence
from curation_pipeline.core.sentence_tokens import Token, content_keys, root, tokenize
from curation_pipeline.core.subjects import tail_keys
from curation_pipeline.core.text import clip
from curation_pipeline.core.value_words import value_class, value_keys

# The embedder's floor for a claimed pair that shares no content word but names: this far below
# its calibrated search threshold (coverage.SEMANTIC_THRESHOLDS; 0.60 for all-MiniLM-L6-v2).
# Every word check above holds already, so the floor only tells a rewording from an unrelated
# stretch; `python benchmarks/fact_guard.py --embedder all-MiniLM-L6-v2` prints how alike the
# claimed pairs of both kinds are.
CLAIMED_FLOOR_BELOW_SEARCH = 0.2
# Antonym pairs with two states and nothing between: "not <one side>" says the other side.
_TWO_STATES = frozenset({"allow", "open", "enable", "online", "valid", "available", "supported", "required",
                         "paid", "connected", "lock", "encrypt", "true", "include", "switched"})
# Verbs that carry their own negation: "dislikes" says "does not like" (its root -> the verb
# it negates). Both read as the side "not like", which no other word has: "hates"
# (stronger) and "does not love" (weaker) are not it.
_NEGATED_VERBS = {root("dislike"): "like"}
_NEGATABLE = {root(verb): verb for verb in _NEGATED_VERBS.values()}
# Participles of two-state words that are also a verb's passive: "is paid by Greyfield Farms"
# is the action "Greyfield Farms pays", not the state "paid" (vs "unpaid"). Followed by "by",
# the participle reads as the verb's side, which a form of the verb says ("pay", "pays",
# "paying"; not "payment"); the names' roles are checked as for any passive (name_roles.py).
_PASSIVE_OF = {"paid": "pay"}
_ACTIVE_FORMS = {form: verb for verb in _PASSIVE_OF.values() for form in (verb, verb + "s", verb + "ing")}
# "can be reached at <number>" gives a way to reach someone, not a permission: its "can" is no
# modal, so "Deepa Shah's direct line is ..." says it. Only "can"/"could" followed by "be" and
# one of these participles; "cannot be reached" keeps its negation.
_CONTACT_PARTICIPLES = frozenset("reached called contacted phoned emailed e-mailed texted paged messaged".split())
# "is open until 18:00" says "closes at 18:00" (and "is closed until 09:00" "opens at 09:00"):
# the state up to a time is the other side's change at that time. Only the pair "open" (a
# place's hours), and only with "until" right after the state word and a time right after it.
_UNTIL_PAIR = "open"
_UNTIL = frozenset({"until", "till"})
# "in English and German, and in no other language" says "only in English and German": "no
# other <noun>" is the quantifier "only", and its noun names what the names before it are
# ("language"), no value of its own.
_NO_OTHER = ("no", "other")
_QUOTED = 80
# "X rather than Y" says "X, not Y": a negation, for the pair check only.
_NEGATING_PHRASES = (("rather", "than"), ("instead", "of"))
# Last words that name no object or value: "the first one", "signs them as well".
_EMPTY_TAIL = frozenset({"one", "ones", "well", "too", "also", "either"})
# "iOS 16 or newer" ~ "iOS 16 and later": "at least", as "or more" is (meaning_markers.py).
_AT_LEAST_JOINS = frozenset({"or", "and"})
_AT_LEAST_WORDS = frozenset({"newer", "later", "above", "higher", "up", "greater"})
# How often, said in words or as one word: "ships every two weeks" is "ships fortnightly". A
# closed table, read as the one word; "every week", "twice a week", "every two months" stay
# other values ("biweekly" is left out: it also means twice a week).
_PERIOD_PHRASES = {("every", "two", "weeks"): "fortnightly", ("every", "other", "week"): "fortnightly",
                   ("each", "two", "weeks"): "fortnightly", ("every", "day"): "daily", ("each", "day"): "daily"}
_LONGEST_PERIOD = max(len(phrase) for phrase in _PERIOD_PHRASES)


@dataclass(frozen=True)
class Claim:
    """Input clause `number` (1-based) and the words of the answer said to say it (None: left out)."""

    number: int
    clause: Piece
    said_as: str | None

    def record(self) -> dict:
        """What a revision keeps of an accepted pair."""
        return {"clause": self.clause.text, "said_as": self.said_as}


def _quoted(text: str) -> str:
    return repr(clip(text, _QUOTED))


def claimed_floor(semantic: Semantic | None) -> float | None:
    """The similarity a claimed pair sharing no word but names needs; None: words only."""
    return None if semantic is None else semantic.threshold - CLAIMED_FLOOR_BELOW_SEARCH


def as_periods(tokens: Sequence[Token]) -> tuple[Token, ...]:
    """The tokens with each phrase of `_PERIOD_PHRASES` read as its one word."""
    out, i = [], 0
    while i < len(tokens):
        for size in range(min(_LONGEST_PERIOD, len(tokens) - i), 1, -1):
            word = _PERIOD_PHRASES.get(tuple(t.lower for t in tokens[i:i + size]))
            if word:
                out.extend(tokenize(word))
                i += size
                break
        else:
            out.append(tokens[i])
            i += 1
    return tuple(out)


def _two_state_side(marker: Marker) -> bool:
    return marker.category == ANTONYM and marker.value.rpartition(":")[0] in _TWO_STATES


@dataclass(frozen=True)
class Reading:
    """What a stretch of words says, as the pair checks compare it."""

    piece: Piece

    @cached_property
    def tokens(self) -> tuple[Token, ...]:
        """Its tokens, a period said in words read as its one word (`as_periods`)."""
        return as_periods(self.piece.tokens)

    @cached_property
    def words(self) -> frozenset[str]:
        """Every content key, as `Piece.words`, a period said in words as its one word ("every
        two weeks" has "fortnight", not "week": it does not say "weekly")."""
        return content_keys(list(self.tokens))

    @cached_property
    def _at_least(self) -> frozenset[str]:
        """The words of "or newer", "and later", ... that end the piece's clauses (empty: none)."""
        found = set()
        for tokens in self.piece.clause_tokens():
            words = [t.lower for t in tokens if t.kind == "word"]
            if len(words) >= 2 and words[-2] in _AT_LEAST_JOINS and words[-1] in _AT_LEAST_WORDS:
                found.add(words[-1])
        return frozenset(found)

    @cached_property
    def _normalised(self) -> tuple[frozenset[tuple[str, str]], frozenset[str], frozenset[str]]:
        """Plain marker classes, antonym sides, and the keys of two-state words, with each "not"
        on a two-state word read as the word's other side, and "dislikes" and "does not like"
        as the one side "not like" (`_NEGATED_VERBS`)."""
        flip, drop_until = self._until_states
        markers = [m for m in self.piece.markers if not (m.category == ANTONYM and m.word.lower() in self._at_least)
                   and not _contact_modal(m) and not (drop_until and m.category == COMPARISON and m.value == "until")]
        sides = {id(m): opposite(m.value) if flip and m.value.rpartition(":")[0] == _UNTIL_PAIR else m.value
                 for m in markers if m.category == ANTONYM}
        absorbed = set()
        for m in markers:
            if m.category == ANTONYM and root(m.word.lower()) in _NEGATED_VERBS:
                sides[id(m)] = f"not {_NEGATED_VERBS[root(m.word.lower())]}:0"
            elif m.category == ANTONYM and id(m) in self._passives:
                sides[id(m)] = _verb_side(_PASSIVE_OF[m.word.lower()])
        for negation in (m for m in markers if m.category == NEGATION and m.head):
            word = next((m for m in markers if _two_state_side(m) and id(m) not in absorbed
                         and root(m.word.lower()) in negation.head), None)
            if word is not None:
                absorbed |= {id(negation), id(word)}
                sides[id(word)] = opposite(sides[id(word)])
                continue
            verb = next((m for m in markers if m.category == ANTONYM and id(m) not in absorbed
                         and root(m.word.lower()) in _NEGATABLE and root(m.word.lower()) in negation.head), None)
            if verb is not None:
                absorbed |= {id(negation), id(verb)}
                sides[id(verb)] = f"not {_NEGATABLE[root(verb.word.lower())]}:0"
        only = {id(m) for m in markers if m.category == NEGATION and m.word.lower() == _NO_OTHER[0]
                and m.phrase.lower().split()[:2] == list(_NO_OTHER)}
        classes = frozenset((m.category, m.value) for m in markers
                            if m.category != ANTONYM and id(m) not in absorbed | only)
        if only:
            classes |= {(QUANTIFIER, "only")}
        words = [t.lower for t in self.piece.tokens]
        if any(tuple(words[i:i + 2]) in _NEGATING_PHRASES for i in range(len(words) - 1)):
            classes |= {(NEGATION, "not")}
        if self._at_least:
            classes |= {(COMPARISON, "at least")}
        state_words = frozenset(root(m.word.lower()) for m in markers if _two_state_side(m))
        return classes, frozenset(sides.values()), state_words

    @cached_property
    def _no_other(self) -> frozenset[int]:
        """The positions in `tokens` of the noun of each "no other <noun>"."""
        tokens = self.tokens
        return frozenset(i + 2 for i in range(len(tokens) - 2)
                         if (tokens[i].lower, tokens[i + 1].lower) == _NO_OTHER and tokens[i + 2].kind == "word")

    def _said(self) -> list[Token]:
        """Its tokens but the nouns of "no other <noun>" (`_NO_OTHER`)."""
        return [t for i, t in enumerate(self.tokens) if i not in self._no_other]

    @cached_property
    def _until_states(self) -> tuple[bool, bool]:
        """Whether to read its open/close words as their other side, and to drop its "until":
        each of them is part of an "open until <time>" of its sentence (`_state_until`). A
        piece that has one of them outside such a phrase is read as written."""
        tokens = self.piece.tokens
        context = tuple(tokenize(self.piece.context)) if self.piece.context else tokens
        offset = _offset(context, tokens)
        flagged = {p - offset for p in _state_until(context)} if offset is not None else set()
        states = [i for i, t in enumerate(tokens) if _in_until_pair(t)]
        untils = [i for i, t in enumerate(tokens) if t.lower in _UNTIL]
        return (bool(states) and all(i in flagged for i in states),
                bool(untils) and all(i in flagged for i in untils))

    @cached_property
    def _passives(self) -> frozenset[int]:
        """The ids of its markers that are a participle of `_PASSIVE_OF` followed by "by"."""
        tokens = list(self.piece.tokens)
        found = set()
        for m in self.piece.markers:
            if m.category == ANTONYM and m.word.lower() in _PASSIVE_OF:
                at = next((i for i, t in enumerate(tokens) if t.text == m.word), None)
                if at is not None and at + 1 < len(tokens) and tokens[at + 1].lower == "by":
                    found.add(id(m))
        return frozenset(found)

    @cached_property
    def verbs(self) -> frozenset[str]:
        """The verb sides its words can say: "pays" says the "paid by" of a passive."""
        return frozenset(_verb_side(_ACTIVE_FORMS[t.lower]) for t in self.piece.tokens if t.lower in _ACTIVE_FORMS)

    @property
    def classes(self) -> frozenset[tuple[str, str]]:
        return self._normalised[0]

    @property
    def sides(self) -> frozenset[str]:
        return self._normalised[1]

    @cached_property
    def values(self) -> dict[str, frozenset[str]]:
        """Value words, those of two-state words apart ("open", "closed"): they are compared as
        antonym sides, where a "not" can turn one into the other."""
        state_words = self._normalised[2]
        # No member of a class matched by its root ends in "-ed" ("based" is not "basement"):
        # such a match is two words with one root. Statuses are matched as written.
        kept = [t for t in self.tokens if not set(t.keys) & state_words
                and not (t.lower.endswith("ed") and _root_matched(t))]
        return {cls: keys for cls, keys in value_keys(tuple(kept)).items() if keys}

    @cached_property
    def plain_keys(self) -> frozenset[str]:
        """Content keys that are neither names nor marker words."""
        return content_keys([t for t in self._said() if not t.is_name and t.lower not in MARKER_WORDS
                             and t.lower not in _EMPTY_TAIL and t.lower not in self._at_least])

    @cached_property
    def says_anything(self) -> bool:
        """Whether it has a content word beyond its markers ("or newer", "the first one": no)."""
        return bool(self.plain_keys) or any(t.is_name and t.keys for t in self.piece.tokens)

    @cached_property
    def tail(self) -> frozenset[str]:
        """The keys of its last words, two-state words apart (compared as antonym sides:
        "not available" ~ "unavailable")."""
        state_words = self._normalised[2]
        return tail_keys([t for t in self._said() if t.lower not in MARKER_WORDS and t.lower not in _EMPTY_TAIL
                          and t.lower not in self._at_least and not set(t.keys) & state_words])


def _in_until_pair(token: Token) -> bool:
    return any(m.value.rpartition(":")[0] == _UNTIL_PAIR for m in find_markers([token]) if m.category == ANTONYM)


def _state_until(tokens: Sequence[Token]) -> frozenset[int]:
    """The positions of the state word and of the "until" of each "open until <time>"."""
    return frozenset(p for i in range(len(tokens) - 2)
                     if _in_until_pair(tokens[i]) and tokens[i + 1].lower in _UNTIL and tokens[i + 2].kind == "number"
                     for p in (i, i + 1))


def _offset(sentence: Sequence[Token], piece: Sequence[Token]) -> int | None:
    """Where the piece's tokens start in its sentence's, or None."""
    words = [t.lower for t in piece]
    return next((k for k in range(len(sentence) - len(words) + 1)
                 if [t.lower for t in sentence[k:k + len(words)]] == words), None)


def _contact_modal(marker: Marker) -> bool:
    """Whether a marker is the "can" of "can be reached at ..." (`_CONTACT_PARTICIPLES`)."""
    words = marker.phrase.lower().split()
    return (marker.category == MODALITY and marker.word.lower() in ("can", "could")
            and words[1:2] == ["be"] and words[2:3] != [] and words[2] in _CONTACT_PARTICIPLES)


def _verb_side(verb: str) -> str:
    """The side a passive participle reads as (`_PASSIVE_OF`): no other word has it."""
    return f"{verb} (verb):0"


def _root_matched(token) -> bool:
    """Whether the token is a value word only by its root, not as written."""
    return any(value_class(token.lower, key) for key in token.keys) and value_class(token.lower, token.lower) is None


def _sentence(piece: Piece) -> Sentence:
    return Sentence(piece.text, piece.tokens, piece.keys, frozenset())


def pair_problem(clause: Piece, said: Piece, semantic: Semantic | None = None,
                 also_claimed: frozenset[tuple[str, str]] = frozenset()) -> str | None:
    """Why the words `said` do not say `clause`, or None when they do (the module docstring).
    `also_claimed`: the marker classes of the other wordings of the same fact claiming the same
    words (a merge keeps the "only" of one wording where the other lacks it)."""
    theirs, ours = Reading(said), Reading(clause)
    if clause.is_question != said.is_question:
        return "one asks, the other states"
    for kind, token in clause.facts:
        # Once is enough here: the whole answer keeps every fact of the inputs (fact_guard), and
        # "... Bank's backups are encrypted by the bank" says its name once, as "Lakeshore Bank".
        if not occurrences(kind, token, said.text):
            return f"drops the {kind} {token!r}"
    for cls, keys in ours.values.items():
        # Said as a value word or as the same word in another part ("are approved" ~ "approves").
        unsaid = keys - theirs.values.get(cls, frozenset()) - theirs.words
        if unsaid:
            return f"drops the {cls} {', '.join(sorted(unsaid))!r}"
    lost = ours.classes - theirs.classes
    if lost:
        category, value = sorted(lost)[0]
        return f"drops the {category} {value!r}"
    # A marker of the clause's sentence reaches over the clause ("needs a BAA and storage":
    # "and storage" is needed too); a negation must be the clause's own.
    added = {(c, v) for c, v in theirs.classes - ours.classes
             if c == NEGATION or ((c, v) not in clause.sentence_markers and (c, v) not in also_claimed)}
    if added:
        category, value = sorted(added)[0]
        return f"adds the {category} {value!r}"
    reversed_sides = {s for s in ours.sides if opposite(s) in theirs.sides and s not in theirs.sides}
    reversed_sides |= {opposite(s) for s in theirs.sides if opposite(s) in ours.sides and s not in ours.sides}
    if reversed_sides:
        return f"turns {sorted(reversed_sides)[0].rpartition(':')[0]!r} into its opposite"
    if not ours.sides <= theirs.sides | theirs.verbs:
        return f"drops the word of {sorted(ours.sides - theirs.sides - theirs.verbs)[0].rpartition(':')[0]!r}"
    swaps = role_swaps([_sentence(clause)], _sentence(said))
    # A passive said as the active ("was translated by Nadia Petrova" -> "Nadia Petrova
    # translated"): read the other way, the clause is the answer's passive, which role_swaps allows.
    if swaps and (" by " not in f" {clause.text.lower()} " or role_swaps([_sentence(said)], _sentence(clause))):
        return swaps[0]
    # ... and the reversal is the right one: the passive's agent does it in the active.
    agents = agent_swaps(_sentence(clause), _sentence(said)) or agent_swaps(_sentence(said), _sentence(clause))
    if agents:
        return agents[0]
    # Its object or stated value is said as written: "allergic to peanuts" is not "allergic to
    # shellfish", however alike the two read. Of a two-word object one word may be reworded
    # ("big exports" ~ "large exports"), not both.
    if not (ours.tail <= theirs.words or (len(ours.tail) > 1 and ours.tail & theirs.words)):
        return "does not say its last words (" + ", ".join(sorted(ours.tail - theirs.words)) + ")"
    # A clause of names only ("and German", "Marisol Duarte") is said by its names (checked above).
    if ours.plain_keys & theirs.plain_keys or (not ours.plain_keys and clause.keys & said.keys):
        return None
    if not ours.says_anything:
        return None  # its markers, values and facts are all it says, and they are there
    floor = claimed_floor(semantic)
    if semantic is not None and floor is not None:
        similarity = semantic.similarity(clause.text, said.text)
        if similarity >= floor:
            return None
        return f"shares no word but names, and is {similarity:.2f} alike (floor {floor:.2f})"
    return "shares no word but names"


# --------------------------------------------------------------------------- the answer


@dataclass(frozen=True)
class _Stretch:
    start: int
    end: int


def _answer_clauses(answer: str) -> list[tuple[Piece, int, int]]:
    """Each clause of the answer with its character range in the answer."""
    found, at = [], 0
    for sentence in text_clauses(answer):
        offset = answer.find(sentence.text, at)
        if offset < 0:
            offset = at
        at = offset + len(sentence.text)
        for piece, (a, b) in zip(sentence.clauses, sentence.spans):
            found.append((piece, offset + a, offset + b))
    return found


def _said_piece(answer: str, start: int, end: int) -> Piece:
    """The claimed words as a piece, in the sentence (or sentences) of the answer around them."""
    text = answer[start:end]
    left = max(answer.rfind(mark, 0, start) for mark in (". ", "! ", "? ", "\n"))
    right = min((i for i in (answer.find(mark, end) for mark in (". ", "! ", "? ", "\n")) if i >= 0),
                default=len(answer))
    context = answer[left + 1 if left >= 0 else 0: right + 1].strip()
    return replace(sentence_clauses(text).whole(), context=context)


def _plain_word(token) -> bool:
    """A common word a rewording may bring: lower-case letters only, no value word."""
    return (token.kind == "word" and token.text.isalpha() and token.text.islower()
            and not any(value_class(token.lower, key) for key in token.keys))


def _group_problem(answer: str, stretch: _Stretch, claims: Sequence[Claim], input_words: frozenset[str]) -> str | None:
    """Whether the claims over one stretch of the answer account for everything it says."""
    text = answer[stretch.start:stretch.end]
    said = Reading(sentence_clauses(text).whole())
    contexts = [sentence_clauses(c.clause.context or c.clause.text).whole() for c in claims]
    named = " and ".join(f"clause {c.number}" for c in claims)
    for kind, token in extract_facts(text).tokens():
        if not any(occurrences(kind, token, c.text) for c in contexts):
            return f"{_quoted(text)} (claimed by {named}) says the {kind} {token!r}, which they do not"
    values: dict[str, set[str]] = {}
    for context in contexts:
        for cls, keys in Reading(context).values.items():
            values.setdefault(cls, set()).update(keys)
    for cls, keys in said.values.items():
        if not keys <= values.get(cls, set()):
            extra = ", ".join(sorted(keys - values.get(cls, set())))
            return f"{_quoted(text)} (claimed by {named}) says the {cls} {extra!r}, which they do not"
    sides = frozenset().union(*(Reading(c).sides | Reading(c).verbs for c in contexts))
    if not said.sides <= sides:
        extra = sorted(said.sides - sides)[0]
        word = next((m.word for m in said.piece.markers if m.value == extra), extra.rpartition(":")[0])
        return f"{_quoted(text)} (claimed by {named}) says {word!r}, which they do not"
    words = frozenset().union(*(c.words for c in contexts))
    # A merge says each fact in the words of one of its inputs, a summary in its input's: a word
    # no input has is a swap ("approves refunds" for "approves invoices"), however plain.
    foreign = [t.text for t in said.piece.tokens if t.keys and not set(t.keys) <= input_words]
    if foreign:
        return f"{_quoted(text)} (claimed by {named}) says {foreign[0]!r}, a word no input has"
    new = [t.text for t in said.piece.tokens if t.keys and not set(t.keys) <= words and not _plain_word(t)]
    if new:
        return f"{_quoted(text)} (claimed by {named}) brings the word {new[0]!r}, which they do not have"
    # A rewording replaces words, a phrase by one word at most; it does not bring a clause of
    # its own inside a claim ("..., and asks the assistant to ignore earlier rules").
    own = frozenset().union(*(c.clause.words for c in claims))
    brought = said.piece.words - words
    if len(brought) > len(own - said.piece.words) + 1:
        return (f"{_quoted(text)} (claimed by {named}) brings the words "
                f"{', '.join(sorted(brought))!r}, more than it leaves of theirs")
    return None


@dataclass(frozen=True)
class AlignedVerdict:
    """The outcome of checking an answer's claims: a problem (None: every claim holds)."""

    problem: str | None
    claims: tuple[Claim, ...] = ()

    @property
    def left_out(self) -> tuple[Claim, ...]:
        return tuple(c for c in self.claims if c.said_as is None)


def parse_alignment(value) -> list[tuple[int, str | None]]:
    """The `said_as` list of an answer as (clause number, words or None); ValueError if it is
    not a list of {"clause": int, "said_as": str|null} objects."""
    if not isinstance(value, list):
        raise ValueError(f"said_as must be a list, got {type(value).__name__}")
    pairs = []
    for entry in value:
        if (not isinstance(entry, dict) or set(entry) != {"clause", "said_as"}
                or not isinstance(entry["clause"], int) or isinstance(entry["clause"], bool)
                or not (entry["said_as"] is None or isinstance(entry["said_as"], str))):
            raise ValueError(f"each said_as entry must be {{\"clause\": int, \"said_as\": string or null}}, "
                             f"got {json.dumps(entry)[:80]}")
        pairs.append((entry["clause"], entry["said_as"]))
    return pairs


def check_claims(answer: str, clauses: Sequence[Piece], alignment: Sequence[tuple[int, str | None]], *,
                 kind: str, semantic: Semantic | None = None) -> AlignedVerdict:
    """Check an answer's claims (`alignment`, from `parse_alignment`) against the numbered input
    `clauses` (1-based, as the request numbered them). `kind`: "merge" (every clause said) or
    "summary" (a clause may be left out: null)."""
    numbers = [n for n, _ in alignment]
    expected = list(range(1, len(clauses) + 1))
    if sorted(numbers) != expected:
        repeated = sorted({n for n in numbers if numbers.count(n) > 1})
        unknown = sorted(set(numbers) - set(expected))
        missing = sorted(set(expected) - set(numbers))
        what = (f"claims clause {repeated[0]} twice" if repeated else f"claims clause {unknown[0]}, which there is not"
                if unknown else f"says nothing of clause {missing[0]}")
        return AlignedVerdict(f"the alignment {what} (the request numbered clauses 1 to {len(clauses)})")
    # The claimed words, without the space and the sentence's end mark around them (a model
    # copies "... peanuts." with the full stop of its text or of the clause's sentence).
    claims = [Claim(n, clauses[n - 1], said.strip().rstrip(".;,").strip() if said is not None else None)
              for n, said in sorted(alignment)]
    located: list[tuple[Claim, int, int]] = []
    for claim in claims:
        if claim.said_as is None:
            if kind == "merge" and claim.clause.keys:
                return AlignedVerdict(f"leaves out clause {claim.number} {claim.clause.quoted}", tuple(claims))
            continue
        start = answer.find(claim.said_as) if claim.said_as else -1
        if start < 0:
            return AlignedVerdict(f"clause {claim.number} {claim.clause.quoted} is said as "
                                  f"{_quoted(claim.said_as)}, which is not in the answer", tuple(claims))
        located.append((claim, start, start + len(claim.said_as)))
    for claim, start, end in located:
        # Other wordings of the same fact (the same words claimed, the same last words) may
        # bring a marker this one lacks: never a negation (checked in pair_problem).
        tail = Reading(claim.clause).tail
        also = frozenset().union(*(Reading(other.clause).classes for other, s, e in located
                                   if other is not claim and (s, e) == (start, end)
                                   and tail & Reading(other.clause).tail))
        problem = pair_problem(claim.clause, _said_piece(answer, start, end), semantic, also)
        if problem:
            return AlignedVerdict(f"clause {claim.number} {claim.clause.quoted} said as "
                                  f"{_quoted(claim.said_as)}: {problem}", tuple(claims))
    # Every clause of the answer lies in some claim; the claims over a clause form one group.
    groups: list[tuple[_Stretch, list[Claim]]] = []
    for piece, a, b in _answer_clauses(answer):
        over = [(claim, s, e) for claim, s, e in located if s < b and a < e]
        if not over:
            if piece.keys:
                return AlignedVerdict(f"no input clause is said as {piece.quoted}: the answer adds it", tuple(claims))
            continue
        start, end = min(s for _, s, _ in over), max(e for _, _, e in over)
        merged = [g for g in groups if g[0].start < end and start < g[0].end]
        for g in merged:
            groups.remove(g)
            start, end = min(start, g[0].start), max(end, g[0].end)
        members = {c.number: c for g in merged for c in g[1]} | {c.number: c for c, _, _ in over}
        groups.append((_Stretch(start, end), [members[n] for n in sorted(members)]))
    input_words = frozenset().union(*(sentence_clauses(c.context or c.text).whole().words for c in clauses))
    for stretch, members in groups:
        problem = _group_problem(answer, stretch, members, input_words)
        if problem:
            return AlignedVerdict(problem, tuple(claims))
    return AlignedVerdict(None, tuple(claims))

"""The kind a noun is named as: the plain words before it ("marketing budget", "my proof
writing quiz score"). Two clauses that put other words before one noun speak of two things
("the travel budget", "my graphing quiz score"), however alike the rest. So do two that name
another owner of it, after "for" or "of" ("my budget for groceries" / "my budget for dining
out") or before "'s" ("The staging DB's connection limit" / "The prod DB's ..."). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from curation_pipeline.core.clauses import Piece
from curation_pipeline.core.sentence_tokens import tokenize
from curation_pipeline.core.subjects import is_verb, past_form, verb_by_shape, verb_like_opening, words_before_the_verb
from curation_pipeline.core.value_words import value_class

# Words after which a word in -ing names a kind ("my graphing quiz"), not an act ("started
# sketching objects").
_OWNERS = frozenset("a an the our my your their his her its this that these those".split())
# What opens a noun phrase: an owner, a preposition, a number ("the travel budget", "on decimal
# problems", "$900 marketing budget"), or a verb the words know ("Set travel budget to ...",
# "Raised marketing budget ..."). After a name, the words may be a verb they do not know and its
# object ("Ana quit coffee", "Ana drinks coffee"), which name no kind.
_OPENERS = _OWNERS | frozenset("in on of for with at from to by about into per".split())

# Words that say which value of one thing, not which thing: "the current membership fee" / "the
# latest membership fee", "my remaining budget" / "my outstanding budget".
_WHICH_VALUE = frozenset("current latest new newest old older previous present recent remaining outstanding"
                         " updated revised final initial original".split())


def which_value(token) -> bool:
    """Whether a word says which value or how often, not which thing: a unit of time or a
    weekday ("weekly", "Monday"), or one of _WHICH_VALUE ("current", "initial")."""
    return token.kind == "word" and bool(token.keys) and not is_verb(token) \
        and (value_class(token.lower, token.keys[0]) in ("time unit", "weekday") or token.lower in _WHICH_VALUE)


def _possessive(token) -> bool:
    """An owner before "'s", which opens a noun phrase as "my" does ("Orchid's checkout service")."""
    return token.kind == "word" and bool(token.keys) and token.text.lower().endswith(("'s", "\u2019s"))


def kind_words(tokens: Sequence, names: bool = False) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(noun, the plain words before it, nearest first) for each noun that ends a noun phrase and
    that other plain words name a kind of: "marketing budget", "page load time" (of "time", not
    of "load": "initial test suite" and "unit test coverage" are not two tests), "my proof
    writing quiz score" (a word in -ing after an owner or a plain word names a kind: "graphing
    quiz", "swimming lessons"). Verbs and their past forms ("raised budget", "improved
    accuracy") say what was done, not which thing; "started sketching objects" is a verb. Only a
    phrase that opens with an owner ("my", "Orchid's"), a preposition, a number or a known verb
    counts (_OPENERS);
    a unit of time or a weekday between the words is no kind ("my weekly grocery budget").
    `names` (offline): a name may open the phrase, itself no kind word ("per GPS distance
    problem")."""
    # Cached by the clause's tokens: each clause of a pair is read against every clause of the
    # other memory, and each memory is in many pairs a cycle.
    return _kind_words(tuple(tokens), names)


@lru_cache(maxsize=1 << 14)
def _kind_words(tokens: tuple, names: bool) -> tuple[tuple[str, tuple[str, ...]], ...]:
    # Punctuation ends a phrase ("fraction problems, accuracy 75%"): the tokens keep it.
    known_verb = next((n for n, token in enumerate(tokens) if is_verb(token)), len(tokens))

    def plain(n: int) -> bool:
        token = tokens[n] if 0 <= n < len(tokens) else None
        # A word in -s before its object is the verb, when no verb the words know comes before
        # it ("The support queue holds 40 tickets"; not "I do cardio workouts 4 days a week").
        shaped_verb = n < known_verb and verb_by_shape(tokens, n, before_preposition=False)
        return (token is not None and token.kind == "word" and bool(token.keys) and not token.is_name
                and not is_verb(token) and not past_form(token.lower) and not shaped_verb
                and value_class(token.lower, token.keys[0]) is None)

    def modifier(n: int) -> bool:
        token = tokens[n] if n >= 0 else None
        return plain(n) or (token is not None and token.lower.endswith("ing") and bool(token.keys) and n > 0
                            and (tokens[n - 1].lower in _OWNERS or _possessive(tokens[n - 1]) or plain(n - 1)
                                 or which_value(tokens[n - 1])))

    def transparent(n: int) -> bool:  # "my weekly grocery budget", "my current membership fee": no kind
        return which_value(tokens[n])

    found = []
    for n in range(1, len(tokens)):
        if not plain(n) or plain(n + 1) or not modifier(n - 1):
            continue
        chain, k = [], n - 1
        while k >= 0 and (modifier(k) or transparent(k)):
            if modifier(k) and not transparent(k):
                chain.append(tokens[k].keys[0])
            k -= 1
        # `names`: a name may open the phrase too ("per GPS distance problem": a distance
        # problem), itself no kind word ("the Hamburg office" / "the Berlin office" is one office).
        if k >= 0 and (tokens[k].lower in _OPENERS or _possessive(tokens[k]) or tokens[k].kind == "number" or is_verb(tokens[k])
                       or past_form(tokens[k].lower) or (k == 0 and verb_like_opening(tokens[k]))
                       or names and k > 0 and tokens[k].is_name):
            found.append((tokens[n].keys[0], tuple(chain)))
    return tuple(found)


# Prepositions after a counted noun that say which kind it is: "problems on complex roots".
_KIND_AFTER = frozenset("on about".split())
_PREPOSITIONS = _OPENERS - _OWNERS
_KIND_AFTER_REACH = 3


def _participle_after(tokens: list, n: int) -> bool:
    """Whether tokens[n] is a participle that says which of the counted noun before it ("840
    tests passing", "120 units unreserved"): a word in -ing or -ed at the clause's end or before
    a preposition. With an object or a value after it, it says what they did ("12 problems
    scoring 90%")."""
    token = tokens[n] if n < len(tokens) else None
    if token is None or token.kind != "word" or not token.keys or not token.lower.endswith(("ing", "ed")):
        return False
    following = tokens[n + 1] if n + 1 < len(tokens) else None
    return following is None or following.kind == "punct" or following.lower in _PREPOSITIONS


def kinds_after(tokens: list) -> dict[str, frozenset[str]]:
    """noun -> the plain words after it and "on" or "about" that say its kind: "7 problems on
    complex roots" -> {problem: {complex, root}}; or the participle after it: "840 tests
    passing" -> {test: {pass}}. Only a noun after a number, what is counted; a value after the
    preposition ("on Monday", "on 3 topics") says when or how many, no kind."""
    found: dict[str, frozenset[str]] = {}
    for n in range(1, len(tokens) - 1):
        noun, preposition = tokens[n], tokens[n + 1]
        if not noun.keys or noun.kind != "word" or not any(t.kind == "number" for t in tokens[max(0, n - 3):n]):
            continue
        if _participle_after(tokens, n + 1):
            found[noun.keys[0]] = frozenset(preposition.keys)
            continue
        if preposition.lower not in _KIND_AFTER:
            continue
        words = []
        for token in tokens[n + 2:n + 2 + _KIND_AFTER_REACH]:
            if token.kind != "word" or not token.keys or is_verb(token) \
                    or value_class(token.lower, token.keys[0]) is not None:
                break
            words.extend(token.keys)
        if words:
            found[noun.keys[0]] = frozenset(words)
    return found


# Prepositions after a noun that say whose or which one it is: "my budget for dining out", "the
# capacity of our Kafka cluster".
_OWNER_AFTER = frozenset("for of".split())
_OWNER_AFTER_REACH = 4


def owners_after(tokens: list) -> dict[str, tuple[tuple[str, bool], ...]]:
    """noun -> the words after it and "for" or "of" that say whose or which one it is, in their
    order, each with whether it is a name: "My budget for dining out is $200" -> {budget:
    ((din, False), (out, False))}. Only where the clause goes on after them (a verb, "to", a
    value, a preposition but "of" or "for"): a phrase that ends the clause is what it states
    ("is a citizen of United Kingdom", "works in the field of playwright", "holds the position
    of mayor of Gdansk"), the value, not which thing. Owners and words of which value ("the",
    "our", "weekly", "current") are skipped; a noun in -ing is an act ("waiting for the
    decision"), and a number before the preposition a price ("$40 for the tickets")."""
    found: dict[str, tuple[tuple[str, bool], ...]] = {}
    for n in range(len(tokens) - 2):
        noun, preposition = tokens[n], tokens[n + 1]
        if preposition.lower not in _OWNER_AFTER or noun.kind != "word" or not noun.keys or is_verb(noun) \
                or past_form(noun.lower) or noun.lower.endswith("ing") or value_class(noun.lower, noun.keys[0]):
            continue
        words: list[tuple[str, bool]] = []
        end = None
        for m in range(n + 2, len(tokens)):
            token = tokens[m]
            if token.kind == "word" and (token.lower in _OWNERS or which_value(token)):
                continue
            if token.kind != "word" or not token.keys or is_verb(token) or past_form(token.lower) \
                    or token.lower in _OPENERS or len(words) >= _OWNER_AFTER_REACH \
                    or (value_class(token.lower, token.keys[0]) is not None and not token.is_name):
                end = token
                break
            words.extend((key, token.is_name) for key in token.keys)
        # Another "of" or "for" goes on with the same phrase ("the position of mayor of Gdansk"):
        # what the clause states, to its end. A colon gives the value of a note ("Savings goal
        # for the emergency fund: $10,000").
        goes_on = end is not None and (end.kind != "punct" or end.text == ":") and end.lower not in _OWNER_AFTER
        if words and goes_on:
            found.setdefault(noun.keys[0], tuple(words))
    return found


def _owned_noun(tokens: list, start: int) -> int | None:
    """Where the noun is that ends the plain words from `start` ("connection limit": limit), or
    None."""
    noun = None
    for n in range(start, len(tokens)):
        token = tokens[n]
        if token.kind != "word" or not token.keys or token.is_name or is_verb(token) or past_form(token.lower) \
                or value_class(token.lower, token.keys[0]) is not None:
            break
        noun = n
    return noun


def possessive_owners(tokens: list) -> dict[str, tuple[tuple[str, bool], ...]]:
    """noun -> the words of its owner before "'s", nearest first, as owners_after: "The staging
    DB's connection limit is 200" -> {limit: ((db, True), (stag, False))}. As there, only where
    the clause goes on after the noun: at its end, the owner is the value it states."""
    found: dict[str, tuple[tuple[str, bool], ...]] = {}
    for n, token in enumerate(tokens):
        if not _possessive(token):
            continue
        noun = _owned_noun(tokens, n + 1)
        if noun is None or noun + 1 >= len(tokens) or tokens[noun + 1].kind == "punct":
            continue  # "Thanksgiving is at Sam's house": whose house is what the clause states
        owner, k = [(key, token.is_name) for key in token.keys], n - 1
        while k >= 0 and tokens[k].kind == "word" and tokens[k].keys and tokens[k].lower not in _OPENERS \
                and not is_verb(tokens[k]) and not past_form(tokens[k].lower) \
                and not (k == 0 and verb_like_opening(tokens[k])):  # "staging" of "The staging DB's" too
            owner.extend((key, tokens[k].is_name) for key in tokens[k].keys)
            k -= 1
        found.setdefault(tokens[noun].keys[0], tuple(owner))
    return found


def _a_part_of_it(old_tokens: list, new_tokens: list, old_keys: set[str], new_keys: set[str]) -> bool:
    """Whether the newer clause speaks of something of what the older one names, in words the
    older never says: "The runtime of the Cobalt nightly job is 90 minutes" / "Cut the Cobalt
    nightly job's export step to 20 minutes", "The current price of Brackenridge stock is $42" /
    "Brackenridge stock's 30-day average climbed to $45". A part or another attribute of it,
    not a new value of the older one, when the older clause's subject names its own attribute
    in words the newer never says ("runtime", "current price"). "Pylon's upload limit" of "Max
    upload size in Pylon" says "upload": one limit, in other words; "Fairbrook cut the X2
    toaster's price to £39" of "The Fairbrook X2 toaster retails at £49" is its price."""
    old_words = [t for t in old_tokens if t.kind != "punct"]
    subject = {key for t in old_words[:words_before_the_verb(old_words)] for key in t.keys}
    for n, token in enumerate(new_tokens):
        if not _possessive(token) or not set(token.keys) <= old_keys:
            continue
        start = n + 1
        while start < len(new_tokens) and new_tokens[start].kind == "number" and "-" in new_tokens[start].text:
            start += 1  # "stock's 30-day average": a length that names which average
        noun = _owned_noun(new_tokens, start)
        if noun is None or noun + 1 >= len(new_tokens) or new_tokens[noun + 1].kind == "punct":
            continue  # at the clause's end, "Sam's house" is the value it states
        owned = {key for t in new_tokens[start:noun + 1] for key in t.keys}
        if owned and not owned & old_keys and subject - set(token.keys) - new_keys:
            return True
    return False


def _another_owner(old_tokens: list, new_tokens: list, old_keys: set[str], new_keys: set[str]) -> bool:
    """Whether both clauses name one noun with "for" or "of" after it, or one owner before "'s",
    and the first words of those that differ are each unsaid by the other clause: "my budget for
    dining out" / "my budget for groceries", "the capacity of our Kafka cluster" / "... of our
    Redis cluster", "The staging DB's connection limit" / "The prod DB's connection limit". The
    two words must be of one sort, two names or two plain words, rivals for one place: "the team
    offsite" / "our Lisbon offsite" may be one offsite said by what it is and by where, and "the
    budget for the offsite" / "the budget for the Lisbon offsite" one that the newer says more
    of."""
    for owners in (owners_after, possessive_owners):
        old_owners, new_owners = owners(old_tokens), owners(new_tokens)
        for noun in set(old_owners) & set(new_owners):
            for (word, named), (other, other_named) in zip(old_owners[noun], new_owners[noun]):
                if word != other:
                    if named == other_named and word not in new_keys and other not in old_keys:
                        return True
                    break
    return False


def _another_kind_after(old_tokens: list, new_tokens: list, old_keys: set[str], new_keys: set[str]) -> bool:
    """Whether one noun is counted in both clauses, of a kind said after it in at least one of
    them ("7 problems on complex roots" / "9 undetermined coefficients problems"), and each
    clause's kind words are all unsaid by the other. "problems on complex roots" / "complex
    roots problems" are one kind."""
    old_after, new_after = kinds_after(old_tokens), kinds_after(new_tokens)
    old_before = {noun: set(kinds) for noun, kinds in kind_words(old_tokens)}
    new_before = {noun: set(kinds) for noun, kinds in kind_words(new_tokens)}
    for noun in (set(old_after) | set(new_after)):
        mine = set(old_after.get(noun, ())) | old_before.get(noun, set())
        theirs = set(new_after.get(noun, ())) | new_before.get(noun, set())
        if mine and theirs and not mine & new_keys and not theirs & old_keys:
            return True
    return False


def another_kind_of(old: Piece, new: Piece, values: frozenset[str] = frozenset(), names: bool = False) -> bool:
    """Whether the two clauses name one noun after a different word, neither of which the
    other clause has: "a $900 marketing budget" / "the travel budget" are two budgets, "my
    proof writing quiz score" / "my graphing quiz score" two scores; "a strict $1,250 max
    budget" / "the budget allocation" may be one, and so may "my quiz score" / "my graphing
    quiz score" (one says more of it). A noun the newer clause says bare is read with the words
    its sentence names it with: "... now reaching 95% after completing 15 problems", of "My
    accuracy in area calculation problems", are no "classification problems". A noun in
    `values` (the last words of both clauses, where they are the value that changed) is the
    value, not the thing: "Her genre is country music" / "... pop music" is one genre. `names`:
    as in kind_words."""
    old_keys = {key for token in old.tokens for key in token.keys}
    new_keys, new_kinds = _sentence_kinds(new.context, names) if new.context else _kinds_of(list(new.tokens), names)
    theirs = [(noun, kinds) for noun, kinds in new_kinds if noun in new.keys and noun not in values]
    if _another_kind_after(list(old.tokens), list(new.tokens), old_keys, set(new_keys)) \
            or _another_owner(list(old.tokens), list(new.tokens), old_keys, set(new_keys)) \
            or _a_part_of_it(list(old.tokens), list(new.tokens), old_keys, set(new_keys)):
        return True
    return any(noun == other and _kinds_differ(kinds, other_kinds, old_keys, new_keys)
               for noun, kinds in kind_words(list(old.tokens), names) for other, other_kinds in theirs)


@lru_cache(maxsize=16384)
def _sentence_kinds(sentence: str, names: bool = False) -> tuple[frozenset[str], tuple[tuple[str, tuple[str, ...]], ...]]:
    """The keys and kind words of a sentence, read once: every clause of a newer memory is
    compared with every older claim."""
    return _kinds_of(tokenize(sentence), names)


def _kinds_of(tokens: list, names: bool = False) -> tuple[frozenset[str], tuple[tuple[str, tuple[str, ...]], ...]]:
    return frozenset(key for token in tokens for key in token.keys), tuple(kind_words(tokens, names))


def _kinds_differ(mine: tuple[str, ...], theirs: tuple[str, ...], old_keys: set[str], new_keys: set[str]) -> bool:
    """Whether, walking back from one noun, the first words that differ are each unsaid by the
    other clause."""
    for word, other in zip(mine, theirs):
        if word != other:
            return word not in new_keys and other not in old_keys
    return False

"""The meaning markers of a sentence: the small words that turn a claim around. Pure.

A rewrite can keep every name, number and content word of a sentence and still say the opposite:
"is not allergic" -> "is allergic", "must" -> "may", "every" -> "some", "above $5,000" ->
"below $5,000", "approve" -> "reject". The fact guard compares these markers between a sentence
of an answer and the input sentences it comes from (names and their order: name_roles.py):

- **negation**: not, n't, never, no, none, nobody, nothing, neither, nor, without, ...
- **modality**: must (must, have to, need, require(d), shall, mandatory), should (should,
  ought to, recommended), may (may, might, can, could); "cannot" is may + negation;
- **quantifier**: all (all, every, each, always), most (most, many, usually, often), some (some,
  several, a few, sometimes), few (few, rarely, seldom), only (only, solely, exclusively);
- **comparison**: more than (above, more/greater/higher than, exceeds, over + a number), less
  than (below, less/fewer/lower than, under + a number), at least, at most (up to, no more
  than), before (before, prior to, by + a date), after, until;
- **antonym**: one side of a small curated list of opposites (allowed/forbidden,
  approve/reject, increase/decrease, enable/disable, accept/decline, ...).

Words of one class are interchangeable ("must" ~ "has to" ~ "requires", "every" ~ "each",
"before the 5th" ~ "by the 5th"), so a faithful rewording keeps its markers. Each marker but the
antonyms carries a *scope*: the keys of the next two content words of its clause ("not" in "does
not drink coffee" -> {drink, coffee}), so a negation moved to another claim of the same sentence
does not count as kept. Antonyms are compared per sentence group, without scope.

The word lists are English: a marker of another language is not seen (its sentence is still
aligned and its names and numbers still checked).
"""

from __future__ import annotations

from dataclasses import dataclass

from curation_pipeline.core.sentence_tokens import Token, root

NEGATION, MODALITY, QUANTIFIER, COMPARISON, ANTONYM = "negation", "modality", "quantifier", "comparison", "antonym"

# "category / class: phrase, phrase, ..."; a phrase is matched as whole lower-case words, the
# longest phrase first ("no more than" is "at most", not a negation).
_LEXICON = """
negation / not: not, never, no, none, nobody, nothing, nowhere, neither, nor, without, no longer, no one
modality / must: must, have to, has to, had to, need to, needs to, need, needs, needed, require, requires,
    required, requiring, requirement, requirements, mandatory, shall, obliged, obligatory
modality / should: should, ought to, recommend, recommends, recommended
modality / may: may, might, can, could
quantifier / all: all, every, each, always, everyone, everybody, everything
quantifier / most: most, mostly, many, usually, often, generally, typically, mainly, largely, frequently
quantifier / some: some, several, a few, sometimes, occasionally, partly, partially
quantifier / few: few, rarely, seldom, hardly, barely
quantifier / only: only, solely, exclusively
comparison / more than: above, exceed, exceeds, exceeded, exceeding, more than, greater than, higher than,
    larger than, bigger than, longer than, in excess of
comparison / less than: below, less than, fewer than, lower than, smaller than, shorter than
comparison / at least: at least, or more, minimum of, a minimum of, no less than, not less than,
    no fewer than, not fewer than
comparison / at most: at most, or less, or fewer, up to, maximum of, a maximum of, no more than,
    not more than
comparison / before: before, prior to, earlier than, ahead of, no later than, not later than
comparison / after: after, later than, no earlier than, not earlier than
comparison / until: until, till, up until
"""

# Opposites: "pair: words of one side | words of the other". Compared by root, so one
# inflection of a word stands for all ("approve" covers approves, approved, approving, approval).
_ANTONYMS = """
allow: allow, permit, permitted, permission | forbid, forbidden, prohibit, ban, disallow
approve: approve, accept, acceptance, agree, grant | reject, decline, deny, denial, refuse, disagree
increase: increase, raise | decrease, reduce, reduction, lower
enable: enable, activate | disable, deactivate
include: include, inclusion | exclude, exclusion
add: add | remove, delete
succeed: succeed, success, successful, successfully, pass | fail, failure
win: win, won, winning | lose, lost, losing
true: true | false
open: open | close, shut
start: start, begin, began, resume | stop, pause, halt
online: online | offline
public: public | private
internal: internal | external
inbound: inbound | outbound
upgrade: upgrade | downgrade
encrypt: encrypt, encryption | decrypt, unencrypted
lock: lock | unlock
valid: valid | invalid
available: available | unavailable
supported: supported | unsupported
required: required, mandatory | optional
like: like, love, enjoy | dislike, hate
minimum: minimum | maximum
ascending: ascending | descending
early: early, earlier, earliest | late, later, latest
positive: positive | negative
remember: remember | forget
buy: buy, bought | sell, sold
import: import | export
more: more, higher, larger, greater, bigger | less, fewer, lower, smaller
better: better, best, improve, improved | worse, worst, degrade, degraded
connected: connected | disconnected
paid: paid | unpaid
"""

# Contractions whose "n't" also carries a modal ("can't" = may + not).
_MODAL_CONTRACTIONS = {"can": "may", "ca": "may", "could": "may", "might": "may", "must": "must",
                       "need": "must", "should": "should"}
# "is on" / "was turned off": the words before a state.
_SWITCHED_BY = frozenset("is are was were be been stays stay remains remain turned switched set left".split())
# "about 5", "roughly $180,000", "nearly 30%": an approximate amount is not an exact one.
_APPROXIMATIONS = frozenset({"about", "around", "roughly", "approximately", "circa", "nearly", "almost"})
# "over"/"under" compare only before a quantity ("over 900 kg"), not in "took over", "prefers X
# over Y" or "under contract"; "by" is a deadline ("by the 5th") only before a point in time.
_QUANTITY_PREPOSITIONS = {"over": "more than", "under": "less than"}
_POINTS_IN_TIME = frozenset("""
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
saturday sunday end start beginning close noon midnight today tomorrow tonight eod q1 q2 q3 q4
""".split())
_SCOPE_WORDS = 2
# "once" counts ("once a week", "once more", "only once.") unless a clause follows it.
_ONCE_AS_COUNT = frozenset("a an per more again every or and , ; . ) :".split())
# Markers that float in their clause ("only reviews on Tuesdays" ~ "reviews on Tuesdays only"):
# their scope is the whole clause.
_CLAUSE_SCOPE = frozenset({"only"})


@dataclass(frozen=True)
class Marker:
    category: str  # NEGATION | MODALITY | QUANTIFIER | COMPARISON | ANTONYM
    value: str  # its class: "not", "must", "all", "more than", "approve:1" (pair and side), ...
    word: str  # as written ("doesn't", "has to", "above")
    scope: frozenset[str]  # keys of the words it applies to (empty for antonyms)
    phrase: str = ""  # the marker with the words it applies to, for messages ("not drink coffee")
    head: frozenset[str] = frozenset()  # keys of the first word it applies to ("drink")


def _parse_lexicon() -> dict[tuple[str, ...], tuple[tuple[str, str], ...]]:
    phrases: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
    for entry in _LEXICON.strip().replace("\n    ", " ").splitlines():
        label, _, words = entry.partition(":")
        category, _, value = (part.strip() for part in label.partition("/"))
        for phrase in words.split(","):
            phrases[tuple(phrase.split())] = ((category, value),)
    return phrases


def _parse_antonyms() -> dict[str, tuple[str, ...]]:
    sides: dict[str, list[str]] = {}
    for entry in _ANTONYMS.strip().splitlines():
        pair, _, words = entry.partition(":")
        for side, group in enumerate(words.split("|")):
            for word in group.split(","):
                sides.setdefault(root(word.strip()), []).append(f"{pair.strip()}:{side}")
    return {key: tuple(values) for key, values in sides.items()}


_PHRASES = _parse_lexicon()
_LONGEST = max(len(phrase) for phrase in _PHRASES)
_ANTONYM_SIDES = _parse_antonyms()


def _clause(tokens: list[Token], start: int, end: int) -> tuple[frozenset[str], str, frozenset[str]]:
    """Keys of the whole clause around tokens[start:end], the marker as written, and the keys
    of the first content word after it."""
    first = start
    while first > 0 and not tokens[first - 1].ends_clause:
        first -= 1
    last = end
    while last < len(tokens) and not tokens[last].ends_clause:
        last += 1
    head = next((frozenset(t.keys) for t in tokens[end:last] if t.keys), frozenset())
    return frozenset(key for token in tokens[first:last] for key in token.keys), " ".join(
        token.text for token in tokens[start:end]), head


def _scope(tokens: list[Token], start: int, end: int) -> tuple[frozenset[str], str, frozenset[str]]:
    """Keys of the next two content words after tokens[start:end] in its clause, names only if
    there is nothing else ("every Tidewater Clinics invoice" is about invoices); if the marker
    ends its clause, of the content word just before it. And the words from the marker to them
    as written."""
    after = []
    for position in range(end, len(tokens)):
        if tokens[position].ends_clause:
            break
        if tokens[position].keys:
            after.append(position)
    chosen = ([p for p in after if not tokens[p].is_name] or after)[:_SCOPE_WORDS]
    if not chosen:
        before = next((p for p in range(start - 1, -1, -1) if tokens[p].ends_clause or tokens[p].keys), None)
        if before is None or tokens[before].ends_clause:
            return frozenset(), " ".join(token.text for token in tokens[start:end]), frozenset()
        keys = frozenset(tokens[before].keys)
        return keys, " ".join(token.text for token in tokens[before:end]), keys
    keys = frozenset(key for p in chosen for key in tokens[p].keys)
    return keys, " ".join(token.text for token in tokens[start:chosen[-1] + 1]), frozenset(tokens[chosen[0]].keys)


_TIME_UNITS = frozenset(root(w) for w in """second minute hour day night morning evening week fortnight
month quarter year weekday weekend monday tuesday wednesday thursday friday saturday sunday january
february march april june july august september october november december""".split())


def _repeats_in_time(following: list[Token]) -> bool:
    """Whether the words after "every"/"each" are a period: "Monday", "quarter", "two weeks",
    "other Friday"."""
    words = [t for t in following if t.kind in ("word", "number")]
    if not words:
        return False
    if words[0].lower in ("other", "second", "third") or words[0].kind == "number" or words[0].lower in (
            "two", "three", "four", "six"):
        words = words[1:]
    return bool(words) and root(words[0].lower) in _TIME_UNITS


def _special(tokens: list[Token], i: int) -> tuple[tuple[str, str], ...] | None:
    """Markers that depend on a word's form or neighbours: the (category, class) pairs, () for
    "no marker here", None when no rule applies and the word goes to the lexicon."""
    word, following = tokens[i].lower, tokens[i + 1: i + 3]
    before_number = bool(following) and following[0].kind == "number"
    if word.endswith("n't"):
        modal = _MODAL_CONTRACTIONS.get(word[:-3])
        return ((MODALITY, modal), (NEGATION, "not")) if modal else ((NEGATION, "not"),)
    if word == "cannot":
        return (MODALITY, "may"), (NEGATION, "not")
    if word == "may" and ((i > 0 and tokens[i].text == "May") or before_number):
        return ()  # "May 5", "by May": a month
    if word == "no" and before_number:
        return ()  # "no 5" (number 5)
    if word == "once":
        # "once the clip went above 8" is "after"; "once a week", "only once." count.
        as_count = not following or following[0].lower in _ONCE_AS_COUNT or (i > 0 and tokens[i - 1].lower == "at")
        return () if as_count else ((COMPARISON, "after"),)
    if word in ("every", "each") and _repeats_in_time(following):
        return ()  # "every Monday", "each quarter", "every two weeks": how often, not how many
    if word in ("on", "off") and (i + 1 == len(tokens) or tokens[i + 1].ends_clause) and i > 0 \
            and tokens[i - 1].lower in _SWITCHED_BY:
        # "Maintenance mode is on." / "... is off.": a state, not a preposition.
        return ((ANTONYM, f"switched:{int(word == 'off')}"),)
    if word in _APPROXIMATIONS:
        return ((COMPARISON, "about"),) if before_number else ()
    if word in _QUANTITY_PREPOSITIONS:
        return ((COMPARISON, _QUANTITY_PREPOSITIONS[word]),) if before_number else ()
    if word == "by":
        point = following[1] if len(following) > 1 and following[0].lower == "the" else (following or [None])[0]
        deadline = point is not None and (point.kind == "number" or point.lower in _POINTS_IN_TIME)
        return ((COMPARISON, "before"),) if deadline else ()
    return None


def find_markers(tokens: list[Token]) -> list[Marker]:
    """Every meaning marker of a tokenized sentence, in order."""
    found: list[Marker] = []
    i = 0
    while i < len(tokens):
        if tokens[i].kind != "word":
            i += 1
            continue
        length, classes = 1, _special(tokens, i)
        if classes is None:
            for size in range(min(_LONGEST, len(tokens) - i), 0, -1):
                classes = _PHRASES.get(tuple(token.lower for token in tokens[i:i + size]))
                if classes:
                    length = size
                    break
        if classes:
            written = " ".join(token.text for token in tokens[i:i + length])
            for category, value in classes:
                scope, phrase, head = (_clause if value in _CLAUSE_SCOPE else _scope)(tokens, i, i + length)
                found.append(Marker(category, value, written, scope, phrase, head))
        elif classes is None:
            found.extend(Marker(ANTONYM, side, tokens[i].text, frozenset(), tokens[i].text)
                         for side in _ANTONYM_SIDES.get(root(tokens[i].lower), ()))
        i += length
    return found


# Single words that are markers of their own (not antonyms): "need" and "require" say the same
# modal, "mostly" and "usually" the same quantifier. Coverage compares them as markers, by class,
# not as the words a clause is about.
MARKER_WORDS = frozenset(phrase[0] for phrase in _PHRASES if len(phrase) == 1) | _APPROXIMATIONS


def opposite(antonym_value: str) -> str:
    """The other side of an antonym marker's pair ("approve:0" -> "approve:1")."""
    pair, _, side = antonym_value.rpartition(":")
    return f"{pair}:{1 - int(side)}"

"""An older sentence without the phrase of a value a newer memory replaced. Pure.

"Added the project gallery with 8 cards using Bootstrap 5.3.0." updated by "The gallery now
includes 10 cards." leaves "Added the project gallery using Bootstrap 5.3.0." said: the newer
memory carries it (supersession.compare_versions), so that nothing of the older memory is hidden
and the outdated 8 is no longer current. A value is cut only with the phrase it stands in:

- the phrase opens with a preposition right before the value ("with 8 cards", "of 150
  commits", "to 40 seats"; a word like "about" may stand between), and runs over the plain
  words after it (what the value counts) up to a comma, a link word, another preposition or a
  participle ("using ...");
- "with 150 commits and 12 merged branches": the value goes with its "and", the preposition
  stays for what follows;
- the phrase names what the value counts, and the newer clause names it too ("with 8 cards" /
  "now includes 10 cards"): "with 10 probability questions" against "12 probability problems"
  may be another count, and "from 800ms to 300ms" says nothing of what it measures. "of" and a
  value with its own unit right after a noun measure that noun ("response time of 220ms"),
  which the newer clause must name; a bare number after "of" counts something unsaid. What a
  value counts ends at a preposition ("220ms under 1,000 users", "budget after reviewing");
- the phrase holds no value that was not replaced, and does not end on one ("at 3 PM Lisbon
  time"), nor is it the end of a range ("from 22 to 15 minutes": "from 22" would be left): such
  a sentence is not cut, and the update stays partial; nor does it hold a name
  ("with Coach Kim at 2 lessons a week": a person is no value to cut away);
- a length of time goes with its units ("at 15 hours a week"); a phrase right after the counted
  noun, with no comma and no value of its own, tells of that noun ("with 1,200 daily visitors
  from organic search"), and the sentence is not cut: left, it would tell of something else;
- for a judge's "update" only (core/judged_updates.py): a value with its own unit or sign that
  stands before the noun it measures, after an article or possessive and at most one plain word
  ("set a $700 budget ceiling", "a strict $1,250 max budget") or right after a verb of something
  done ("Achieved 65% test coverage"), goes alone, when the newer clause names that noun too
  ("adjusted my budget ceiling to $750"): "a budget ceiling" stays said. A bare count measures
  the word after it ("a 6 person table" is no "person table"), and a value that is the verb's
  own object ("has 8 cards") is no such phrase: neither is cut. Offline the words alone would
  take "Retained 80% accuracy on the sequence definitions quiz" for an update of "improved
  accuracy to 100% on sum problems" (BEAM's development chats), and cut a value of another quiz:
  the pair stays partial, for the judge. Also for the judge only: a preposition and one value
  with its unit that counts nothing ("Mortgage pre-approval ... at 6.1% from Chase"), unless a
  verb of a thing done stands before it in its clause (the price "We bought the house in 2015 at
  $320,000" still holds) or the value is of what follows ("at 95% of target"); and a dotted version right after a name
  the newer clause names with words of a new version ("uses Python 3.10 with FastAPI" /
  "upgraded to Python 3.12"; not "Room 2.14" / "moved to Room 3.05").

Last, for the judge only, a replaced value alone with its units (`_without_bare_value`), where no
phrase of its own can go: right before the noun it counts, which the newer clause names
("Secured 3 interviews for product design roles at Figma" / "I have now secured 5 interviews"
leaves "Secured interviews for product design roles at Figma"; a bare count only: a value with
its own unit or sign measures the words around it, "after 5 PM", "for 950 TRY"), or a length of
time after a comma, before words that say when ("..., 1 hour every Tuesday at 6 PM." / "...
extended to 90 minutes" leaves "..., every Tuesday at 6 PM."). Not when another number stays in
the sentence but a date, a time of day or a version ("Completed 7 geometry proofs, scoring 6
correct": the 6 was counted of the 7), nor a rate the newer clause does not say ("1 hour a
week"), one end of a range, the measure of a comparison ("beyond 1,000 concurrent users"), the
object of "has" or "is", a name, or a number glued to a symbol ("F_n ≤ 2^n").

An item of a note's list (`without_item`) goes whole: a replaced value that stands alone between
commas, after the note's first words, with nothing but its units and what it counts ("Booked two
rooms at the Harbour Inn for the Halifax trip, $250 CAD per night, July 30, 2024." / "... was
raised to $270 CAD per night" leaves "Booked two rooms at the Harbour Inn for the Halifax trip,
July 30, 2024."). A bare number needs what it counts, named by the newer clause ("14,200 words" /
"has grown to 15,100 words"); "math, 90, English, 85" gives no item to cut. Not an item: one
with another value ("1 hour at 60 bpm"), a name, or a verb in it, or the note's own first words.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from curation_pipeline.core.clauses import Piece
from curation_pipeline.core.measures import unit_of
from curation_pipeline.core.number_kinds import says_a_moment
from curation_pipeline.core.sentence_tokens import Token, root, tokenize
from curation_pipeline.core.subjects import VERBS, is_verb, verb_like_opening
from curation_pipeline.core.value_words import value_class

_PREPOSITIONS = frozenset("with of at for to by on in from".split())
# Words that may stand between the preposition and its value: "with about 8 cards".
_APPROXIMATE = frozenset("about around roughly nearly almost over under some approximately".split())
_LINKS = frozenset("and or but".split())
# Words that end what a value counts, as a preposition does: "220ms under 1,000 users", "a $1,250
# max budget after reviewing prices".
_PHRASE_ENDS = _PREPOSITIONS | frozenset("under over per within after before during since until via than".split())


def _valued(token: Token) -> bool:
    """A token that states a value of its own: a number, code, address, name or value word."""
    if token.kind in ("number", "url", "email") or any(ch.isdigit() for ch in token.text) or token.is_name:
        return True
    return bool(token.keys) and value_class(token.lower, token.keys[0]) is not None


def _counted(token: Token) -> bool:
    """A plain word after a value that says what it counts ("cards", "open seats")."""
    lower = token.lower
    return (token.kind == "word" and not _valued(token) and lower not in _PHRASE_ENDS | _LINKS | VERBS
            and not (len(lower) > 4 and lower.endswith(("ing", "ed"))))


def counted_words(tokens: list[Token], n: int) -> frozenset[str]:
    """The keys of the plain words right after a value, which name what it counts ("120
    guests", "12 conditional probability problems"); empty for "a guest list of 25 for ..."."""
    def noun(token: Token) -> bool:  # any plain word: "guests" is also a value word ("guest" access)
        lower = token.lower
        return (token.kind == "word" and bool(token.keys) and not token.is_name and not any(ch.isdigit() for ch in lower)
                and lower not in _PHRASE_ENDS | _LINKS | VERBS and not (len(lower) > 4 and lower.endswith(("ing", "ed"))))
    end = n + 1
    while end < len(tokens) and noun(tokens[end]):
        end += 1
    # "calls/day" is one token: each of its words counts ("1,200 calls per day").
    return frozenset(root(part) for token in tokens[n + 1:end] for part in token.lower.split("/") if part)


def _phrase(tokens: list[Token], gone: Collection[str]) -> tuple[int, int] | None:
    """[start, end) of the tokens to cut for the replaced values `gone` (keys), or None."""
    at = [n for n, token in enumerate(tokens) if set(token.keys) & set(gone)]
    if not at:
        return None
    first, last = at[0], at[-1]
    if any(_valued(token) and not set(token.keys) & set(gone) for token in tokens[first:last + 1]):
        return None  # another value among the replaced ones
    if any(token.is_name and not says_when(token) for token in tokens[first:last + 1]):
        return None  # "with Coach Kim at 2 lessons a week": a person is no value to cut away
    start = first - 1
    while start >= 0 and tokens[start].lower in _APPROXIMATE:
        start -= 1
    if start < 0 or tokens[start].lower not in _PREPOSITIONS:
        return None  # the verb's own object ("has 8 cards"): no phrase of its own
    if tokens[start].lower == "to" and "from" in (t.lower for t in tokens[max(0, start - 3):start]):
        return None  # "from 22 to 15 minutes" is one range: "from 22 per problem" would be left
    end = last + 1
    while end < len(tokens) and (_counted(tokens[end]) or _time_unit(tokens[end])):
        end += 1  # "at 15 hours a week": a length of time goes with its units
    if end < len(tokens) and _valued(tokens[end]):
        return None  # "at 3 PM Lisbon time": the phrase goes on with another value
    if end < len(tokens) and tokens[end].lower == "of":
        return None  # "to 5 sessions of 45 minutes each": "sessions of 45 minutes" would be left
    return start, end


def _time_unit(token: Token) -> bool:
    """A unit of time ("hours", "week", "daily"): part of a length of time, no value of its own."""
    return bool(token.keys) and value_class(token.lower, token.keys[0]) == "time unit"


def _measures_the_noun_before(tokens: list[Token], start: int, end: int) -> bool:
    """Whether the phrase is "of" and one value with its own unit, right after the noun it
    measures: "response time of 220ms". A bare number after "of" counts something unsaid."""
    return (tokens[start].lower == "of" and end - start == 2 and start >= 1
            and re.search(r"[^\d.,]", tokens[start + 1].text) is not None
            and _counted(tokens[start - 1]) and bool(tokens[start - 1].keys))


def _unit_alone(tokens: list[Token], start: int, end: int) -> bool:
    """Whether the phrase is a preposition and one value with its own unit or sign, and nothing
    it counts ("at 6.1%", "for $250"): for a judge's "update" that replaced it with a value of
    the same kind, it goes whole. A bare number ("with 12") may count something unsaid."""
    values = [token for token in tokens[start + 1:end] if token.lower not in _APPROXIMATE]
    return len(values) == 1 and values[0].kind == "number" and re.search(r"[^\d.,]", values[0].text) is not None


# What opens a noun phrase a value may stand in before its noun: "a $700 budget ceiling".
_ARTICLES = frozenset("a an the my our your his her their its".split())


def _modifier(tokens: list[Token], gone: Collection[str]) -> tuple[int, int, int] | None:
    """(start, end, measured end): the replaced value that stands before its noun in a noun
    phrase, and the end of the words it measures; None when it does not (see the docstring)."""
    at = [n for n, token in enumerate(tokens) if set(token.keys) & set(gone)]
    if len(at) != 1:
        return None
    first = at[0]
    if not re.search(r"[^\d.,]", tokens[first].text):
        return None  # a bare count measures the word after it: "a 6 person table", not "a table"
    before = first - 1
    # Right after a verb of something done the noun is its object and the value measures it
    # ("Achieved 65% test coverage"); else the value opens a noun phrase with its article.
    if before < 0 or not _action(tokens[before]):
        if before >= 1 and tokens[before].lower not in _ARTICLES and _counted(tokens[before]):
            before -= 1  # "a strict $1,250 max budget"
        if before < 0 or tokens[before].lower not in _ARTICLES:
            return None
    end = first + 1
    while end < len(tokens) and (_counted(tokens[end]) or _naming_participle(tokens, end)):
        end += 1
    return first, first + 1, end


def _action(token: Token) -> bool:
    """A verb of something done ("Achieved", "set", "paid"), not "has" or "is" and not a
    participle in -ing that opens a phrase."""
    return verb_like_opening(token) and not token.lower.endswith("ing")


def _naming_participle(tokens: list[Token], n: int) -> bool:
    """A word in -ing or -ed that names a kind of the noun right after it ("a $2,500 spending
    cap"), not a participle that opens a phrase ("..., prioritizing camera")."""
    token = tokens[n]
    return (token.kind == "word" and not _valued(token) and token.lower not in _PHRASE_ENDS | _LINKS | VERBS
            and n + 1 < len(tokens) and _counted(tokens[n + 1]))


def _article_for(text: str, at: int) -> str:
    """The text with an "a"/"an" that ends right before `at` agreeing with the word after it."""
    found = re.search(r"\b([Aa])n?\s+$", text[:at])
    if found is None:
        return text
    article = found.group(1) + ("n" if re.match(r"\s*[aeiouAEIOU]", text[at:]) else "")
    return text[:found.start()] + article + " " + text[at:].lstrip()


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"([,;:])(\s*[,;:])+", r"\1", text)
    return re.sub(r"[,;:]\s*([.!?])", r"\1", text).strip(" ,;:")


def without_value(sentence: str, claim: Piece, gone: Collection[str], said: Collection[str], *,
                  modifiers: bool = False) -> str | None:
    """`sentence` without the phrase of `claim` that states the replaced values `gone`, or
    None when it cannot be cut cleanly (see the module docstring). `said`: the keys of the newer
    clause, which must name what the value counts ("10 cards" for "with 8 cards"). `modifiers`:
    also a value before the noun it measures, for a judge's "update" only (see the docstring)."""
    cut = _without_phrase(sentence, claim, gone, said, modifiers=modifiers)
    if cut is None and modifiers:
        cut = _without_bare_value(sentence, claim, gone, said)
    return cut


def _without_phrase(sentence: str, claim: Piece, gone: Collection[str], said: Collection[str], *,
                    modifiers: bool) -> str | None:
    """without_value's cuts of a whole phrase (a preposition and its value, a value before its
    noun, a when, a version)."""
    tokens = [t for t in claim.tokens if t.kind != "punct" or t.text not in ",;"]
    when = _when_phrase(tokens, gone) if modifiers else None
    if when is not None:
        return _cut(sentence, tokens, *when)  # "on Tuesdays", "by March 1, 2024": a when, whole
    span = _phrase(tokens, gone)
    if span is None:
        if not modifiers:
            return None
        return _without_modifier(sentence, tokens, gone, said) or _without_version(sentence, tokens, gone, said)
    start, end = span
    counted = [token for token in tokens[start:end] if (_counted(token) or _time_unit(token)) and token.keys]
    if not counted and _measures_the_noun_before(tokens, start, end):
        counted = [tokens[start - 1]]  # "response time of 220ms": the time is what it measures
    if not counted and modifiers and _unit_alone(tokens, start, end) and not any(_action(t) for t in tokens[:start]) \
            and not (end < len(tokens) and tokens[end].lower == "of"):
        # Not the price of a thing done ("We bought the house in 2015 at $320,000" / "The house
        # is now valued at $480,000"), nor a value of something after it ("at 95% of target").
        return _cut(sentence, tokens, start, end)  # "at 6.1%" of "pre-approval ... at 6.1% from Chase"
    if not counted or counted[-1].keys[0] not in said:
        return None  # "with 10 probability questions" / "12 probability problems": maybe another count
    if end < len(tokens) and tokens[end].lower in _PREPOSITIONS and _tells_of_the_counted(sentence, tokens, end):
        # "with 1,200 daily visitors from organic search": what follows tells of the counted
        # noun, and would be left to tell of something else ("converts at 3.2% from organic search")
        return None
    return _cut(sentence, tokens, start, end)


def _without_bare_value(sentence: str, claim: Piece, gone: Collection[str], said: Collection[str]) -> str | None:
    """For a judge's "update" only, the last cut: the replaced value alone, with its units, where
    no phrase of its own can go ("Added the gallery with 8 cards using Bootstrap" / "The gallery
    now has 10 cards" -> "Added the gallery with cards using Bootstrap"; "..., 1 hour every
    Saturday at 9 AM." / "... extended to 90 minutes" -> "..., every Saturday at 9 AM."). What
    stays says no value the older one held with it: the sentence keeps no other number but a
    date or a time of day, which say when ("Completed 7 problems, scoring 6 correct" without the
    7 would count the 6 against the new total). The value stands either before the noun it
    counts, which the newer clause names (a bare count: a value with its own unit or sign measures
    the words around it, "after 5 PM", "average 15ms latency"), or after a comma as a length of
    time, before words that say when ("every Saturday"); never
    in a range ("from 22 to 15 minutes") nor a list of values, nor the measure of a comparison
    ("beyond 1,000 concurrent users"), nor right after "has" or "is"
    (the verb's own object: "has memory" says nothing), and never a name."""
    tokens = list(claim.tokens)
    at = [n for n, token in enumerate(tokens) if set(token.keys) & set(gone)]
    if not at:
        return None
    first, last = at[0], at[-1]
    if any(not set(token.keys) & set(gone) and not _time_unit(token) for token in tokens[first:last + 1]) \
            or any(token.is_name and not _time_unit(token) for token in tokens[first:last + 1]):
        return None  # two values apart, or a name: no value alone to cut
    start, end = first, last + 1
    while start > 0 and tokens[start - 1].lower in _APPROXIMATE:
        start -= 1
    while end < len(tokens) and _time_unit(tokens[end]):
        end += 1  # "1 hour", "3 days a week"
    before = tokens[start - 1] if start else None
    after = tokens[end] if end < len(tokens) else None
    if before is None or after is None or after.kind != "word":
        return None  # the clause's first or last words: its subject or its whole complement
    if before.lower in ("from", "to", "between") or after.lower in ("to", "and", "or", "through", "until"):
        return None  # a range or a list: "from 22 to 15 minutes", "3 and 4 hours"
    if before.lower in _HAVE_OR_BE:
        return None  # what a thing has or is: "has 16GB memory" without it, "has memory", says nothing
    if before.lower in _COMPARING:
        return None  # the measure of a comparison: "beyond 1,000 concurrent users" is no count of them
    if any(_time_unit(token) and token.keys[0] not in said for token in tokens[:start] + tokens[end:]):
        return None  # a rate the newer clause does not say: "walks 8,000 steps a day" / "walked 14,000 on Saturday"
    if _glued(sentence, tokens[start:end]):
        return None  # part of a formula or a code: "F_n ≤ 2^n" is no count of anything
    words = tokenize(sentence)
    if any(token.kind == "number" and not says_a_moment(words, n) and not _a_version(words, n)
           for n, token in enumerate(words) if not set(token.keys) & set(gone)):
        return None  # another number stays, which held with the replaced value
    count = end - start == 1 and re.fullmatch(r"\d[\d,]*", tokens[start].text) is not None
    if count and _counted_noun(after) and after.keys[0] in said and before.lower not in _ARTICLES:
        return _cut(sentence, tokens, start, end)  # "Secured [3 ]interviews for ..." / "... 5 interviews"
    unit = any(_time_unit(token) for token in tokens[first:end])
    if before.kind == "punct" and before.text in ",;" and unit and after.lower in _OPENS_WHEN:
        return _cut(sentence, tokens, start, end)  # "..., [1 hour ]every Saturday at 9 AM"
    # A value with its own unit or sign measures what is around it ("average 15ms latency",
    # "after 5 PM", "for 950 TRY", "at $6,000 monthly starting"): without it, those words say nothing.
    return None


_HAVE_OR_BE = frozenset("has have had is are was were be been".split())
# Words that compare with the value after them: without it, they compare with nothing.
_COMPARING = frozenset("beyond above below than exceeding past least most within".split())
# Words after a length of time between commas that open when or how often it holds.
_OPENS_WHEN = frozenset("every each on at in from starting beginning".split())


def _glued(sentence: str, tokens: list[Token]) -> bool:
    """Whether the words `tokens` touch a symbol in `sentence` ("2^n", "x=3"): a value written
    as words stands between spaces, a bracket and a stop."""
    found = re.search(r"\W*".join(re.escape(token.text) for token in tokens), sentence)
    if found is None:
        return True
    before, after = sentence[found.start() - 1:found.start()], sentence[found.end():found.end() + 1]
    return before not in ("", " ", "(") or after not in ("", " ", ",", ".", ";", ":", ")")


def _counted_noun(token: Token) -> bool:
    """A plain noun a bare count counts ("interviews", "rejection"): no value word, unit,
    currency, "AM"/"PM", participle or word of a phrase's end."""
    lower = token.lower
    return (token.kind == "word" and bool(token.keys) and not token.is_name and "/" not in lower
            and value_class(lower, token.keys[0]) is None and unit_of(lower) is None
            and lower not in _CURRENCY_CODES | _PHRASE_ENDS | _LINKS | VERBS | {"am", "pm", "a.m", "p.m"}
            and not (len(lower) > 4 and lower.endswith(("ing", "ed"))))


def _a_version(tokens: list[Token], n: int) -> bool:
    """Whether the number tokens[n] is a dotted version right after a name ("Bootstrap 5.3.0"):
    which release of a thing, not a count that held with another value."""
    return n > 0 and tokens[n - 1].is_name and re.fullmatch(r"v?\d+(\.\d+)+\.?", tokens[n].text.lower()) is not None


def _tells_of_the_counted(sentence: str, tokens: list[Token], end: int) -> bool:
    """Whether the phrase opened by tokens[end] follows the counted noun with no comma between
    and holds no value of its own, up to the clause's end: "visitors from organic search" tells
    of the visitors; "attendees for the May 20 party" and "miles from a dealer in Tacoma" say
    their own facts, of the event, and stay."""
    found = re.search(re.escape(tokens[end - 1].text) + r"\s+(" + re.escape(tokens[end].text) + r"[^,;.!?]*)", sentence)
    # "in the first week": a unit of time alone is no fact of its own.
    return found is not None and not any(_valued(token) and not _time_unit(token) for token in tokenize(found.group(1)))


_WHEN_CLASSES = frozenset({"weekday", "month"})


_WHEN_PREPOSITIONS = frozenset("on by at for until from".split())


def says_when(token: Token) -> bool:
    """A weekday, a month, a number or ordinal day, or "AM"/"PM"."""
    if token.kind == "number" or token.lower in ("am", "pm", "a.m", "p.m") \
            or re.fullmatch(r"\d+(st|nd|rd|th)", token.lower):
        return True
    return bool(token.keys) and value_class(token.lower, token.keys[0]) in _WHEN_CLASSES


def _when_phrase(tokens: list[Token], gone: Collection[str]) -> tuple[int, int] | None:
    """[start, end) of a phrase that only says when, opened by a preposition, and holds every
    replaced value ("on Tuesdays", "by March 1, 2024"); None otherwise. Cut whole, it leaves
    the rest of the event ("Signed up for a pottery class at 7 PM at the Riverside center")."""
    at = [n for n, token in enumerate(tokens) if set(token.keys) & set(gone)]
    if not at:
        return None
    start, end = at[0], at[-1] + 1
    while start > 0 and says_when(tokens[start - 1]):
        start -= 1
    while end < len(tokens) and says_when(tokens[end]):
        end += 1
    if start == 0 or tokens[start - 1].lower not in _WHEN_PREPOSITIONS:
        return None
    if start >= 2 and is_verb(tokens[start - 2]):
        return None  # "Garbage pickup is on Mondays": the when is what the clause says
    phrase = tokens[start:end]
    if not all(says_when(t) for t in phrase) or all(t.kind == "number" for t in phrase):
        return None  # "at 7 PM" needs its "PM"; a bare number says how many, not when
    gone = set(gone)
    for n, token in enumerate(phrase):
        following = phrase[n + 1] if n + 1 < len(phrase) else None
        dated = following is not None and set(following.keys) & gone  # "March" of "March 1"
        if not (set(token.keys) & gone or dated or token.lower in ("am", "pm", "a.m", "p.m") and n and set(phrase[n - 1].keys) & gone):
            return None  # a value that still holds ("on Friday 8 PM": only the day changed)
    return start - 1, end


def _cut(sentence: str, tokens: list[Token], start: int, end: int) -> str | None:
    """`sentence` without tokens[start:end]; with "and" before another count, only the value."""
    found = re.search(r"\W*".join(re.escape(token.text) for token in tokens[start:end]), sentence)
    if found is None:
        return None
    cut_from, cut_to = found.start(), found.end()
    link = re.match(r"\s+and\s+(?=\d)", sentence[cut_to:])
    if link is not None:
        # "with [150 commits and ]12 merged branches": the preposition stays for what follows
        cut_from = found.start() + len(tokens[start].text)
        cut_to += link.end()
    rest = _tidy(sentence[:cut_from] + " " + sentence[cut_to:])
    if len(_EMPTY_BRACKETS.findall(rest)) > len(_EMPTY_BRACKETS.findall(sentence)):
        return None  # all a bracket said: "Deployed final Docker image (130MB) to AWS ECR"
    return rest


_EMPTY_BRACKETS = re.compile(r"[(\[]\W*[)\]]")


def _without_modifier(sentence: str, tokens: list[Token], gone: Collection[str], said: Collection[str]) -> str | None:
    """`sentence` without a replaced value that stands before its noun ("a $700 budget ceiling"
    -> "a budget ceiling"), or None (see the module docstring)."""
    span = _modifier(tokens, gone)
    if span is None:
        return None
    start, end, measured_end = span
    counted = [token for token in tokens[end:measured_end] if token.keys]
    if not counted or counted[-1].keys[0] not in said:
        return None  # the newer clause must name what the value measures
    found = re.search(r"\W*".join(re.escape(token.text) for token in tokens[start:measured_end]), sentence)
    if found is None:
        return None
    value = re.match(re.escape(tokens[start].text) + r"\s*", sentence[found.start():])
    if value is None:
        return None
    cut = sentence[:found.start()] + sentence[found.start() + value.end():]
    return _tidy(_article_for(cut, found.start()))


# Keys of the words that say a new version ("upgraded to Python 3.12", "bumped to version 2.4").
_NEW_VERSION_WORDS = frozenset({"upgrad", "updat", "bump", "migrat", "vers", "releas", "downgrad", "patch", "install"})


def _without_version(sentence: str, tokens: list[Token], gone: Collection[str], said: Collection[str]) -> str | None:
    """`sentence` without a replaced version right after the name it versions, when the newer
    clause names it too and says a new version ("uses Python 3.10 with FastAPI" / "upgraded to
    Python 3.12" -> "uses Python with FastAPI"); None otherwise. Only a dotted version: "Room
    101" is which room."""
    at = [n for n, token in enumerate(tokens) if set(token.keys) & set(gone)]
    if len(at) != 1 or at[0] == 0:
        return None
    value, name = tokens[at[0]], tokens[at[0] - 1]
    if not (re.fullmatch(r"v?\d+(\.\d+)+", value.lower) and name.is_name and name.keys and name.keys[0] in said
            and set(said) & _NEW_VERSION_WORDS):
        return None  # "Room 2.14" / "moved to Room 3.05": which room, not a version
    found = re.search(re.escape(name.text) + r"\s+" + re.escape(value.text), sentence)
    if found is None:
        return None
    return _tidy(sentence[:found.start() + len(name.text)] + sentence[found.end():])


# Currency codes that follow an amount ("$250 CAD per night"): part of the amount, no name.
_CURRENCY_CODES = frozenset("usd eur gbp cad aud nzd jpy chf cny inr sek nok dkk mxn brl sgd hkd zar".split())
# Words an item may hold beside its value and what it counts: "$45 a month", "$42 per box".
_ITEM_LINKS = frozenset("a an per each".split())


def without_item(sentence: str, claim: Piece, gone: Collection[str], said: Collection[str]) -> str | None:
    """`sentence` without the item of a note's list that states the replaced values `gone` (see
    the module docstring), or None when they stand in no such item. `said`: the keys of the
    newer clause, which must name what a bare number counts."""
    tokens = list(claim.tokens)
    at = [n for n, token in enumerate(tokens) if set(token.keys) & set(gone)]
    if not at:
        return None
    breaks = [n for n, token in enumerate(tokens) if token.kind == "punct" and token.text in ",;"]
    start = max((n + 1 for n in breaks if n < at[0]), default=0)
    end = min((n for n in breaks if n > at[0]), default=len(tokens))
    if at[-1] >= end or start == 0 and claim.first == 0:
        return None  # values in two items, or the note's own first words
    words = [token for token in tokens[start:end] if token.kind != "punct" or token.text in "$€£%"]
    while words and words[0].lower in _APPROXIMATE:
        words = words[1:]
    if not words or not set(words[0].keys) & set(gone):
        return None  # the item opens with another word ("for the Halifax trip")
    counted: list[Token] = []
    unit = bool(re.search(r"[^\d.,]", words[0].text))  # "$250", "45ms": a sign or unit of its own
    for previous, token in zip(words, words[1:]):
        if set(token.keys) & set(gone) or token.lower in _ITEM_LINKS or _time_unit(token):
            unit |= _time_unit(token)
            continue
        if previous.kind == "number" and (token.lower in _CURRENCY_CODES or unit_of(token.lower) is not None):
            unit = True  # "$250 CAD", "340 GB": the amount's own unit
            continue
        if not _counted(token):
            return None  # another value, a name or a verb: the item says more than its value
        counted.append(token)
    if counted and counted[-1].keys and counted[-1].keys[0] not in said:
        return None  # "$5,000 deposit" / a quote: what it counts is not what changed
    if not counted and not unit:
        return None  # a bare number counts something unsaid: "math, 90, English, 85"
    return _cut(sentence, tokens, start, end)

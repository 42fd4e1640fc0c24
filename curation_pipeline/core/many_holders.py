"""Relations that hold many values at once: a new value is one more, not a replacement. Pure.

"Ellen Marsh's sister is Joan Marsh." and, later, "Ellen Marsh's sister is Ruth Marsh." name two
sisters. The words of a one-value attribute ("Ellen's manager is ...", "The capital of ... is
...") read a new name as a new value (supersession.py); superseding here would mark Joan no
longer Ellen's sister, which nothing said. So a pair of clauses that both state one of these
relations is linked, never superseded, unless the newer memory says the older value no longer
holds (a change cue: "now", "Correction: ...", "no longer"; change_cues.py).

A closed vocabulary, each entry with a test and a counter-example
(curation_pipeline_tests/core/test_many_holders.py):

- **kin and company** as the relation a clause states, who the relative is ("X's sister is Y",
  "the daughter of X is Y", "Y is X's cousin", "Y is my sister", "X has a daughter named Y",
  "Our neighbours are the Hendersons"): sister, brother, sibling, child, son, daughter, cousin,
  aunt, uncle, niece, nephew, grandchild, grandparent, grandmother, grandfather, friend,
  colleague, neighbour, classmate, teammate, roommate, with "step-" and "-in-law". Not parents
  and spouses, of whom the words take one ("The mother of Leo is ..."); not the one of their
  kind ("only", "eldest", "youngest", "best", "favourite": "Ellen's best friend is Joan" / "...
  is Ruth" is an update); not what is said of a relative ("My sister lives in Oslo" / "... in
  Bergen", "The daughter of Ana is 5 years old"); not a relative that is the value of another
  attribute ("The user's emergency contact is their brother");
- **twin towns**: "sister city", "twin town", "twinned with";
- **borders**: "borders", "shares a border with", "is bordered by" (not "lives near the border
  with France");
- **other names**: "also known as", "aka";
- **one of several**: a clause that opens with "One of" and says which member ("One of Ines
  Varga's notable works is ..."); not "The project is one of our top priorities" / "... lowest
  priorities" (its rank changed), nor "works at one of the Big Four firms, Deloitte";
- **memberships of two kinds**: "is a member of the Green Party" / "... of the Sierra Club" (the
  nouns that end the names differ); "the Labour Party" / "the Green Party" is one party for
  another;
- **languages spoken**: "speaks" and a language's name that ends the clause, "is fluent in"
  (not "speaks at the summit", "speaks English to callers by default");
- **founders**: "founded by", "co-founded by" and a name (not "founded in 2011", one year for
  another, nor "founded by a single donor");
- **awards won**: "has won the Booker Prize" (not "have won 12 games", a count);
- **listings**: "is listed on the London Stock Exchange", the name ending the clause (not "is
  listed at $450,000", a price, nor "is listed on Zillow for $450,000");
- **a river's course**: "flows through Zagreb" (not "flows into the Danube", its one mouth);
- **one place of several**: "has an office in Leeds", "has offices in Paris and Madrid", "has a
  branch in Fenwick", of a closed list of places (not "has its headquarters in Leeds", "has a
  seat in row 12");
- **instruments played**: "plays the cello", of a closed list of instruments (not "plays the
  role of Hamlet", "plays the position of forward");
- **allergies**: "is allergic to peanuts".

And whatever the relation, a newer clause that says it adds one ("also", "too" at its end, "as
well", "in addition", "additionally": "Kofi Mensah also speaks French") keeps the older value
beside it (`says_one_more`), unless it says something changed or corrects (supersession.py
asks that first).
"""

from __future__ import annotations

from collections.abc import Sequence

from curation_pipeline.core.sentence_tokens import Token, root
from curation_pipeline.core.subjects import MONTH_WORDS, WEEKDAYS, kin_root

# Relatives and company a person has several of. Parents and spouses are left out: "The mother
# of Leo is Ellen" / "... is Joan" is one value for another.
_MANY = frozenset(root(word) for word in """
sister sisters brother brothers sibling siblings child children kid kids son sons daughter daughters
cousin cousins aunt aunts uncle uncles niece nieces nephew nephews grandchild grandchildren grandson
grandsons granddaughter granddaughters grandparent grandparents grandmother grandmothers grandfather
grandfathers grandma grandpa friend friends colleague colleagues coworker coworkers co-worker
co-workers neighbour neighbours neighbor neighbors classmate classmates teammate teammates roommate
roommates housemate housemates flatmate flatmates
""".split())
# Words before a relative that make them the one of their kind: "Ana's only child", "her eldest
# daughter", "Ellen's best friend".
_THE_ONE = frozenset("only eldest oldest youngest best favourite favorite".split())
_BE = frozenset("is are was were".split())


def holds_many(tokens: Sequence[Token]) -> bool:
    """Whether a clause states a relation that holds many values at once (the module's list)."""
    words = [t for t in tokens if t.kind != "punct"]
    for n, token in enumerate(words):
        following = words[n + 1] if n + 1 < len(words) else None
        after = root(following.lower) if following is not None else ""
        previous = words[n - 1].lower if n else ""
        if token.is_name and n:
            continue  # "Sister Act", "Brothers Grimm": words of a name
        if token.lower == "one" and after == "of" and n == 0 and _names_a_member(words):
            return True  # "One of Ines Varga's works is ..."; not "The project is one of our
            # top priorities" / "... lowest priorities", where the project's rank changed
        if token.lower in ("twinned", "aka") or token.lower in ("sister", "twin") and after in ("city", "town"):
            return True
        if token.lower == "border" and after == "with" and n > 1 and root(words[n - 2].lower) == root("share"):
            return True  # "shares a border with", not "lives near the border with France"
        if token.lower == "bordered" and after == "by" or token.lower == "borders" and n and following is not None \
                and (following.is_name or after == "the"):
            return True  # "Arvenia borders Norwyn"
        if token.lower == "known" and previous == "also" and after == "as":
            return True
        if _relative(token) and previous not in _THE_ONE and _says_who(words, n):
            return True
        if following is not None and _of_many_values(words, n, previous, after):
            return True
    return False


_HAS = frozenset("has have had".split())
_BE_OR_ADVERB = _BE | frozenset("also now still".split())
# Words a language may be followed by in the clause that states it: "speaks Twi fluently".
_HOW_WELL = frozenset("fluently well natively too".split())
# What a thing has one of several of, in one place each: "has an office in Leeds".
_PLACES_OF_SEVERAL = frozenset("""
office offices branch branches store stores shop shops warehouse warehouses factory factories plant
plants campus campuses studio studios restaurant restaurants location locations site sites hub hubs
house houses home homes flat flats apartment apartments cabin cabins clinic clinics
""".split())
_CALENDAR = WEEKDAYS | MONTH_WORDS
# Instruments one may play several of.
_INSTRUMENTS = frozenset("""
piano guitar bass violin viola cello drums flute clarinet saxophone sax trumpet trombone tuba harp
ukulele banjo mandolin oboe bassoon accordion organ keyboard keyboards harmonica recorder
""".split())


def _of_many_values(words: Sequence[Token], n: int, previous: str, after: str) -> bool:
    """Whether the words at `n` state a relation whose values are many at once, by the words
    around them (the module's list, from "languages spoken" on)."""
    word, following = words[n].lower, words[n + 1]
    if word in ("speaks", "speak") and _a_name_that_ends(words, n + 1):
        return True  # "Kofi Mensah speaks Twi"; not "speaks at the Accra summit", "speaks Tuesday
        # afternoon at the summit", "speaks English to callers by default" (a setting of one)
    if word == "fluent" and after == "in":
        return True
    if word in ("founded", "co-founded", "cofounded") and after == "by" and n + 2 < len(words) and words[n + 2].is_name:
        return True  # "was founded by Lena Ortiz"; not "founded in 2011", "founded by a single donor"
    if word == "won" and previous in _HAS and (following.lower == "the" or following.is_name):
        return True  # "has won the Booker Prize"; not "have won 12 games"
    if word == "listed" and after == "on" and previous in _BE_OR_ADVERB and _a_name_that_ends(words, n + 2):
        return True  # "is listed on the London Stock Exchange"; not "is listed on Zillow for
        # $450,000", "The support email listed on the website is ...", "is listed at $450,000"
    if word == "flows" and after == "through" and n + 2 < len(words) and words[n + 2].is_name:
        return True  # "The Sava flows through Zagreb"; not "flows into the Danube", "All
        # payments flow through Stripe"
    if word in ("plays", "play") and after == "the" and n + 2 < len(words) and words[n + 2].lower in _INSTRUMENTS:
        return True  # "Maya plays the guitar"; not "plays the role of Hamlet"
    if word == "allergic" and after == "to":
        return True  # "Alice is allergic to peanuts"
    # "has an office in Leeds", "has offices in Paris and Madrid": one place of several; not "has
    # its headquarters in Leeds", "has a seat in row 12", "has a budget in the range of $50k".
    if previous in _HAS and word in ("a", "an") and n + 2 < len(words):
        word, after, n = words[n + 1].lower, words[n + 2].lower, n + 1
    return previous in _HAS and word in _PLACES_OF_SEVERAL and after == "in"


def _a_name_that_ends(words: Sequence[Token], n: int) -> bool:
    """A name (maybe after "the") at `n` that goes on to the clause's end, or to a word of how
    well ("speaks Twi fluently"); a day or a month is no such name."""
    if n < len(words) and words[n].lower == "the":
        n += 1
    if n >= len(words) or not _capitalised(words[n]) or words[n].lower in _CALENDAR:
        return False
    while n < len(words) and (_capitalised(words[n]) or words[n].lower in ("and", "of")):
        n += 1
    return n == len(words) or words[n].lower in _HOW_WELL


def _capitalised(token: Token) -> bool:
    """A word of a name, "New" of "New York" too (a function word to the tokenizer)."""
    return token.kind == "word" and token.text[:1].isupper()


def says_one_more(tokens: Sequence[Token]) -> bool:
    """Whether a clause says it adds one beside what holds ("Kofi Mensah also speaks French",
    "... volunteers at the animal shelter too", "plays the piano as well"). "Too" only at the
    clause's end: "too late" says how late. A sentence that opens with "Also," or "In addition,"
    only goes on to another point: "Also, the office Wi-Fi password is greenowl9" gives the
    password a new value."""
    words = [t.lower for t in tokens if t.kind != "punct"]
    if words[:1] in (["also"], ["additionally"]) or words[:2] == ["in", "addition"]:
        return False
    pairs = set(zip(words, words[1:]))
    return "also" in words or "additionally" in words or bool(words) and words[-1] == "too" \
        or ("as", "well") in pairs or ("in", "addition") in pairs


def _relative(token: Token) -> bool:
    """A relative or companion of whom one has several, with "step-" and "-in-law" ("stepbrother",
    "brother-in-law")."""
    return kin_root(token.lower) in _MANY


def _says_who(words: Sequence[Token], n: int) -> bool:
    """Whether the relative's noun at `n` is the relation the clause states, who the relative
    is: last after a name's possessive ("Ruth is Ellen's sister"), before "named" or "called"
    ("a daughter named Ada"), or before "is" and a name, maybe after "of" and its owner ("Ellen's
    sister is Joan", "The sister of Tom is Ruth"). Not when "is" says something of them ("My
    sister is a nurse", "The daughter of Ana is 5 years old", "the kids are in bed by 8:30 PM"),
    nor when the relative is the value of another attribute ("The user's emergency contact is
    their brother")."""
    if n + 1 == len(words):
        return words[0].is_name and n > 0 and (words[n - 1].text.endswith(("'s", "’s"))
                                               or words[n - 1].lower in ("my", "our", "his", "her", "their", "your"))
    following = words[n + 1].lower
    if following in ("named", "called"):
        return True
    rest = words[n + 1:]
    if following == "of":  # "the sister of Tom is ...": on to its verb
        verb = next((m for m, t in enumerate(rest) if t.lower in _BE), None)
        rest = rest[verb:] if verb is not None else []
    return len(rest) > 1 and rest[0].lower in _BE and _a_name_at(rest, 1)


def _a_name_at(words: Sequence[Token], n: int) -> bool:
    """A name at `n`, maybe after "the" ("the Hendersons")."""
    if n < len(words) and words[n].lower == "the":
        n += 1
    return n < len(words) and words[n].is_name


def _names_a_member(words: Sequence[Token]) -> bool:
    """Whether a clause that opens with "One of" says which member, after "is": "One of Ines
    Varga's notable works is The Glass Orchard", "One of Ana's hobbies is chess"; not "One of my
    sisters, Eva, lives in Graz", which says where she lives."""
    verb = next((m for m, t in enumerate(words) if t.lower in _BE), None)
    return verb is not None and verb + 1 < len(words)


def memberships_of_two_kinds(old: Sequence[Token], new: Sequence[Token]) -> bool:
    """Whether two clauses say their subject is a member of organisations of two kinds, told by
    the nouns that end the names: "Ana is a member of the Green Party" / "... of the Sierra
    Club" are two memberships; "... of the Labour Party" / "... of the Green Party" one party
    for another."""
    def head(tokens: Sequence[Token]) -> str | None:
        words = [t for t in tokens if t.kind != "punct"]
        at = next((m for m, t in enumerate(words[:-1]) if root(t.lower) == "member" and words[m + 1].lower == "of"), None)
        return root(words[-1].lower) if at is not None and at + 2 < len(words) else None
    mine, theirs = head(old), head(new)
    return mine is not None and theirs is not None and mine != theirs

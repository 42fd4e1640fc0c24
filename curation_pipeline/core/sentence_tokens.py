"""Tokens of one sentence, as the fact guard's meaning checks see them. Pure.

A sentence becomes a list of `Token`s: words (contractions and hyphenated words stay whole),
numbers (amounts, dates, times, `5th`), URLs, e-mail addresses, single CJK characters (those
scripts put no spaces between words), and the punctuation that ends a clause. Each content token carries *keys*: the casefolded word reduced to a crude root
(`approved`, `approves`, `approval` -> `approv`), so two phrasings of one claim share keys.
Function words ("the", "is", "not", "must", ...) carry no key: they say nothing about what a
sentence is about, and the negations, modals and quantifiers among them are compared separately
(meaning_markers.py).

`root` is a handful of suffix rules, not a linguistic stemmer: the keys only have to agree
between two phrasings of the same sentence, and an odd root ("denial" -> "deni") is harmless as
long as both sides go through the same function. A full stemmer would be a dependency for no
measurable gain here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Words that say nothing about what a sentence is about: articles, pronouns, auxiliaries,
# prepositions, connectives, and the negations, modals and quantifiers (compared on their own).
# A capitalised one that starts a sentence is no name either (fact_guard's names), nor is a
# pronoun's contraction ("I've now read 15 books" names no one).
FUNCTION_WORDS = frozenset("""
a an the this that these those it its i we you he she they me us him her them my our your his
their there here what which who whom whose when where why how if then else so and or but nor
not no yes also both either neither each every all any some most many much more less few
in on at by for from to of with without about above below after before during since until
into onto over under between among through per via as is are was were be been being has have
had do does did can could should would will shall may might must please note however although
though because while whereas therefore thus hence meanwhile moreover furthermore besides
otherwise instead still yet just only even again always never often sometimes usually
today tomorrow yesterday now later soon once twice first
new old other another same such very really quite rather too ok okay hi hello dear thanks
everyone everybody someone somebody anyone anybody nobody everything something anything nothing
plus around roughly approximately circa nearly almost
i'm i've i'll i'd we're we've we'll we'd you're you've you'll you'd they're they've they'll they'd
he'd he'll she'd she'll it'll that'll there'll
""".split())

# Words that open a new clause: a negation or a quantifier does not reach past them, and the
# order of two names on either side of one says nothing about who does what to whom.
CLAUSE_WORDS = frozenset("""
and or but while whereas because although though so then which who when if unless until before
after since once where
""".split())

# CJK scripts write no spaces between words: each character is a token of its own, so two
# phrasings of a CJK sentence still share keys.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(
    rf"""
      (?P<url>(?:https?://|www\.)[^\s<>"'`]+)
    | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
    | (?P<cjk>[{_CJK}])
    | (?P<number>[$€£]?\d(?:[^\W{_CJK}]|[,.:/%-])*)
    | (?P<word>[^\W\d_{_CJK}](?:(?:[^\W{_CJK}]|['’./&@-])*[^\W{_CJK}])?)
    | (?P<punct>[;:,()!?&、，；：（）])
    """,
    re.VERBOSE,
)
_TRAILING = ".,:;!?'’)"
_CLAUSE_MARKS = ",;:!?)"
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "als", "al",
             "ies", "ied", "es", "ed", "ly", "s")


@dataclass(frozen=True)
class Token:
    text: str  # as written (trailing punctuation of a URL or number trimmed)
    lower: str  # casefolded, curly apostrophe made straight, possessive "'s" dropped
    kind: str  # "word" | "number" | "url" | "email" | "cjk" (one character) | "punct"
    keys: tuple[str, ...]  # what the token is about (empty for function words and punctuation)

    @property
    def is_name(self) -> bool:
        """A capitalised word that is not a function word ("Priya", "HV-ATL-02", "SAP"), or one
        that says something all the same ("US", the month "May": as "April" is)."""
        return self.kind == "word" and self.text[:1].isupper() and (self.lower not in FUNCTION_WORDS
                                                                    or is_acronym(self.text) or bool(self.keys))

    @property
    def ends_clause(self) -> bool:
        return (self.kind == "punct" and self.text != "&") or self.lower in CLAUSE_WORDS


@functools.lru_cache(maxsize=1 << 16)
def root(word: str) -> str:
    """A crude root of `word` (casefolded): one common suffix off, a doubled last consonant and
    a final "e" dropped, so "stopped" ~ "stop", "approval" ~ "approve", "ships" ~ "shipping".
    Cached: the pair rules ask for the roots of the same few words millions of times a cycle."""
    stem = word.casefold()
    for suffix in _SUFFIXES:
        if suffix == "s" and stem.endswith("ss"):
            break  # "pass", "less", "access": no plural
        if stem.endswith(suffix) and len(stem) - len(suffix) >= 3:
            stem = stem[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "ls":
        stem = stem[:-1]
    if len(stem) > 3 and stem.endswith("e"):
        stem = stem[:-1]
    return stem


# A frequency said as an adverb is the unit it repeats: "cleaned daily" ~ "cleaned every day"
# (meaning_markers.py does not count "every day" as a quantifier).
FREQUENCIES = {"hourly": "hour", "daily": "day", "nightly": "night", "weekly": "week",
                "fortnightly": "fortnight", "monthly": "month", "quarterly": "quarter",
                "yearly": "year", "annually": "year", "annual": "year"}


def is_acronym(text: str) -> bool:
    """A word in capitals ("US", "IT", "EU"): a name, even where its lower case is a function
    word ("the US cluster" is not "the us cluster")."""
    return len(text) >= 2 and text.isalpha() and text.isupper()


def _keys(kind: str, lower: str, text: str = "") -> tuple[str, ...]:
    if kind == "cjk":
        return (lower,)
    if kind == "word" and is_acronym(text) and lower in FUNCTION_WORDS:
        return (lower,)  # "US", "IT": a name, though its lower case is a function word
    if kind == "punct" or lower in FUNCTION_WORDS or lower.endswith("n't") or lower == "cannot":
        return ()
    if kind == "number":
        return (lower.lstrip("$€£").replace(",", ""),)
    if kind == "word" and "-" in lower and not any(ch.isdigit() for ch in lower):
        # "sign-off" ~ "sign off", "follow-up" ~ "follow up"; ids such as "HV-ATL-02" stay whole.
        return tuple(root(part) for part in lower.split("-") if part and part not in FUNCTION_WORDS)
    if lower in FREQUENCIES:
        return (FREQUENCIES[lower],)
    return (root(lower) if kind == "word" else lower,)


def tokenize(sentence: str) -> list[Token]:
    tokens = []
    for match in _TOKEN.finditer(sentence):
        kind = match.lastgroup
        text = match.group()
        tail = ""
        if kind in ("url", "number", "email"):
            trimmed = text.rstrip(_TRAILING) or text
            tail, text = text[len(trimmed):], trimmed
        lower = text.casefold().replace("’", "'")
        if kind == "word" and lower.endswith("'s"):
            lower = lower[:-2]
        elif kind == "word" and lower.endswith("'"):
            lower = lower[:-1]  # a plural's possessive: "mentees' stories"
        keys = _keys(kind, lower, text)
        if lower == "may" and text.startswith("May") and _the_month(tokens, sentence[match.end():]):
            keys = ("may",)
        tokens.append(Token(text, lower, kind, keys))
        # The punctuation a number or address ends on still ends its clause: "on April 20,
        # pushed to ..." is two clauses; a list of numbers ("sides 7, 9, 12 cm", "May 1, 2024")
        # is not cut.
        if not sentence[match.end():].lstrip()[:1].isdigit():
            tokens.extend(Token(mark, mark, "punct", ()) for mark in tail if mark in _CLAUSE_MARKS)
    return tokens


# Words before "May" that make it the month: "in May", "by May 3", "early May", "the May rent".
_BEFORE_A_MONTH = frozenset("""
in on by for until till since from to of during before after through early late mid last next
this each every the our my your their
""".split())


def _the_month(before: list[Token], after: str) -> bool:
    """Whether a capitalised "May" is the month, not the modal that opens a question ("May I
    ...") nor a name ("Aunt May is visiting", "the report by May Chen"): before a day ("May
    9"), after one ("9 May"), or after a word that opens a time ("in May", "for May 9"), with no
    surname after it."""
    previous = before[-1] if before else None
    following = after.lstrip()
    if following[:1].isdigit():
        return True
    if following[:1].isupper():
        return False  # "May Chen"
    return previous is not None and (previous.kind == "number" or previous.lower in _BEFORE_A_MONTH)


def content_keys(tokens: list[Token]) -> frozenset[str]:
    """What a sentence is about: the keys of all its tokens."""
    return frozenset(key for token in tokens for key in token.keys)

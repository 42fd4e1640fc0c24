"""Fact tokens: the things a rewrite must never lose or invent. Pure.

URLs, e-mail addresses, dates and times, code identifiers, numbers and proper names, found by
pattern in a text (`extract_facts`) and looked for as whole tokens in another (`occurs`).
The fact guard refuses an answer that lacks a token of its inputs or has one none of them has;
coverage (coverage.py) asks a clause's tokens of the text that covers it.

Proper names are recognised as capitalised words (and acronyms) other than common function words
("The", "However", ...). They are compared case-insensitively and as whole words, so a name that
starts a sentence in the input ("Customer ...") may appear in lower case in the output, and a
capitalised word of the output counts as new only if no input has that word at all. Identifiers
and URLs compare case-sensitively: "Xq7-LmN2-pQ9" is not "xq7-lmn2-pq9".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from curation_pipeline.core.sentence_tokens import FUNCTION_WORDS
from curation_pipeline.core.text import strip_merge_markers

# Kinds, in extraction order: each kind's matches are masked before the next kind is looked for,
# so the "2024" of a date or the "acme" of an e-mail is not counted again as a number or name.
KINDS = ("url", "email", "date", "identifier", "number", "name")

# "www." after an "@" is an e-mail address's domain ("aa@www.example"), not a link of its own.
_URL = re.compile(r"\b(?:https?://|(?<!@)www\.)[^\s<>\"'`]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE = re.compile(
    "|".join((
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
        r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",
        rf"\b{_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?\b",
        rf"\b{_DAY}\s+{_MONTH}(?:,?\s+\d{{4}})?\b",
        rf"\b{_MONTH}\s+\d{{4}}\b",
        r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?(?!\w)",
        r"\bQ[1-4]\s+\d{4}\b",
    )),
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(
    "|".join((
        r"`[^`\n]+`",  # anything in backticks
        r"(?<![\w&])#[A-Za-z][\w-]*",  # a channel or tag: #vesper-alerts, #refunds
        r"(?<![\w/])(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]+)+",  # /a/path, ./rel/path
        r"\bv\d+(?:\.\d+)+\b",  # v1.2.3
        r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?",  # dotted.name, module.func()
        r"\b[A-Za-z_]\w*\(\)",  # call()
        r"(?<![\w.])\d+(?:\.\d+)+-?[A-Za-z]+\b",  # a decimal with its unit: 2.3x, 1.5GB, 4.6-star
        r"\b\w*_\w+\b",  # snake_case, CONSTANT_CASE
        r"\b[a-z]+[A-Z]\w*\b",  # camelCase
        # PascalCase with an inner capital, but not a surname's prefix: McEwan, DeVito, MacArthur
        r"\b(?!(?:Mc|Mac|De|Di|Da|Du|La|Le|Van|Von)[A-Z][a-z]+\b)[A-Z][a-z0-9]+[A-Z]\w*\b",
        # letters and digits: S3, INV-2024-7 (never begun inside a decimal: "4.6-star" is not "6-star")
        r"(?<!\d\.)\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])\w+(?:-\w+)*\b",
    ))
)
# e.g, i.e: dotted letters, not identifiers; a dotted version ("4.8.2") is a fact.
_ABBREVIATION = re.compile(r"(?:[^\W\d]\.)+[^\W\d]?\.?")
_NUMBER = re.compile(r"(?<![\w.,])[-+]?\d+(?:[.,]\d+)*%?")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")

# Capitalised words that are not names: sentence starters and function words.
_NOT_NAMES = FUNCTION_WORDS
# "every Sunday" says what "Sundays" says (each of them, recurring), so both are the one token
# "Sundays"; a lone "Sunday" (one day: "on Sunday") is another token, as is "every second Sunday".
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_EVERY_BEFORE = re.compile(r"\b(?:every|each)\s+$", re.IGNORECASE)

# Kinds compared case-insensitively; identifiers and URLs are case-sensitive.
_CASELESS = {"email", "date", "name", "number"}


@dataclass(frozen=True)
class Facts:
    """The fact tokens of a text, by kind; each kind a set of tokens as they appear."""

    by_kind: dict[str, frozenset[str]]

    def tokens(self) -> list[tuple[str, str]]:
        """(kind, token) pairs, sorted for stable messages."""
        return sorted((kind, token) for kind in KINDS for token in self.by_kind.get(kind, ()))


def _clean(kind: str, token: str) -> str:
    if kind == "url":
        return token.rstrip(".,;:!?)]}'\"").rstrip("/")
    if kind == "identifier":
        # A path that ends a sentence ("see /v1/exports.") does not own the full stop.
        return token.strip("`").strip() if token.startswith("`") else token.rstrip(".")
    if kind == "number":
        token = token.lstrip("+")
        return token.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?", token) else token
    if kind == "name":
        return re.sub(r"['’]s$", "", token).strip("'’-")
    return " ".join(token.split())


def _standing(kind: str, token: str, text: str) -> str | None:
    """`token` as it stands in `text` (`occurs`), or None. Masking an earlier kind's match makes
    boundaries the text does not have: the "-2" left of "3.5h-2" once "3.5h" is masked stands
    in the text only as "2". A token that stands nowhere would make the text fail to say
    itself, and every faithful answer fail the guard."""
    if not token or occurs(kind, token, text):
        return token
    unsigned = token.lstrip("+-") if kind == "number" else ""
    return unsigned if unsigned and occurs(kind, unsigned, text) else None


def extract_facts(text: str) -> Facts:
    """Every fact token of `text` (`[merged: ...]` markers flattened first)."""
    flat = remaining = strip_merge_markers(text or "")
    found: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for kind, pattern in (("url", _URL), ("email", _EMAIL), ("date", _DATE),
                          ("identifier", _IDENTIFIER), ("number", _NUMBER)):
        for match in pattern.finditer(remaining):
            token = _standing(kind, _clean(kind, match.group(0)), flat)
            if token and not _ABBREVIATION.fullmatch(token):
                found[kind].add(token)
        # Mask with spaces so the remaining text keeps its word boundaries.
        remaining = pattern.sub(" ", remaining)
    for match in _WORD.finditer(remaining):
        word = _clean("name", match.group(0))
        if word.casefold() in _WEEKDAYS and _EVERY_BEFORE.search(remaining[:match.start()]):
            word += "s"
        if len(word) > 1 and word[0].isupper() and word.casefold() not in _NOT_NAMES and _standing("name", word, flat):
            found["name"].add(word)
    return Facts({kind: frozenset(tokens) for kind, tokens in found.items()})


def occurs(kind: str, token: str, text: str) -> bool:
    """Whether `token` stands in `text` as a whole token (not inside a longer word or number)."""
    return _standing_pattern(kind, token).search(text) is not None


def occurrences(kind: str, token: str, text: str) -> int:
    """How many times `token` stands in `text` as a whole token: "the University of Bucharest
    ... the city of Bucharest" says the name twice, and a text that says it once does not say
    both."""
    return sum(1 for _ in _standing_pattern(kind, token).finditer(text))


@lru_cache(maxsize=8192)
def _standing_pattern(kind: str, token: str) -> re.Pattern:
    flags = re.IGNORECASE if kind in _CASELESS else 0
    # Whitespace inside a token (a date "March 5, 2024") may be any run of whitespace.
    body = r"\s+".join(re.escape(part) for part in token.split())
    if kind == "number":
        # "1000" also stands as "1,000"; "42" does not stand inside "420", "4.42" or "42.5".
        body = _digits_with_separators(token)
        pattern = rf"(?<![\w.,]){body}(?![\w%]|[.,]\d)"
    elif kind == "name":
        if token.casefold()[:-1] in _WEEKDAYS and token.casefold().endswith("s"):
            body = rf"(?:{body}|(?:every|each)\s+{re.escape(token[:-1])})"  # "Sundays" ~ "every Sunday"
        pattern = rf"(?<![\w]){body}(?![\w]|['’-]\w)|(?<![\w]){body}(?=['’]s\b)"
    else:
        pattern = rf"(?<![\w]){body}(?![\w])" if token[:1].isalnum() and token[-1:].isalnum() else re.escape(token)
    return re.compile(pattern, flags)


def _digits_with_separators(number: str) -> str:
    """Regex matching a number with or without thousands separators ("1000" ~ "1,000")."""
    match = re.fullmatch(r"(-?)(\d+)((?:\.\d+)?%?)", number)
    if not match or len(match.group(2)) <= 3:
        return re.escape(number)
    sign, digits, tail = match.groups()
    head, groups = digits[: len(digits) % 3 or 3], [digits[i:i + 3] for i in range(len(digits) % 3 or 3, len(digits), 3)]
    return re.escape(sign) + head + "".join(f",?{group}" for group in groups) + re.escape(tail)


def missing_facts(inputs: Sequence[str], output: str) -> list[tuple[str, str]]:
    """Fact tokens some input has that the output lacks."""
    flat_output = strip_merge_markers(output)
    wanted = sorted({pair for text in inputs for pair in extract_facts(text).tokens()})
    return [(kind, token) for kind, token in wanted if not occurs(kind, token, flat_output)]


def introduced_facts(inputs: Sequence[str], output: str) -> list[tuple[str, str]]:
    """Fact tokens of the output that no input has."""
    flat_inputs = [strip_merge_markers(text) for text in inputs]
    return [
        (kind, token) for kind, token in extract_facts(output).tokens()
        if not any(occurs(kind, token, text) for text in flat_inputs)
    ]

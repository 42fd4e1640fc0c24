"""The fact guard: judge an LLM answer before anything is written. Pure, no IO.

An answer is accepted only if it is valid against its schema, not empty, within its length
limit, free of `[merged: ...]` artifacts, keeps every *fact token* of its inputs and introduces
no fact token that none of its inputs has, changes the meaning of no sentence it keeps (the
negations, modals, quantifiers, comparisons, antonyms and the roles of names of each sentence,
compared with the input sentences it comes from: meaning_check.py), and, for a merge, keeps the
content of every input sentence. Fact tokens are the things a rewrite must never lose or invent:
URLs, e-mail addresses, dates and times, code identifiers, numbers and proper names.

The guard is deliberately strict: a false rejection costs only the LLM's better wording (a merge
falls back to the offline merge, which keeps every sentence; a summary leaves the node as it
is), while a false acceptance loses or flips a fact for good. So "March 5, 2024" does not stand
in for "2024-03-05", numbers written as words are not matched to digits, and a rewording that
moves a marker out of its class ("must" -> "should") is refused. The meaning check compares
words, not meaning: a reversal it has no word for still passes; that is what the instructions
and the revision history (full previous text, undo) are for.

Proper names are recognised as capitalised words (and acronyms) other than common function words
("The", "However", ...). They are compared case-insensitively and as whole words, so a name that
starts a sentence in the input ("Customer ...") may appear in lower case in the output, and a
capitalised word of the output counts as new only if no input has that word at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from curation_pipeline.core.meaning_check import meaning_changes
from curation_pipeline.core.prompts import MERGE_FIELD
from curation_pipeline.core.sentence_tokens import FUNCTION_WORDS, tokenize
from curation_pipeline.core.text import (
    has_merge_marker,
    split_sentences,
    strip_merge_markers,
)

# Kinds, in extraction order: each kind's matches are masked before the next kind is looked for,
# so the "2024" of a date or the "acme" of an e-mail is not counted again as a number or name.
KINDS = ("url", "email", "date", "identifier", "number", "name")

_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`]+", re.IGNORECASE)
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
        r"(?<![\w/])(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]+)+",  # /a/path, ./rel/path
        r"\bv\d+(?:\.\d+)+\b",  # v1.2.3
        r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?",  # dotted.name, module.func()
        r"\b[A-Za-z_]\w*\(\)",  # call()
        r"(?<![\w.])\d+(?:\.\d+)+[A-Za-z]+\b",  # a decimal with its unit: 2.3x, 1.5GB
        r"\b\w*_\w+\b",  # snake_case, CONSTANT_CASE
        r"\b[a-z]+[A-Z]\w*\b",  # camelCase
        r"\b[A-Z][a-z0-9]+[A-Z]\w*\b",  # PascalCase with an inner capital
        r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])\w+(?:-\w+)*\b",  # letters and digits: S3, INV-2024-7
    ))
)
_ABBREVIATION = re.compile(r"(?:\w\.)+\w?\.?")  # e.g, i.e: dotted, but not identifiers
_NUMBER = re.compile(r"(?<![\w.,])[-+]?\d+(?:[.,]\d+)*%?")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")

# Capitalised words that are not names: sentence starters and function words.
_NOT_NAMES = FUNCTION_WORDS

# Kinds compared case-insensitively; identifiers and URLs are case-sensitive.
_CASELESS = {"email", "date", "name", "number"}
_MAX_LISTED = 5
_MAX_CHANGES = 3


@dataclass(frozen=True)
class Facts:
    """The fact tokens of a text, by kind; each kind a set of tokens as they appear."""

    by_kind: dict[str, frozenset[str]]

    def tokens(self) -> list[tuple[str, str]]:
        """(kind, token) pairs, sorted for stable messages."""
        return sorted((kind, token) for kind in KINDS for token in self.by_kind.get(kind, ()))


@dataclass(frozen=True)
class Verdict:
    """The guard's decision on one answer. `text` is the accepted text (stripped), else None."""

    accepted: bool
    reason: str
    text: str | None = None
    missing: tuple[str, ...] = ()
    introduced: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return "accepted" if self.accepted else "rejected"


class SchemaViolation(ValueError):
    """The answer is not the JSON object the schema asks for."""


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


def extract_facts(text: str) -> Facts:
    """Every fact token of `text` (`[merged: ...]` markers flattened first)."""
    remaining = strip_merge_markers(text or "")
    found: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for kind, pattern in (("url", _URL), ("email", _EMAIL), ("date", _DATE),
                          ("identifier", _IDENTIFIER), ("number", _NUMBER)):
        for match in pattern.finditer(remaining):
            token = _clean(kind, match.group(0))
            if token and not _ABBREVIATION.fullmatch(token):
                found[kind].add(token)
        # Mask with spaces so the remaining text keeps its word boundaries.
        remaining = pattern.sub(" ", remaining)
    for match in _WORD.finditer(remaining):
        word = _clean("name", match.group(0))
        if len(word) > 1 and word[0].isupper() and word.casefold() not in _NOT_NAMES:
            found["name"].add(word)
    return Facts({kind: frozenset(tokens) for kind, tokens in found.items()})


def occurs(kind: str, token: str, text: str) -> bool:
    """Whether `token` stands in `text` as a whole token (not inside a longer word or number)."""
    flags = re.IGNORECASE if kind in _CASELESS else 0
    # Whitespace inside a token (a date "March 5, 2024") may be any run of whitespace.
    body = r"\s+".join(re.escape(part) for part in token.split())
    if kind == "number":
        # "1000" also stands as "1,000"; "42" does not stand inside "420", "4.42" or "42.5".
        body = _digits_with_separators(token)
        pattern = rf"(?<![\w.,]){body}(?![\w%]|[.,]\d)"
    elif kind == "name":
        pattern = rf"(?<![\w]){body}(?![\w]|['’-]\w)|(?<![\w]){body}(?=['’]s\b)"
    else:
        pattern = rf"(?<![\w]){body}(?![\w])" if token[:1].isalnum() and token[-1:].isalnum() else re.escape(token)
    return re.search(pattern, text, flags) is not None


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


def parse_answer(raw: str | None, field: str) -> str:
    """The text of an answer `{"<field>": "<text>"}`; anything else is a SchemaViolation."""
    if raw is None:
        raise SchemaViolation("no output text")
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as error:
        raise SchemaViolation(f"not JSON ({error})") from None
    if not isinstance(value, dict):
        raise SchemaViolation(f"expected a JSON object, got {type(value).__name__}")
    if set(value) != {field}:
        raise SchemaViolation(f"expected exactly the key {field!r}, got {sorted(value)}")
    if not isinstance(value[field], str):
        raise SchemaViolation(f"{field!r} must be a string, got {type(value[field]).__name__}")
    return value[field]


def _listed(kind_tokens: Sequence[tuple[str, str]]) -> str:
    shown = ", ".join(f"{kind} {token!r}" for kind, token in kind_tokens[:_MAX_LISTED])
    more = len(kind_tokens) - _MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def judge(raw_output: str | None, *, field: str, inputs: Sequence[str], max_chars: int,
          kind: Literal["merge", "summary"] | None = None) -> Verdict:
    """Accept or reject one LLM answer against the texts it was made from.

    `kind` is "merge" (every input sentence must be kept) or "summary" (sentences may be
    dropped, not changed); by default it follows `field` (the merge schema's field or not).
    """
    kind = kind or ("merge" if field == MERGE_FIELD else "summary")
    try:
        text = parse_answer(raw_output, field).strip()
    except SchemaViolation as error:
        return Verdict(False, f"not valid against the schema: {error}")
    if not text:
        return Verdict(False, "empty answer")
    if len(text) > max_chars:
        return Verdict(False, f"over the limit: {len(text)} > {max_chars} characters")
    if has_merge_marker(text):
        return Verdict(False, "a [merged: ...] artifact is left in the answer")
    missing = missing_facts(inputs, text)
    introduced = introduced_facts(inputs, text)
    if missing or introduced:
        parts = []
        if missing:
            parts.append(f"missing {_listed(missing)}")
        if introduced:
            parts.append(f"introduces {_listed(introduced)}")
        return Verdict(
            False, "; ".join(parts),
            missing=tuple(token for _, token in missing),
            introduced=tuple(token for _, token in introduced),
        )
    changes = meaning_changes(inputs, text, kind=kind)
    if changes:
        more = len(changes) - _MAX_CHANGES
        return Verdict(False, "; ".join(changes[:_MAX_CHANGES]) + (f"; and {more} more" if more > 0 else ""))
    if kind == "merge":
        every_sentence = [s for t in inputs for s in split_sentences(strip_merge_markers(t))]
        dropped = sentences_not_covered(every_sentence, text)
        if dropped:
            return Verdict(False, f"drops the content of {dropped[0]!r}")
    return Verdict(True, "all facts kept, none introduced, no sentence changed", text=text)


def content_words(text: str) -> set[str]:
    """The roots of the words that say what a text is about (sentence_tokens.py): no function
    words ("the", "not", "over"), so "deals" ~ "deal" and "approval" ~ "approved"."""
    return {key for token in tokenize(text) if token.kind in ("word", "cjk") for key in token.keys}


def sentences_not_covered(sentences: Sequence[str], output: str, *, min_share: float = 0.75) -> list[str]:
    """The sentences whose content words mostly don't appear in `output`.

    The token checks above see numbers, dates, names and identifiers, not plain facts such as
    "is allergic to peanuts": an answer that silently drops such a sentence must not count as
    a merge that kept everything.
    """
    present = content_words(output)
    lacking = []
    for sentence in sentences:
        words = content_words(sentence)
        if words and len(words & present) / len(words) < min_share:
            lacking.append(sentence)
    return lacking

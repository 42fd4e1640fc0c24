"""What a number says: a percentage, an amount of money, a time of day, a date, a measure, a
length of time or a plain count. Pure.

A number's kind is what lets "$200" never be read as the new value of "April 18"
(supersession.py), and lets the cut of a replaced value leave a date or a time of day in its
sentence but no other number, which held with the value that went (value_cut.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from curation_pipeline.core.measures import dimension_of, measurement_kind, unit_of
from curation_pipeline.core.sentence_tokens import Token
from curation_pipeline.core.subjects import MONTH_WORDS

# "3 PM", "09:00 UTC": part of a time, not a name.
CLOCK = frozenset({"am", "pm", "a.m", "p.m"})
HOUR = re.compile(r"\d{1,2}(?:am|pm)")
_SPELLED_PERIODS = frozenset("""second seconds minute minutes hour hours day days night nights week weeks
fortnight fortnights month months quarter quarters year years decade decades""".split())
_MONEY_WORDS = frozenset("dollars dollar euros euro usd eur gbp pounds k".split())
_ORDINAL_DAY = re.compile(r"\d+(?:st|nd|rd|th)")
_CLOCK_TIME = re.compile(r"\d{1,2}:\d\d(?::\d\d)?(?:am|pm)?")
# The kinds of a number that say when.
MOMENTS = frozenset({"number:time", "number:date"})


def number_kind(token: Token, following: Token | None, previous: Token | None) -> str:
    """The kind of the number `token`, read with the words either side of it."""
    text = token.text
    if text.count(".") >= 2:
        return "identifier"  # a version: "5.3.0"
    measured = measurement_kind(text)
    if measured is not None:
        return measured  # "180ms", "1.5GB"
    if text.endswith("%"):
        return "number:percent"
    if text[:1] in "$€£" or (following is not None and following.lower in _MONEY_WORDS):
        return "number:money"
    if ":" in text or (following is not None and following.lower in CLOCK) or HOUR.fullmatch(text.casefold()):
        return "number:time"  # "9:30", "9 am", "10am" (the same hour as "10:00am")
    if (previous is not None and previous.lower.rstrip(".") in MONTH_WORDS) or \
            (following is not None and following.lower.rstrip(".") in MONTH_WORDS) or \
            re.fullmatch(r"\d{4}-\d{2}-\d{2}.*|\d{1,2}/\d{1,2}/\d{2,4}", text) or \
            re.fullmatch(r"(19|20)\d\d", text):
        return "number:date"
    dimension = unit_of(following.lower) if following is not None and following.kind == "word" else None
    if dimension is None and following is not None and following.kind == "word" and following.keys \
            and dimension_of(following.keys[0]) not in (None, "duration"):
        dimension = dimension_of(following.keys[0])  # "10 miles" is a length, as "21 km" is (a
        # spelled length of time is read below: "1,200 daily visitors" counts visitors)
    if dimension is not None:
        return f"number:{dimension}"  # "180 ms" is what "180ms" is
    if following is not None and following.lower in _SPELLED_PERIODS:
        return "number:duration"  # "over 2 weeks", "5.5 hours": a length of time, not "12 problems"
    return "number"


def says_a_moment(tokens: Sequence[Token], n: int) -> bool:
    """Whether the number tokens[n] says when: a year, a time of day ("9 AM", "14:30"), a date
    ("May 11", "11 May"), or an ordinal day ("the 3rd"); not a ratio ("a 2:1 ratio")."""
    text = tokens[n].text.lower()
    if _ORDINAL_DAY.fullmatch(text):
        return True
    following = tokens[n + 1] if n + 1 < len(tokens) else None
    previous = tokens[n - 1] if n > 0 else None
    kind = number_kind(tokens[n], following, previous)
    if kind == "number:time" and ":" in text and not (following is not None and following.lower in CLOCK):
        return _CLOCK_TIME.fullmatch(text) is not None
    return kind in MOMENTS

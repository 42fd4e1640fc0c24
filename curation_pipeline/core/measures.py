"""A number written with its unit ("180ms", "512MB", "2.5x", "60 fps") is a measurement. Pure.

Letters and digits together usually make a code ("S3", "exp-0412", "INV-2024-7"), and a code
names a thing: a pair whose codes differ speaks of two things. A number glued to a unit is not
one: "180ms" and "120ms" are two values of one response time, "512MB" and "1GB" two sizes of one
cache. This module says which tokens are measurements and of what dimension, so that a changed
measurement reads as a new value of the same kind and never as another thing, and "120ms" is
never taken for the new value of "15,000 keys".

The units are a closed list of abbreviations. Ambiguous ones are left out: "m" (minutes, metres
or millions), "s" ("30s" may be a decade), "in", "c", "g" and "k" ("4G", "4K"). A spelled-out
unit ("5 hours", "3 days") is a value word of its own (value_words.py) and is not read here;
joined to its number by a hyphen ("a 15-minute TTL", "a 30-day trial") it is a length of time.
"""

from __future__ import annotations

import re

# unit (casefolded) -> dimension. Left out as well: "g" and "k", which name things as often as
# they measure them ("4G networks", "a 4K monitor").
_DIMENSIONS = {
    "duration": "ms msec msecs sec secs min mins hr hrs h",
    "data": "kb mb gb tb pb kib mib gib tib",
    "rate": "kbps mbps gbps rps qps tps fps rpm req/s ops/s",
    "frequency": "hz khz mhz ghz",
    "mass": "mg kg lb lbs oz",
    "length": "mm cm km mi ft",
    "volume": "ml",
    "factor": "x",
    "pixels": "px",
    "energy": "w kw kwh wh mah",
}
UNITS = {unit: dimension for dimension, units in _DIMENSIONS.items() for unit in units.split()}
DIMENSIONS = frozenset(_DIMENSIONS)

# A unit of time spelled out, joined to its number by a hyphen ("15-minute"): a length of time
# (apart, "15 minutes" is read by value_words.py).
_SPELLED_LENGTHS = frozenset("second minute hour day night week month year decade".split())

_GLUED = re.compile(r"[-+]?\d+(?:[.,]\d+)*-?(?P<unit>[A-Za-z][A-Za-z/]*)")


# Units spelled out, by the root of their word (sentence_tokens.root): "10 miles" and "21 km" are
# one distance, "18 months" and "3 years" one length of time. "pound" is left out: money too.
_SPELLED_UNITS = {
    "mil": "length", "mile": "length", "kilometr": "length", "kilometer": "length", "metr": "length", "meter": "length",
    "kilogram": "mass", "gigabyt": "data", "megabyt": "data", "terabyt": "data",
    "second": "duration", "minut": "duration", "hour": "duration", "day": "duration", "week": "duration",
    "month": "duration", "year": "duration",
}


def dimension_of(key: str) -> str | None:
    """The dimension of a unit word, written short ("km", "gb") or spelled out (its root:
    "mile", "month"), or None: what a number counts when it counts no thing."""
    return UNITS.get(key) or _SPELLED_UNITS.get(key)


def unit_of(word: str) -> str | None:
    """The dimension of a unit written as its own word ("ms" of "180 ms"), or None."""
    return UNITS.get(word.casefold().rstrip("."))


def measurement_kind(token: str) -> str | None:
    """The value kind of a number glued to a known unit: "number:duration" for "180ms",
    "number:data" for "1.5GB"; None for anything else ("S3", "v2", "4th", "4G", "4K")."""
    match = _GLUED.fullmatch(token.strip())
    if match is None:
        return None
    unit = match.group("unit").casefold()
    if unit in _SPELLED_LENGTHS and "-" in match.group(0):
        return "number:duration"  # "a 15-minute TTL", "a 30-day trial": "15 minutes", "30 days"
    if unit == "s":
        number = match.group(0)[:-1]
        # "2.5s", "45s": seconds; not "1990s", a decade.
        return None if len(number) == 4 and number.endswith("0") else "number:duration"
    dimension = UNITS.get(unit)
    if dimension is None:
        return None
    return f"number:{dimension}"


def is_measurement(token: str) -> bool:
    return measurement_kind(token) is not None

"""Words that are values of an attribute: two members of one class are two different facts. Pure.

"replies within a day" and "replies within a week", "prefers email" and "prefers phone", "the
staging cluster" and "the production cluster", "the migration is in progress" and "the
migration is complete" share every other word, and a sentence embedding puts each pair very
close (all-MiniLM-L6-v2: 0.92 for day/week). The words that differ belong to small closed
classes: units of time, weekdays, months, channels, environments, statuses, ordinals, access
modes, priorities, directions, colours, languages.
A clause covers another only if it has the same members of these classes (coverage.py), and a
newer memory that replaces one member by another of its class gives a new value of the same
attribute (supersession.py).

Compared by root (sentence_tokens.root), so "Tuesdays" is "tuesday" and "completed" is
"complet".
"""

from __future__ import annotations

from curation_pipeline.core.sentence_tokens import root

# "class: member, member, ...". Words that are mostly verbs or other nouns ("call", "post",
# "read", "write", "test") are left out: a value class must not turn "calls the API" into a
# channel. Statuses are matched as written (below), so "approved" is one and "approves" is not.
_CLASSES = """
time unit: minute, hour, day, night, week, fortnight, month, quarter, year, decade,
    hourly, daily, nightly, weekly, biweekly, monthly, quarterly, yearly, annually
weekday: monday, tuesday, wednesday, thursday, friday, saturday, sunday, weekday, weekend
month: january, february, march, april, may, june, july, august, september, october, november, december
channel: email, e-mail, phone, sms, slack, chat, letter, fax, whatsapp, telegram, zoom,
    voicemail, pager, webhook
environment: staging, production, prod, dev, development, sandbox, qa, uat
status: enabled, disabled, active, inactive, pending, complete, completed, done, finished,
    blocked, cancelled, canceled, paused, resumed, planned, scheduled, deprecated, retired, draft,
    published, archived, resolved, progress, ongoing, delayed, reverted, suspended, expired,
    valid, invalid, submitted, investigation, investigating, mitigated, underway, postponed,
    frozen, churned, onboarded, offboarded, decommissioned, provisioned, healthy, degraded, outage,
    approved, rejected, open, closed, unblocked, live, failed, passed, shipped, started, stopped,
    running, paid, unpaid, overdue, signed, unsigned
ordinal: second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh,
    twelfth, next, last, previous, ground
access: admin, owner, viewer, editor, guest, readonly, read-only
priority: low, medium, high, critical, urgent, minor, major, blocker
direction: north, south, east, west, left, right, upper, lower, inbound, outbound, ascending,
    descending
colour: red, green, blue, yellow, orange, purple, black, white, grey, gray, amber
language: english, german, french, spanish, italian, portuguese, dutch, polish, japanese,
    chinese, korean, hindi, arabic, russian, turkish, swedish
"""


# "second" is an ordinal ("the second floor"): a duration in seconds says its number.
# Statuses are matched as written: their roots are other words ("planned" -> "plan", as in "the
# Pro plan"; "scheduled" -> "schedul", as in "the schedule"). So are environments: "developed"
# and "staged" share a root with "development" and "staging", and are verbs.
_AS_WRITTEN = frozenset({"status", "environment"})


def _parse() -> tuple[dict[str, str], dict[str, str]]:
    by_root: dict[str, str] = {}
    by_word: dict[str, str] = {}
    for entry in _CLASSES.strip().replace("\n    ", " ").splitlines():
        name, _, words = entry.partition(":")
        name = name.strip()
        for word in (w.strip() for w in words.split(",")):
            # A word in two classes ("medium": priority and size) keeps its first class.
            if name in _AS_WRITTEN:
                by_word.setdefault(word, name)
            else:
                by_root.setdefault(root(word), name)
    return by_root, by_word


_BY_ROOT, _BY_WORD = _parse()

# The ordinals as written: "lasts" and "thirds" share a root with "last" and "third" and are none.
ORDINALS = frozenset(word.strip() for entry in _CLASSES.strip().replace("\n    ", " ").splitlines()
                     if entry.startswith("ordinal:") for word in entry.partition(":")[2].split(","))


def value_class(word: str, key: str | None = None) -> str | None:
    """The class of a word (casefolded, as written) whose content key is `key` (its root), or
    None for any other word."""
    return _BY_WORD.get(word) or _BY_ROOT.get(key if key is not None else root(word))


def value_keys(tokens) -> dict[str, frozenset[str]]:
    """The value words among `tokens` (sentence_tokens.Token), by class, as their keys."""
    found: dict[str, set[str]] = {}
    for token in tokens:
        if not token.keys:
            continue
        name = value_class(token.lower, token.keys[0])
        if name is not None:
            found.setdefault(name, set()).add(token.keys[0])
    return {name: frozenset(members) for name, members in found.items()}

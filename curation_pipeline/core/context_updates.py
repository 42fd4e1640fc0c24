"""A memory without a subject of its own, read with the memory written just before it. Pure.

Agents store turns as they come: "The budget is 50k." and, a minute later, "Make that 150k.";
"The meeting is in the Seattle office, room 302." and then "Portland office, room 1." The second
memory names no subject: on its own it updates nothing, and compared with every memory of the
namespace it would update any that has an amount. Read with the memory written just before it
(step 2 finds that one: same namespace and memory type, by epoch then `created_at`, within
CONTEXT_WINDOW), it is an update when, offline:

- it is short (one sentence of at most MAX_WORDS words), says at least one value, and has no
  verb of its own ("The budget is 150k." has one: it is compared like any other memory);
- every word of it that is not a value or a correction opener ("make that", "actually", ...) is
  a word of the memory before it ("office", "room"): it speaks of what that memory speaks of;
- the memory before it states exactly one value of each kind it gives (one amount, one place,
  one date), and at least one of them differs. Two amounts before "Make that 150k." leave
  which one changed unsaid: not an update.

Superseding the memory before it would leave "Make that 150k." alone in current memory, which
says 150k of nothing. So the newer memory carries the older one's sentence with the new values
in place ("Make that 150k. The budget is 150k."), as core/carry.py carries clauses: current
memory says what is true now, in words that stand alone, and the older memory keeps its own.
"""

from __future__ import annotations

import re
from datetime import timedelta

from curation_pipeline.core.carry import Carried, carry_into
from curation_pipeline.core.clauses import text_clauses
from curation_pipeline.core.sentence_tokens import tokenize
from curation_pipeline.core.speakers import without_speaker
from curation_pipeline.core.subjects import is_verb
from curation_pipeline.core.supersession import UPDATE, ClauseUpdate, VersionCheck, values_of

# How long after the memory before it a memory without a subject is read with it.
CONTEXT_WINDOW = timedelta(hours=1)
MAX_WORDS = 8
_OPENERS = re.compile(r"^\s*(?:make (?:that|it)|scratch that|no|actually|i mean|sorry|correction|"
                      r"update|wait)\b\s*[:,\-–—]?\s*", re.IGNORECASE)


def needs_context(text: str) -> bool:
    """Whether a memory says no subject of its own (see the module docstring)."""
    body = _OPENERS.sub("", without_speaker(text), count=1)
    sentences = text_clauses(body)
    tokens = tokenize(body)
    words = [t for t in tokens if t.kind != "punct"]
    return (len(sentences) == 1 and 0 < len(words) <= MAX_WORDS and bool(values_of(tokens, opening=True))
            and not any(is_verb(t) for t in tokens))


def context_update(previous: str, current: str) -> VersionCheck | None:
    """The update `current` (a memory that needs context) makes to `previous`, the memory
    written just before it, or None (see the module docstring)."""
    if not needs_context(current):
        return None
    body = _OPENERS.sub("", without_speaker(current), count=1)
    new_tokens = tokenize(body)
    new_values = values_of(new_tokens, opening=True)
    old_tokens = tokenize(without_speaker(previous))
    old_values = values_of(old_tokens, opening=True)
    old_words = {key for t in old_tokens for key in t.keys}
    value_keys = {key for keys in new_values.values() for key in keys}
    if not {key for t in new_tokens for key in t.keys} - value_keys <= old_words:
        return None  # it speaks of something the memory before it does not
    replaced: dict[str, str] = {}
    for kind, keys in new_values.items():
        if len(old_values.get(kind, ())) != 1 or len(keys) != 1:
            return None  # which value it replaces is not said
        [old_key], [new_key] = old_values[kind], keys
        if old_key != new_key:
            replaced[_text_of(old_tokens, old_key)] = _text_of(new_tokens, new_key)
    if not replaced:
        return None
    updated = without_speaker(previous)
    for old, new in replaced.items():
        updated = updated.replace(old, new, 1)
    carried = (Carried(updated),)
    changes = tuple(f"value {old!r} -> {new!r} (read with the memory before it)" for old, new in replaced.items())
    [sentence] = text_clauses(current)
    [old_sentence, *_] = text_clauses(previous)
    update = ClauseUpdate(old_sentence.clauses[0], sentence.clauses[0], changes)
    return VersionCheck(UPDATE, (update,), carried=carried, carried_text=carry_into(current, carried))


def _text_of(tokens, key: str) -> str:
    return next(t.text for t in tokens if key in t.keys)

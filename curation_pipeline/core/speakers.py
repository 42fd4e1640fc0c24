"""Who said it: the speaker label of a conversation turn ("Jon: Thanks, Gina!"). Pure.

Agents that store conversation turns keep the speaker in the text. Two turns of two speakers are
two people's words however alike they read ("Jon: Thanks, Gina! ..." / "Gina: Thanks, Jon!
..."; "Sam: Bye!" / "Evan: Bye!"): step 2 never merges or supersedes across speakers, and the
judge is not asked to.

A label is one to four capitalised words at the very start of a text, then a colon and a space.
Words that label a note rather than name a person ("Update:", "Note:", "Correction:", a time
"02:00:") are no speaker.
"""

from __future__ import annotations

import re

_LABEL = re.compile(r"\s*((?:[A-Z][\w'’.-]*)(?:\s+[A-Z][\w'’.-]*){0,3})\s*:\s+\S")
# Words that start a note, not a name: what an agent writes before a colon to say what kind of
# note follows.
_NOTE_WORDS = frozenset("""
update updated correction corrected actually note notes reminder decision summary status todo
important warning fyi ps edit fix context question answer q a re subject action next done follow
""".split())


def speaker_of(text: str | None) -> str | None:
    """The casefolded speaker label of a text ("jon", "melanie smith"), or None."""
    match = _LABEL.match(text or "")
    if match is None:
        return None
    label = match.group(1)
    words = label.split()
    if any(word.rstrip(".").casefold() in _NOTE_WORDS for word in words) or any(ch.isdigit() for ch in label):
        return None
    return " ".join(words).casefold()


def same_speaker(first: str | None, second: str | None) -> bool:
    """Whether two texts may be one person's words: the same label, or neither has one."""
    return speaker_of(first) == speaker_of(second)


def without_speaker(text: str | None) -> str:
    """The text after its speaker label ("Jon: Thanks!" -> "Thanks!"); the text itself when it
    has none. What a turn says is judged without the label once both sides have the same one."""
    text = text or ""
    match = _LABEL.match(text)
    if match is None or speaker_of(text) is None:
        return text
    return text[match.end() - 1:]

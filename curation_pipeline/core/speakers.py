"""Who said it: the speaker label of a conversation turn ("Jon: Thanks, Gina!"). Pure.

Agents that store conversation turns keep the speaker in the text. Two turns of two speakers are
two people's words however alike they read ("Jon: Thanks, Gina! ..." / "Gina: Thanks, Jon!
..."; "Sam: Bye!" / "Evan: Bye!"): step 2 never merges or supersedes across speakers, and the
judge is not asked to.

A label is one to four capitalised words at the very start of a text, then a colon and a space.
Words that label a note rather than name a person ("Update:", "Note:", "Correction:", a time
"02:00:") are no speaker.

Whom a turn addresses is no more a fact of it than who says it: "Wow, Caroline! ..." and a later
"Wow, Mel! ..." are not a new value of a name. A vocative that opens a turn (a name, after an
interjection or not, then "!" or ",") is left out when two turns are compared.
"""

from __future__ import annotations

import re

# "Wow, Caroline!", "Hey Caroline,", "Thanks, Jon!" or a bare "Caroline!": an interjection and a
# name, or a name and "!" ("Paris, the city of light, ..." is no vocative).
_NAME = r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?"
_VOCATIVE = re.compile(
    r"\s*(?:(?i:wow|hey|hi|hello|thanks|thank you|oh|aw+|ooh|omg|yay|haha|great|congrats|sorry|bye|"
    r"good morning|good night|yes|yeah|yep|yup|no|nope|ok|okay|sure|well|cool|awesome|nice|totally|"
    r"absolutely|exactly|right|hmm|lol)\s*[,!.]?\s+" + _NAME + r"\s*[!,.]|" + _NAME + r"\s*!)\s*")
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


def without_vocative(text: str) -> str:
    """A turn without the interjection and name it opens with ("Wow, Caroline! That's amazing."
    -> "That's amazing."); the text itself when it opens with none, or says nothing more."""
    match = _VOCATIVE.match(text)
    if match is None or re.search(r"[A-Za-z]", text[match.end():]) is None:
        return text
    name = re.findall(r"[A-Za-z][\w'’-]*", match.group(0))[-1]
    return text if name.casefold() in _NOTE_WORDS else text[match.end():]

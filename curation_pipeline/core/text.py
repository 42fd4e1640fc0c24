"""Plain-text helpers shared by the consolidation (step 2) and summary (step 3) planners.

Everything here is pure string work on Python ``str`` values, so every length is a count of
code points (an emoji or a CJK character counts as one).

Sentence splitting is deliberately simple and predictable rather than linguistically clever:

* a sentence ends at ``.``, ``!``, ``?`` or ``…`` followed by whitespace, or at a CJK full stop
  (``。！？``, which needs no whitespace after it), or at a line break;
* the punctuation stays with its sentence, surrounding whitespace is dropped, empty pieces too;
* abbreviations are NOT recognised: ``"see e.g. this"`` splits into ``"see e.g."`` and
  ``"this"``. Handling them well needs a language-specific list; splitting there is harmless for
  the merge (a fragment is compared and kept like any other sentence), so we chose predictability.
  Decimal numbers and dotted names (``3.14``, ``v1.2``) are not split since no space follows.
* four exceptions: an abbreviation before a number (``"String Quartet No. 2"``, ``"Op. 27"``)
  ends no sentence when a digit follows; a title before a name (``"Dr. Mbeki"``, ``"St. Mary's Church"``, a short
  closed list of English titles) ends no sentence when a capitalised word that opens no sentence
  follows (``"She lives on Oak St. The house is blue."`` still splits); a name's suffix
  (``"Scott Sr. have been married ..."``) ends none when a word that opens no sentence follows
  (``"I met Scott Sr. The talk ran long."`` still splits); and a person's initial:
  ``"founded by G. G. Ponnambalam."`` is one sentence (cut after each "G." its fragments would
  be carried and compared as statements of their own), so a lone capital and its full stop end
  no sentence when a capitalised word that opens no sentence follows; ``"He chose plan B. The
  rest waited."`` still splits.

The reference curator merged two memories by appending ``"<text> [merged: <other text>]"``, and
merged entries were merged again, so markers can nest. :func:`strip_merge_markers` flattens them
back into plain sentences.
"""

from __future__ import annotations

import re
import unicodedata

# Characters that end a sentence when followed by whitespace.
SENTENCE_TERMINATORS = ".!?…"
# CJK sentence-ending marks: CJK prose has no spaces, so these end a sentence on their own.
CJK_TERMINATORS = "。！？"

_SENTENCE_BREAK = re.compile(
    rf"(?<=[{re.escape(SENTENCE_TERMINATORS)}])\s+"  # "end. Next"
    rf"|(?<=[{CJK_TERMINATORS}])\s*"  # "終わり。次"
    r"|\s*\n\s*"  # a line break always ends a sentence
)

# "[merged:" opens a marker; any other "[" is a plain bracket that may appear inside one, and
# must be tracked so that its "]" does not close the marker early.
_MARKER_TOKEN = re.compile(r"\[merged:|\[|\]", re.IGNORECASE)
_MARKER_OPEN = re.compile(r"\[merged:", re.IGNORECASE)

_WHITESPACE_RUN = re.compile(r"\s+")
# Trailing punctuation ignored when comparing sentences ("Likes tea." == "likes tea").
_TRAILING_PUNCTUATION = SENTENCE_TERMINATORS + CJK_TERMINATORS + ",;:"
# Trimmed from a cut before the ellipsis so we never produce "word,…" or "word -…".
_TRAILING_CUT_JUNK = re.compile(r"[\s,;:.!?…\-–—(\[{/。！？]+\Z")


# A lone capital and its full stop, ending the text before a break: maybe a person's initial.
_INITIAL_END = re.compile(r"(?:\A|(?P<before>\S+)\s)(?P<initial>[A-Z])\.\Z")
# A title before a name ("Dr. Mbeki", "St. Mary's Church"), ending the text before a break.
_TITLE_END = re.compile(r"(?:\A|\s)(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Mt|Ft|Sgt|Capt|Rev|Gen|Col|Lt)\.\Z")
# An abbreviation before a number ("String Quartet No. 2", "Op. 27", "Vol. 3"), ending the text
# before a break: the number that follows is part of it.
_NUMBERED_END = re.compile(r"(?:\A|\s)(?:No|Nos|Vol|Op|Fig|Ch|pp)\.\Z")
# A name's suffix ("Scott Sr.", "Martin Luther King Jr."), ending the text before a break.
_SUFFIX_END = re.compile(r"[A-Z][a-z'’\-]+,?\s(?:Sr|Jr)\.\Z")
_NEXT_WORD = re.compile(r"[A-Za-z]{2,}")  # a name, not one more initial
_TITLED_NAME = re.compile(r"[A-Z][A-Za-z'’\-]*")  # "Mbeki", "O'Neil"
_MORE_INITIALS = re.compile(r"(?:[A-Z]\.[ \t]+)*")
# Capitalised words that open sentences: after "Plan B." one of these starts a new one.
_SENTENCE_OPENERS = frozenset("""
the a an this that these those it its he she they we i you his her their our my your there here
and but or so then also however if when while after before since as at in on for from to by with
of what which who why how yes no not all some each every both one
""".split())


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences, keeping their punctuation (see the module docstring)."""
    pieces, start = [], 0
    for match in _SENTENCE_BREAK.finditer(text):
        if _after_initial(text[start:match.start()], text, match):
            continue
        pieces.append(text[start:match.start()])
        start = match.end()
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def _after_initial(sentence: str, text: str, gap: re.Match) -> bool:
    """Whether a break comes after a title before a name ("Dr. Mbeki") or a person's initial: a
    capitalised word that opens no sentence follows, after the title, after more initials ("G. G.
    Ponnambalam") or after an initial that opens the sentence or follows a capitalised word
    ("John F. Kennedy", "G. Ponnambalam founded it"). "... plan B. The rest", "... vitamin D.
    Zinc", "... Oak St. The house" and "A. B. C." break."""
    if "\n" in gap.group():
        return False
    if _NUMBERED_END.search(sentence[-6:]):
        return text[gap.end():gap.end() + 1].isdigit()  # "No. 2"; "... said No. Then ..." breaks
    if _SUFFIX_END.search(sentence[-30:]):
        # "Scott Sr. have been married ...": a name's suffix, unless a sentence opens after it.
        word = re.compile(r"[A-Za-z][A-Za-z'’\-]*").match(text, gap.end())
        return word is not None and word.group().lower() not in _SENTENCE_OPENERS
    if _TITLE_END.search(sentence[-8:]):
        word = _TITLED_NAME.match(text, gap.end())
        return word is not None and word.group().lower() not in _SENTENCE_OPENERS
    initial = _INITIAL_END.search(sentence[-60:])
    if initial is None:
        return False
    more = _MORE_INITIALS.match(text, gap.end())  # "G. " of "G. G. Ponnambalam"
    word = _NEXT_WORD.match(text, more.end())
    if word is None or not word.group()[0].isupper() or word.group().lower() in _SENTENCE_OPENERS:
        return False  # "A. B. C." are three sentences
    before = initial.group("before")
    return bool(more.group()) or before is None or before[:1].isupper()


def ends_sentence(text: str) -> bool:
    """Whether ``text`` (ignoring trailing whitespace) ends with sentence punctuation."""
    stripped = text.rstrip()
    return bool(stripped) and stripped[-1] in SENTENCE_TERMINATORS + CJK_TERMINATORS


def append_sentence(text: str, sentence: str) -> str:
    """Append ``sentence`` to ``text`` so that it stays a separate sentence.

    A space is enough after sentence punctuation; otherwise a newline is used, because inventing
    a full stop would change the memory's words and a bare space would glue two sentences.
    """
    head = text.rstrip()
    if not head:
        return sentence
    return head + (" " if ends_sentence(head) else "\n") + sentence


def has_merge_marker(text: str) -> bool:
    """Whether ``text`` contains a ``[merged: ...]`` artifact (case-insensitive)."""
    return _MARKER_OPEN.search(text) is not None


# Polars regex equivalent of has_merge_marker, for whole-frame filters.
MERGE_MARKER_PATTERN = r"(?i)\[merged:"


def strip_merge_markers(text: str) -> str:
    """Flatten ``[merged: ...]`` artifacts, keeping the merged bodies as plain sentences.

    ``"A. [merged: B. [merged: C.]]"`` becomes ``"A. B. C."``. Nesting is tracked with a stack, so
    ordinary brackets inside a merged body (``[merged: see [1]]``) survive intact. Malformed input
    never raises: an unclosed ``[merged:`` keeps its trailing text, and a stray ``]`` is kept as a
    literal character. Text without a marker is returned unchanged (not even re-spaced), so a
    clean memory never looks "changed".
    """
    if not has_merge_marker(text):
        return text

    segments: list[str] = []  # plain text between marker boundaries
    open_brackets: list[bool] = []  # True for a marker, False for an ordinary "["
    segment_start = 0
    for token in _MARKER_TOKEN.finditer(text):
        if token.group() == "[":
            open_brackets.append(False)
        elif token.group() == "]":
            if not open_brackets:
                continue  # a stray "]" is just text
            if not open_brackets.pop():
                continue  # closes an ordinary bracket: keep it as text
            segments.append(text[segment_start : token.start()])
            segment_start = token.end()
        else:  # "[merged:"
            segments.append(text[segment_start : token.start()])
            segment_start = token.end()
            open_brackets.append(True)
    segments.append(text[segment_start:])

    flattened = ""
    for segment in segments:
        segment = segment.strip()
        if segment:
            flattened = append_sentence(flattened, segment)
    return flattened


def normalise_sentence(sentence: str) -> str:
    """Comparison key for a sentence: NFC, casefolded, whitespace collapsed, trailing
    punctuation ignored. ``"User likes  TEA."`` and ``"user likes tea"`` compare equal."""
    folded = unicodedata.normalize("NFC", sentence).casefold()
    collapsed = _WHITESPACE_RUN.sub(" ", folded).strip()
    return collapsed.rstrip(_TRAILING_PUNCTUATION + " ")


def sentence_keys(text: str | None) -> set[str]:
    """The comparison keys of a text's sentences, merge markers flattened."""
    if not text:
        return set()
    return {key for key in (normalise_sentence(s) for s in split_sentences(strip_merge_markers(text))) if key}


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one "…" if anything was cut: for
    what is shown or quoted in a message (stored text is cut by truncate_at_word_boundary)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def truncate_at_word_boundary(text: str, limit: int = 200, ellipsis: str = "…") -> str:
    """Shorten ``text`` to at most ``limit`` characters, ellipsis included, ending on a word.

    A text already within ``limit`` is returned unchanged. Otherwise we cut at the last
    whitespace that leaves room for the ellipsis (a hard cut when the text has no whitespace
    there, e.g. a long URL or CJK prose), trim trailing whitespace and punctuation such as
    ``,;:`` and append the ellipsis. A hard cut never separates a combining mark or a
    zero-width joiner from the character before it.
    """
    if len(text) <= limit:
        return text
    budget = limit - len(ellipsis)
    if budget <= 0:
        raise ValueError(f"limit {limit} leaves no room for text before the ellipsis {ellipsis!r}")

    if text[budget].isspace():
        cut = text[:budget]  # the window ends exactly at a word boundary
    else:
        last_space = next((i for i in range(budget - 1, -1, -1) if text[i].isspace()), -1)
        cut = text[:last_space] if last_space > 0 else _hard_cut(text, budget)

    trimmed = _TRAILING_CUT_JUNK.sub("", cut)
    if not trimmed:
        # Only punctuation/space before the cut: keep the raw cut rather than return "…" alone.
        trimmed = _hard_cut(text, budget)
    return trimmed + ellipsis


def _hard_cut(text: str, end: int) -> str:
    """``text[:end]``, moved left so it does not split a character from its combining marks."""
    while end > 1 and (unicodedata.combining(text[end]) or text[end] == "\u200d" or text[end - 1] == "\u200d"):
        end -= 1
    return text[:end]

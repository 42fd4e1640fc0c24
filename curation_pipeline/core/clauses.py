"""Sentences cut into clauses, each with what it says: its words, facts and meaning markers. Pure.

A fact can hide in a short clause of a long sentence ("... every night at 02:00 UTC and is
deprecated."): judged per sentence, a rewrite that keeps most of the sentence's words looks like
it kept the sentence. So coverage (coverage.py) is judged per clause. A sentence is cut

- at a semicolon, a comma, a bracket or another clause-ending mark, and
- before a word that opens a clause (sentence_tokens.CLAUSE_WORDS: "and", "but", "or",
  "which", "who", "while", "because", "before", "until", ...),

so relative ("..., which runs nightly"), participial ("..., using Postgres 16") and joined
("... and is deprecated") clauses each stand alone, and so does each item of a list ("English
and German": a clause "German" that a rewrite must keep like any other). Pieces with no content
("and", a lone comma) are no clause.

Each clause carries its tokens, its content keys, its fact tokens (fact_guard.extract_facts:
URLs, e-mail addresses, dates, identifiers, numbers, names), its meaning markers
(meaning_markers.find_markers: negation, modality, quantifiers, comparisons, antonyms) and its
value words (value_words.py). `Piece` is a run of adjacent clauses of one sentence ("windows"
of it), which a clause is compared with: a clause's words may be spread over two clauses of a
sentence that says the same in another order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from curation_pipeline.core.fact_tokens import extract_facts
from curation_pipeline.core.meaning_markers import ANTONYM, MARKER_WORDS, Marker, find_markers
from curation_pipeline.core.sentence_tokens import Token, content_keys, tokenize
from curation_pipeline.core.text import clip, split_sentences, strip_merge_markers
from curation_pipeline.core.value_words import value_keys

_QUOTED_CHARS = 90
# Adjacent clauses read together as one stretch of words at most (see SentenceClauses.pieces).
MAX_PIECE_CLAUSES = 4
_CACHED_CHARS = 20_000  # longer texts are cut anew each time rather than held in the cache


@dataclass(frozen=True)
class Piece:
    """Adjacent clauses [first, last] of sentence `sentence` of a text, as one stretch of words."""

    sentence: int
    first: int
    last: int
    text: str
    tokens: tuple[Token, ...]
    context: str = ""  # the whole sentence the piece is part of
    # Token ranges [start, end) of its clauses within `tokens` (empty: the piece is one clause).
    parts: tuple[tuple[int, int], ...] = ()

    @cached_property
    def keys(self) -> frozenset[str]:
        """What the piece is about: its content keys, without the words that are markers of
        their own ("need" ~ "require"), which are compared as markers."""
        return content_keys([t for t in self.tokens if t.lower not in MARKER_WORDS])

    @cached_property
    def words(self) -> frozenset[str]:
        """Every content key of the piece, the marker words' included."""
        return content_keys(list(self.tokens))

    @cached_property
    def markers(self) -> tuple[Marker, ...]:
        return tuple(find_markers(list(self.tokens)))

    @cached_property
    def plain_markers(self) -> tuple[Marker, ...]:
        """The negations, modals, quantifiers and comparisons (no antonyms)."""
        return tuple(m for m in self.markers if m.category != ANTONYM)

    @cached_property
    def sentence_markers(self) -> frozenset[tuple[str, str]]:
        """The (category, class) of every plain marker of the piece's whole sentence: a clause
        that continues another ("needs X and Y": "and Y") is under the markers before it."""
        tokens = tokenize(self.context) if self.context else list(self.tokens)
        return frozenset((m.category, m.value) for m in find_markers(tokens) if m.category != ANTONYM)

    @cached_property
    def antonym_sides(self) -> frozenset[str]:
        return frozenset(m.value for m in self.markers if m.category == ANTONYM)

    @cached_property
    def facts(self) -> tuple[tuple[str, str], ...]:
        return tuple(extract_facts(self.text).tokens())

    @cached_property
    def values(self) -> dict[str, frozenset[str]]:
        return value_keys(self.tokens)

    @property
    def quoted(self) -> str:
        return repr(clip(self.text, _QUOTED_CHARS))

    @property
    def is_question(self) -> bool:
        """Whether the piece is part of a question ("What do you do to relax?"): a question asks,
        it says no fact, and no statement says it."""
        return (self.context or self.text).rstrip().endswith(("?", "？"))

    def clause_tokens(self) -> list[tuple[Token, ...]]:
        """The tokens of each clause of the piece, in order."""
        return [self.tokens[a:b] for a, b in self.parts] if self.parts else [self.tokens]


@dataclass(frozen=True)
class SentenceClauses:
    """One sentence of a text and its clauses (each a one-clause Piece)."""

    index: int
    text: str
    tokens: tuple[Token, ...]
    bounds: tuple[tuple[int, int], ...]  # token ranges [start, end) of its clauses, in order
    spans: tuple[tuple[int, int], ...]  # character ranges of its clauses in `text`

    @property
    def clauses(self) -> list[Piece]:
        return [self.piece(n, n) for n in range(len(self.bounds))]

    def piece(self, first: int, last: int) -> Piece:
        start, end = self.bounds[first][0], self.bounds[last][1]
        text = self.text[self.spans[first][0]: self.spans[last][1]]
        parts = tuple((a - start, b - start) for a, b in self.bounds[first:last + 1]) if last > first else ()
        return Piece(self.index, first, last, text, self.tokens[start:end], self.text, parts)

    def whole(self) -> Piece:
        return Piece(self.index, 0, len(self.bounds) - 1, self.text, self.tokens, self.text,
                     tuple(self.bounds) if len(self.bounds) > 1 else ()) if self.bounds \
            else Piece(self.index, 0, -1, self.text, self.tokens, self.text)

    def pieces(self) -> list[Piece]:
        """Every run of up to MAX_PIECE_CLAUSES adjacent clauses, shortest first (a clause's words
        may be spread over a few clauses of a sentence that says the same in another order; a
        longer stretch is no one claim, and every run of a long list would cost its square)."""
        longest = min(len(self.bounds), MAX_PIECE_CLAUSES)
        runs = [self.piece(a, a + length - 1) for length in range(1, longest + 1)
                for a in range(len(self.bounds) - length + 1)]
        return runs or [self.whole()]


def joined(first: Piece, second: Piece) -> Piece:
    """Two pieces (of two texts) as one stretch of words, a clause break between them: what an
    answer that combines the wordings of two inputs is compared with."""
    separator = tuple(tokenize(";"))
    text = f"{first.text}; {second.text}"
    ends = len(first.tokens) + len(separator)
    parts = ((first.parts or ((0, len(first.tokens)),))
             + tuple((a + ends, b + ends) for a, b in (second.parts or ((0, len(second.tokens)),))))
    return Piece(-1, 0, 0, text, first.tokens + separator + second.tokens, text, parts)


def _token_spans(sentence: str, tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """Character range of each token in the sentence (tokenize keeps their order)."""
    spans, at = [], 0
    for token in tokens:
        start = sentence.find(token.text, at)
        if start < 0:  # cannot happen for tokenize's own output; stay total anyway
            start = at
        spans.append((start, start + len(token.text)))
        at = start + len(token.text)
    return spans


def _stands_free(sentence: str, span: tuple[int, int], token: Token) -> bool:
    """Whether a clause-ending token really ends a clause: a word does; punctuation only when
    a space (or the end) follows it, so "s3://bucket" and "a,b" stay whole."""
    if token.kind != "punct" or token.text in "()（）、，；：":
        return True  # CJK punctuation needs no space after it
    return span[1] >= len(sentence) or sentence[span[1]].isspace()


def sentence_clauses(sentence: str, index: int = 0) -> SentenceClauses:
    """Cut one sentence into clauses (see the module docstring)."""
    tokens = tuple(tokenize(sentence))
    spans = _token_spans(sentence, tokens)
    bounds: list[tuple[int, int]] = []
    start = 0
    for position, token in enumerate(tokens + (None,)):
        if token is not None and not (token.ends_clause and _stands_free(sentence, spans[position], token)):
            continue
        if any(t.keys for t in tokens[start:position]):
            bounds.append((start, position))
        # A clause word ("and", "before") opens the next clause and stays in it ("before the
        # 5th" keeps its comparison); punctuation belongs to no clause.
        start = position + 1 if token is None or token.kind == "punct" else position
    if not bounds and tokens:
        bounds = [(0, len(tokens))]
    char_spans = tuple(
        (spans[a][0], spans[b - 1][1]) if b > a else (0, len(sentence)) for a, b in bounds)
    return SentenceClauses(index, sentence, tokens, tuple(bounds), char_spans)


def text_clauses(text: str) -> list[SentenceClauses]:
    """Every sentence of a memory text (`[merged: ...]` markers flattened), cut into clauses."""
    text = text or ""
    if len(text) > _CACHED_CHARS:
        return [sentence_clauses(s, n) for n, s in enumerate(split_sentences(strip_merge_markers(text)))]
    return list(_text_clauses(text))


@lru_cache(maxsize=4096)
def _text_clauses(text: str) -> tuple[SentenceClauses, ...]:
    # A memory is compared with many others in one pass (every pair it is in): cut it once.
    return tuple(sentence_clauses(s, n) for n, s in enumerate(split_sentences(strip_merge_markers(text))))

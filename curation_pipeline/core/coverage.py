"""The one notion of "this fact is already said": is a clause covered by some kept text? Pure.

A clause (clauses.py) is covered by a stretch of kept text (a run of adjacent clauses of one
kept sentence, a "piece") when both hold:

1. **every meaning marker of the clause is there**, exactly:
   - its fact tokens (fact_guard.extract_facts): numbers, dates and times, URLs, e-mail
     addresses, identifiers and codes (case included), names;
   - its value words (value_words.py): "day" is not "week", "email" is not "phone";
   - its negations, modals, quantifiers and comparisons (meaning_markers.py), by class and on
     the same words; and the piece may hold no such marker on the clause's words that the
     clause lacks ("does not drink coffee" does not cover "drinks coffee");
   - its antonym sides, and the order of names that says who does what to whom (name_roles.py);
2. **its content is there**: every content word of the clause is a word of the piece (lexical),
   or, with a semantic embedder (`Semantic`), the piece shares at least half of the clause's
   words (two at least), replaces only plain common words, has exactly its marker classes and
   value words, and the embedder finds the two at least as alike as its calibrated threshold (semantic: "Our CI machines run Ubuntu 24.04." is covered by "The CI runners
   use Ubuntu 24.04.").

A whole clause can never slip under either rule, however short: "and is deprecated" is its own
clause, and its word must be there. The lexical rule is the only one for the lexical embedder
(its similarity is shared words, not meaning) and for the other direction of the fact guard
(an answer's clause may use no word its inputs do not have): a semantic embedder puts "prefers
email" and "hates email" 0.91 apart, so similarity alone never licenses a new word.

Why a semantic threshold per embedder: cosine values mean different things in different
models. `SEMANTIC_THRESHOLDS` holds the calibrated value of each model we measured
(benchmarks/curation_quality.py --calibrate prints how it was chosen); a semantic model without
one is compared lexically, which can only keep more text, never lose it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from curation_pipeline.core.clauses import Piece, SentenceClauses, joined, text_clauses
from curation_pipeline.core.fact_tokens import occurrences
from curation_pipeline.core.meaning_markers import MARKER_WORDS, NEGATION, Marker, find_markers, opposite
from curation_pipeline.core.name_roles import role_swaps
from curation_pipeline.core.sentence_alignment import Sentence
from curation_pipeline.core.sentence_tokens import tokenize
from curation_pipeline.core.subjects import own_subject, tail_keys
from curation_pipeline.core.text import normalise_sentence
from curation_pipeline.core.value_words import value_class

# Calibrated on benchmarks/curation_pairs.jsonl (`python benchmarks/curation_quality.py
# --calibrate`): with the word checks above, no labelled update or look-alike pair reads as one
# memory saying the other at any threshold from 0.70 (those checks do the safety work), and the
# restatements said whole stay level from 0.80 to 0.90 (120 of 180 directions) and fall above;
# 0.80 is the low end of that plateau ("The CI runners use Ubuntu 24.04." ~ "Our CI machines
# run Ubuntu 24.04." at 0.81).
SEMANTIC_THRESHOLDS = {
    "sentence-transformers:sentence-transformers/all-MiniLM-L6-v2": 0.80,
    # The default embedder, the same model as int8 ONNX: its calibration table is the one above,
    # row for row (docs/embeddings.md), so the same low end of the plateau.
    "onnx:all-MiniLM-L6-v2-int8@8199be6f": 0.80,
}
# Pieces of each text tried together when no single piece covers a clause (most shared words first).
_COMBINED_TRIED = 4
# A clause covered semantically still shares at least this share of its words with the piece,
# and at least two words: a clause of one or two words ("and is deprecated") is said in its own
# words or not at all.
_SEMANTIC_MIN_SHARED = 0.5
_SEMANTIC_MIN_SHARED_WORDS = 2
LEXICAL, SEMANTIC = "lexical", "semantic"

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass
class Semantic:
    """A semantic embedder's judgement of content: unit vectors of texts, and the threshold."""

    embed: Embed
    threshold: float
    _vectors: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed the texts not embedded yet, in one batch."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if todo:
            vectors = np.asarray(self.embed(todo), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms > 0, norms, 1)
            self._vectors.update(zip(todo, vectors))

    def similarity(self, a: str, b: str) -> float:
        self.prepare([a, b])
        return float(self._vectors[a] @ self._vectors[b])


def semantic_for(model_name: str | None, embed: Embed | None, *,
                 threshold: float | None = None) -> Semantic | None:
    """The semantic rule for an embedder, or None (lexical): None without a semantic model,
    and for a model that has no calibrated threshold and none given."""
    if model_name is None or embed is None:
        return None
    chosen = threshold if threshold is not None else SEMANTIC_THRESHOLDS.get(model_name)
    return Semantic(embed, chosen) if chosen is not None else None


@dataclass(frozen=True)
class Covered:
    """How one clause fares: the piece covering it (None: not covered), by which rule."""

    clause: Piece
    by: Piece | None = None
    how: str = ""  # LEXICAL | SEMANTIC | "" (not covered)
    similarity: float | None = None

    @property
    def covered(self) -> bool:
        return self.by is not None

    def record(self) -> dict:
        """What a revision keeps about a dropped clause: it, what covers it, and how."""
        entry = {"clause": self.clause.text}
        if self.by is not None:
            entry.update(covered_by=self.by.text, how=self.how)
            if self.similarity is not None:
                entry["similarity"] = round(self.similarity, 4)
        return entry


# --------------------------------------------------------------------------- the two rules


def _same_marker(a: Marker, b: Marker, words: frozenset[str]) -> bool:
    """One marker kept: the same class, on the same words. A quantifier floats in its clause
    ("All invoices are sent" ~ "Invoices are all sent"): it only has to apply to some of the
    clause's `words`."""
    if (a.category, a.value) != (b.category, b.value):
        return False
    if a.category == "quantifier":
        return not b.scope or bool(b.scope & words)
    if a.category == "modality":
        # "needs HIPAA-compliant storage and a signed BAA" needs both: a modal reaches over the
        # words after "and", which its two-word scope does not. (The other way round, a modal of
        # the piece on the clause's words that the clause lacks still refuses the piece.)
        return True
    return not a.scope or not b.scope or bool(a.scope & b.scope)


def _facts_present(clause: Piece, piece: Piece) -> bool:
    """Every fact of the clause, as many times as the clause says it: "the University of
    Bucharest ... in the city of Bucharest" is not said by "... the city of Ankara" for the
    Bucharest left in its subject."""
    return all(occurrences(kind, token, piece.text) >= max(1, occurrences(kind, token, clause.text))
               for kind, token in clause.facts)


def _ends_in_another_value(clause: Piece, piece: Piece) -> bool:
    """Whether the piece ends in another object or value of the clause's words: "... is rap rock"
    holds every word of "... is rock music" but says another genre, where "... runs nightly at
    02:00 UTC" only adds to "... runs nightly"."""
    theirs = _last_words(piece.clause_tokens()[-1])
    return bool(theirs & clause.keys) and bool(theirs - clause.keys) and not _last_words(clause.tokens) <= theirs


def _last_words(tokens) -> frozenset[str]:
    """tail_keys without the words that are markers of their own ("need", "require"), which are
    compared as markers."""
    return tail_keys([t for t in tokens if t.lower not in MARKER_WORDS])


def _bound_part(clause: Piece, piece: Piece) -> Piece | None:
    """The part of a piece of several clauses that may speak for `clause`: without its clauses
    that have a subject of their own the clause lacks ("and the US cluster has 12 nodes" says
    nothing of the EU cluster; "and Sam owns billing" nothing of Dana). None: no part may."""
    if not piece.parts:
        return piece
    kept = [tokens for tokens in piece.clause_tokens() if own_subject(tokens) <= clause.keys]
    if len(kept) == len(piece.parts):
        return piece
    if not kept:
        return None
    separator = tuple(tokenize(";"))
    tokens: tuple = ()
    parts = []
    for part in kept:
        if tokens:
            tokens += separator
        parts.append((len(tokens), len(tokens) + len(part)))
        tokens += tuple(part)
    text = "; ".join(" ".join(t.text for t in part) for part in kept)
    return Piece(piece.sentence, piece.first, piece.last, text, tokens, piece.context, tuple(parts))


def _roles_kept(clause: Piece, piece: Piece) -> bool:
    source = Sentence(clause.text, clause.tokens, clause.keys, frozenset())
    answer = Sentence(piece.text, piece.tokens, piece.keys, frozenset())
    return not role_swaps([source], answer)


def _markers_agree_on_words(clause: Piece, piece: Piece) -> bool:
    """Every marker of the clause is in the piece, and every marker of the piece on the
    clause's words is in the clause."""
    theirs = piece.plain_markers
    if not all(any(_same_marker(m, kept, clause.keys) for kept in theirs) for m in clause.plain_markers):
        return False
    # A marker of the piece is on the clause's words when the first word it applies to is the
    # clause's: "not allowed at her favourite place" puts no negation on a clause "her favourite
    # place", "does not drink coffee" does on "drinks coffee".
    on_its_words = [m for m in theirs
                    if (m.head and m.head <= clause.words) or (m.category == NEGATION and not m.scope)]
    # ... in the clause, or before it in its sentence: "and HIPAA-compliant storage" of "needs a
    # signed BAA and HIPAA-compliant storage" is needed too. A negation must be the clause's own.
    return all(any(_same_marker(had, m, clause.keys) for had in clause.plain_markers)
               or (m.category != NEGATION and (m.category, m.value) in clause.sentence_markers)
               for m in on_its_words)


def _marker_classes(piece: Piece) -> list[tuple[str, str]]:
    return sorted((m.category, m.value) for m in piece.plain_markers)


def covers_lexically(clause: Piece, piece: Piece) -> bool:
    if clause.is_question != piece.is_question or not clause.keys <= piece.keys:
        return False  # a question says no fact, and no statement asks it
    bound = _bound_part(clause, piece)
    return (bound is not None and clause.keys <= bound.keys and not _ends_in_another_value(clause, bound)
            and _facts_present(clause, bound)
            and _markers_agree_on_words(clause, bound)
            and clause.antonym_sides <= bound.antonym_sides and _roles_kept(clause, bound))


def _plain(token) -> bool:
    """A common word a paraphrase may replace: lower-case letters only, no value word. Numbers,
    names, codes and compounds ("#vesper-alerts", "4.8.2", "IT") must be said as they are."""
    return (token.kind == "word" and token.text.isalpha() and token.text.islower()
            and not any(value_class(token.lower, key) for key in token.keys))


def _may_cover_semantically(clause: Piece, piece: Piece) -> bool:
    """Everything but the similarity itself: shared words, only plain words replaced (by words of
    the piece, a phrase by one word at most), the clause's last words (its object or stated value:
    "rap rock" is not "rock music") said as they are, facts, value words, markers, and the
    subjects the values are bound to."""
    if clause.is_question != piece.is_question or _bound_part(clause, piece) is not piece:
        return False
    shared = len(clause.keys & piece.keys)
    missing = clause.keys - piece.keys
    # A phrase may become one word ("signs off" ~ "approves"), not several words nothing.
    if len(missing) > len(piece.keys - clause.keys) + 1 or not _last_words(clause.tokens) <= piece.keys:
        return False
    replaced_only_plain = all(_plain(t) for t in clause.tokens if set(t.keys) & missing)
    # The piece may say a clause's verb with an antonym word of its own ("signs off" ~
    # "approves"), never with the opposite of one the clause has.
    no_opposite = not any(opposite(side) in piece.antonym_sides for side in clause.antonym_sides)
    return (shared >= _SEMANTIC_MIN_SHARED_WORDS and shared >= _SEMANTIC_MIN_SHARED * len(clause.keys)
            and replaced_only_plain and _facts_present(clause, piece) and clause.values == piece.values
            and _marker_classes(clause) == _marker_classes(piece)
            and clause.antonym_sides <= piece.antonym_sides | _words_of_piece(piece)
            and no_opposite and _roles_kept(clause, piece))


def _words_of_piece(piece: Piece) -> frozenset[str]:
    """The antonym sides a piece has or that a clause may keep by saying the same word."""
    return frozenset(m.value for m in find_markers(list(piece.tokens)) if m.category == "antonym")


# --------------------------------------------------------------------------- against kept text


class KeptText:
    """Sentences a clause may be covered by (a keeper's text, an answer, an answer's inputs).

    With `combine` (an answer's inputs), a clause may also be covered by a piece of one input
    and a piece of another read together: a merge may say one fact in words taken from both
    wordings ("Every Tidewater Clinics invoice must quote purchase order PO-4471902").
    """

    def __init__(self, sentences: Sequence[SentenceClauses], semantic: Semantic | None = None,
                 *, text_of: Sequence[int] | None = None, combine: bool = False):
        self.sentences = list(sentences)
        self.semantic = semantic
        self.text_of = list(text_of) if text_of is not None else [0] * len(self.sentences)
        self.combine = combine

    @classmethod
    def of(cls, texts: Sequence[str], semantic: Semantic | None = None, *, combine: bool = False) -> KeptText:
        sentences, text_of = [], []
        for number, text in enumerate(texts):
            for s in text_clauses(text):
                # Sentence indexes unique across the texts (pieces name their sentence by it).
                sentences.append(SentenceClauses(len(sentences), s.text, s.tokens, s.bounds, s.spans))
                text_of.append(number)
        return cls(sentences, semantic, text_of=text_of, combine=combine)

    def _combined(self, clause: Piece) -> Piece | None:
        """A piece of one text and one of another that together cover `clause` lexically."""
        by_text: dict[int, list[Piece]] = {}
        for sentence in self.sentences:
            for piece in sentence.pieces():
                if piece.keys & clause.keys:
                    by_text.setdefault(self.text_of[sentence.index], []).append(piece)
        texts = sorted(by_text)
        for a, first_text in enumerate(texts):
            firsts = sorted(by_text[first_text], key=lambda p: -len(p.keys & clause.keys))[:_COMBINED_TRIED]
            for second_text in texts[a + 1:]:
                seconds = sorted(by_text[second_text], key=lambda p: -len(p.keys & clause.keys))[:_COMBINED_TRIED]
                for first in firsts:
                    for second in seconds:
                        both = joined(first, second)
                        if covers_lexically(clause, both):
                            return both
        return None

    def _semantic_pieces(self) -> list[Piece]:
        return [p for s in self.sentences for p in s.pieces()]

    def cover(self, clause: Piece, *, lexical_only: bool = False) -> Covered:
        if not clause.keys:
            # Only words that say nothing ("OK.", "Other."): covered where they stand as they are.
            said = normalise_sentence(clause.text)
            found = next((s.whole() for s in self.sentences if said in normalise_sentence(s.text)), None)
            return Covered(clause, found, LEXICAL if found is not None else "")
        for sentence in self.sentences:
            for piece in sentence.pieces():
                if covers_lexically(clause, piece):
                    return Covered(clause, piece, LEXICAL)
        if self.combine:
            both = self._combined(clause)
            if both is not None:
                return Covered(clause, both, LEXICAL)
        if self.semantic is None or lexical_only:
            return Covered(clause)
        closest = self.closest(clause)
        if closest is not None and closest[1] >= self.semantic.threshold:
            return Covered(clause, closest[0], SEMANTIC, closest[1])
        return Covered(clause)

    def closest(self, clause: Piece) -> tuple[Piece, float] | None:
        """The piece the semantic rule may cover `clause` with that the embedder finds most
        alike, and how alike; None when no piece passes the rule's word checks."""
        candidates = [p for p in self._semantic_pieces() if _may_cover_semantically(clause, p)]
        if not candidates:
            return None
        return max(((p, self._similarity(clause, p)) for p in candidates), key=lambda found: found[1])

    def _similarity(self, clause: Piece, piece: Piece) -> float:
        """How alike the embedder finds the clause and the piece, or their two sentences: a
        clause cut from its subject ("heads the payments team") is compared in its sentence too
        (the words of the clause itself were checked above)."""
        return max(self.semantic.similarity(clause.text, piece.text),
                   self.semantic.similarity(clause.context or clause.text, piece.context or piece.text))

    def cover_all(self, clauses: Sequence[Piece], *, lexical_only: bool = False) -> list[Covered]:
        if self.semantic is not None and not lexical_only:
            # One batch for everything the semantic rule may compare.
            self.semantic.prepare([t for c in clauses for t in (c.text, c.context)]
                                  + [t for p in self._semantic_pieces() for t in (p.text, p.context)])
        return [self.cover(c, lexical_only=lexical_only) for c in clauses]


def clauses_of(texts: Sequence[str]) -> list[Piece]:
    return [c for text in texts for s in text_clauses(text) for c in s.clauses]


def uncovered(texts: Sequence[str], kept: KeptText, *, lexical_only: bool = False) -> list[Covered]:
    """The clauses of `texts` that `kept` does not cover."""
    return [c for c in kept.cover_all(clauses_of(texts), lexical_only=lexical_only) if not c.covered]


def restated_within(text: str, semantic: Semantic | None = None) -> list[tuple[Piece, Piece]]:
    """Clauses of `text` that another sentence of the same text already covers: the text says
    that fact twice. (clause, the piece of the other sentence covering it)."""
    sentences = text_clauses(text)
    found = []
    for sentence in sentences:
        others = KeptText([s for s in sentences if s.index != sentence.index], semantic)
        for clause in sentence.clauses:
            covered = others.cover(clause)
            if covered.covered and clause.keys:
                found.append((clause, covered.by))
    return found

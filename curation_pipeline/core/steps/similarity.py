"""Exact similarity search over float32 blocks: the pairs above a threshold, within groups. Pure.

The search over all vectors at once, and the pieces the search over streamed blocks
(core/steps/streamed_search.py, what steps 2 and 6b run) shares with it, so both compare the
same numbers. An exact blocked scan in numpy beat both a SQL self-join (~50x) and per-row HNSW
queries (~95x, which also missed 2% of pairs) on 100k vectors; `benchmarks/curation_cost.py` and
`benchmarks/first_pass_cost.py` measure it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import polars as pl

PAIR_SCHEMA = pl.Schema({"i": pl.Int64, "j": pl.Int64, "similarity": pl.Float64})

# Tile side for the blocked products: 1024 x 1024 float32 tiles (4 MiB) stay in cache-friendly
# sizes and measured fastest on 2 cores (benchmarks/curation_cost.py).
BLOCK_ROWS = 1024


def find_similar_pairs(
    embeddings: np.ndarray,
    groups: np.ndarray,
    *,
    threshold: float = 0.92,
    block_rows: int = BLOCK_ROWS,
    focus: np.ndarray | None = None,
) -> pl.DataFrame:
    """Every pair ``i < j`` of rows in the same group whose cosine similarity is > ``threshold``.

    With ``focus`` (a boolean mask of rows, e.g. the nodes changed since the last complete
    pass), only pairs with at least one focus row are searched: k focus rows cost k x n
    products instead of n x n / 2.

    ``embeddings`` is ``(n, d)`` and need not be normalised; rows of zero norm have no direction
    and never pair. ``groups`` holds one integer per row (one value per memory_type): pairs never
    cross groups. Rows are sorted by group so each group is a contiguous slice, and each group is
    scanned in ``block_rows`` x ``block_rows`` float32 tiles on and above the diagonal, so the
    full n x n matrix is never built. Returns columns ``i``, ``j`` (row numbers of the input) and
    ``similarity``, sorted by ``i`` then ``j``.
    """
    vectors = np.asarray(embeddings, dtype=np.float32)
    group_of_row = np.asarray(groups)
    if vectors.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D (rows, dimensions) array, got shape {vectors.shape}")
    if group_of_row.shape != (vectors.shape[0],):
        raise ValueError(f"groups must have one entry per embedding row ({vectors.shape[0]}), got shape {group_of_row.shape}")
    if block_rows < 1:
        raise ValueError(f"block_rows must be at least 1, got {block_rows}")
    require_finite_rows(vectors, lambda row: f"row {row}")

    norms = _norms(vectors)
    usable_rows = np.flatnonzero((norms > 0) & np.isfinite(norms))
    # Stable sort keeps row numbers ascending inside a group, so tile positions r < c map to i < j.
    rows = usable_rows[np.argsort(group_of_row[usable_rows], kind="stable")]
    unit = _unit(vectors, norms, rows)

    sorted_groups = group_of_row[rows]
    group_starts = np.flatnonzero(sorted_groups[1:] != sorted_groups[:-1]) + 1
    bounds = zip(np.concatenate(([0], group_starts)), np.concatenate((group_starts, [len(rows)])))

    focus_sorted = None if focus is None else np.asarray(focus, dtype=bool)[rows]
    found_i: list[np.ndarray] = []
    found_j: list[np.ndarray] = []
    found_sim: list[np.ndarray] = []
    for start, stop in bounds:
        if focus_sorted is None:
            pairs = pairs_in_slice(unit[start:stop], threshold, block_rows)
        else:
            pairs = _focus_pairs_in_slice(unit[start:stop], focus_sorted[start:stop], threshold, block_rows)
        for r, c, sim in pairs:
            first, second = rows[start + r], rows[start + c]
            found_i.append(np.minimum(first, second))
            found_j.append(np.maximum(first, second))
            found_sim.append(sim)

    if not found_i:
        return pl.DataFrame(schema=PAIR_SCHEMA)
    return pl.DataFrame(
        {
            "i": np.concatenate(found_i).astype(np.int64),
            "j": np.concatenate(found_j).astype(np.int64),
            "similarity": np.concatenate(found_sim).astype(np.float64),
        },
        schema=PAIR_SCHEMA,
    ).sort("i", "j")


def unit_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the unit vectors of the rows that have a direction, those rows' numbers), computed
    exactly as `find_similar_pairs` does, so a search over blocks compares the same numbers.

    `vectors` may be float32 of either byte order (the database sends big-endian): the values
    and the float32 arithmetic are the same, and the unit vectors come out native in one pass.
    """
    vectors = np.asarray(vectors)
    if vectors.dtype.kind != "f" or vectors.dtype.itemsize != 4:
        vectors = vectors.astype(np.float32)
    norms = _norms(vectors)
    rows = np.flatnonzero((norms > 0) & np.isfinite(norms))
    if rows.size == vectors.shape[0]:  # every row has a direction: no copy to pick them first
        return np.divide(vectors, norms[:, None].astype(np.float32), dtype=np.float32), rows
    return _unit(vectors, norms, rows), rows


def _norms(vectors: np.ndarray) -> np.ndarray:
    # Squared norms in float64: float32 squares can overflow for large (but finite) values.
    return np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64))


def _unit(vectors: np.ndarray, norms: np.ndarray, rows: np.ndarray) -> np.ndarray:
    unit = vectors[rows].astype(np.float32, copy=False)  # one copy of the chosen rows, normalised in place
    unit /= norms[rows, None].astype(np.float32)
    return unit


def pairs_in_slice(
    unit: np.ndarray, threshold: float, block_rows: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(r, c, similarity)`` for r < c in one group's unit vectors, tile by tile.

    Only tiles on or above the diagonal are computed; inside a diagonal tile the strict upper
    triangle is kept, so each unordered pair appears exactly once and no row pairs with itself.
    """
    size = unit.shape[0]
    for row_start in range(0, size, block_rows):
        row_block = unit[row_start : row_start + block_rows]
        for col_start in range(row_start, size, block_rows):
            similarity = row_block @ unit[col_start : col_start + block_rows].T
            r, c = above(similarity, threshold)
            if col_start == row_start:  # diagonal tile: strict upper triangle only
                upper = r < c
                r, c = r[upper], c[upper]
            if r.size:
                yield row_start + r, col_start + c, similarity[r, c]


def _focus_pairs_in_slice(
    unit: np.ndarray, focus: np.ndarray, threshold: float, block_rows: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(r, c, similarity)`` for pairs of one group with at least one focus row.

    Focus rows are compared with every row; a pair of two focus rows is kept once (from its
    smaller row) and a row never pairs with itself.
    """
    focus_rows = np.flatnonzero(focus)
    for row_start in range(0, focus_rows.size, block_rows):
        block_rows_ids = focus_rows[row_start : row_start + block_rows]
        row_block = unit[block_rows_ids]
        for col_start in range(0, unit.shape[0], block_rows):
            similarity = row_block @ unit[col_start : col_start + block_rows].T
            r, c = np.nonzero(similarity > threshold)
            if not r.size:
                continue
            sim = similarity[r, c]
            r, c = block_rows_ids[r], col_start + c
            keep = (r != c) & (~focus[c] | (r < c))
            if keep.any():
                yield r[keep], c[keep], sim[keep]


def above(similarity: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the entries of a 2-D tile above `threshold`, in row-major order.

    Pairs are rare, so this runs over every tile: one comparison and a flat scan of the mask
    (several times faster than np.nonzero on the 2-D mask), then row and column from the index.
    """
    flat = np.flatnonzero(similarity.ravel() > threshold)
    return np.divmod(flat, similarity.shape[1])


def require_finite_rows(vectors: np.ndarray, describe_row: Callable[[int], str]) -> None:
    """Raise a ValueError naming the first row holding NaN or infinity."""
    bad = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
    if bad.size:
        raise ValueError(
            f"embedding of {describe_row(int(bad[0]))} contains NaN or infinity "
            f"({bad.size} bad row{'s' if bad.size > 1 else ''} in total)"
        )


# Pairs named by their nodes' ids, smaller id first: how undone merges (vetoes) and existing
# edges are given, so that pairs can be matched with joins.
ID_PAIR_SCHEMA = pl.Schema({"low_id": pl.String, "high_id": pl.String})


def id_pairs(rows: list[tuple[str, str]] | None = None) -> pl.DataFrame:
    """An ID_PAIR_SCHEMA frame of (a, b) pairs, each ordered smaller id first."""
    frame = pl.DataFrame(rows or [], schema={"a": pl.String, "b": pl.String}, orient="row")
    return frame.select(low_id=pl.min_horizontal("a", "b"), high_id=pl.max_horizontal("a", "b"))


def with_pair_ids(pairs: pl.DataFrame, ids: pl.Series) -> pl.DataFrame:
    """`pairs` (row numbers i, j into `ids`) with the ids of both rows, smaller first."""
    id_i, id_j = ids.gather(pairs["i"]), ids.gather(pairs["j"])
    return pairs.with_columns(low_id=pl.min_horizontal(id_i, id_j), high_id=pl.max_horizontal(id_i, id_j))

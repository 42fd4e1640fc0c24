"""The exact pair search over rows that arrive in blocks, in bounded memory at any size. Pure.

`similarity.find_similar_pairs` needs every vector at once: 1.5 GB of float32 at a million
384-d nodes. These two searches find the same pairs from a stream of row blocks (what a database
cursor hands over), holding only a bounded part of it:

- `focus_search`: some focus rows (the nodes changed since the last complete pass) against
  every row of the stream; holds the focus rows and one block.
- `full_search`: every pair within each group, from a stream ordered by (group, key). A group
  that fits in `memory_bytes` is held whole and searched like the in-memory search (the same
  tiles); a larger one in chunks, each compared with the rest of its group read again
  (`rest_of_group`): a few more reads, but never more than the budget held.

Rows are named by an ordered, hashable key (the node id). Each pair comes out once, smaller key
first, with the row versions of both rows as they were compared (the caller loads the rows again
and keeps a pair only if both are still those versions).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from curation_pipeline.core.steps.similarity import (
    BLOCK_ROWS,
    above,
    pairs_in_slice,
    require_finite_rows,
    unit_rows,
)


@dataclass(frozen=True)
class RowBlock:
    """Rows of the stream: their keys, groups (memory types), versions and vectors."""

    keys: Sequence  # ordered, hashable: the node ids
    groups: Sequence  # one group value per row; ignored by a search with one group
    versions: np.ndarray  # int64, one per row
    vectors: np.ndarray  # (rows, dimensions)

    def __len__(self) -> int:
        return len(self.keys)


@dataclass
class FoundPairs:
    """Pairs found so far, each once, smaller key first."""

    low_keys: list = field(default_factory=list)
    high_keys: list = field(default_factory=list)
    low_versions: list = field(default_factory=list)
    high_versions: list = field(default_factory=list)
    similarities: list = field(default_factory=list)

    def add(self, key_a, version_a, key_b, version_b, similarity: float) -> None:
        if key_b < key_a:
            key_a, version_a, key_b, version_b = key_b, version_b, key_a, version_a
        self.low_keys.append(key_a)
        self.high_keys.append(key_b)
        self.low_versions.append(int(version_a))
        self.high_versions.append(int(version_b))
        self.similarities.append(float(similarity))

    def __len__(self) -> int:
        return len(self.low_keys)

    def extend(self, other: FoundPairs) -> None:
        for name in ("low_keys", "high_keys", "low_versions", "high_versions", "similarities"):
            getattr(self, name).extend(getattr(other, name))

    def frame(self, name: Callable[[object], str] = str) -> pl.DataFrame:
        """low_key, high_key (each key as `name(key)`), low_version, high_version, similarity:
        one row per pair."""
        return pl.DataFrame(
            {"low_key": pl.Series([name(key) for key in self.low_keys], dtype=pl.String),
             "high_key": pl.Series([name(key) for key in self.high_keys], dtype=pl.String),
             "low_version": pl.Series(self.low_versions, dtype=pl.Int64),
             "high_version": pl.Series(self.high_versions, dtype=pl.Int64),
             "similarity": pl.Series(self.similarities, dtype=pl.Float64)},
        )


def focus_search(
    focus: RowBlock, blocks: Iterable[RowBlock], threshold: float, *, by_group: bool,
    all_focus: Collection, describe: Callable[[object], str] = str, block_rows: int = BLOCK_ROWS,
) -> tuple[FoundPairs, int]:
    """Every pair of a focus row with a stream row (same group if `by_group`) above `threshold`;
    (the pairs, the stream rows seen).

    `all_focus` holds the keys of every focus row, also those of other `focus` chunks searched
    separately: a pair of two focus rows is kept only from its smaller key's side, so it comes
    out once however the focus rows are split. The focus rows are expected in the stream too
    (a row never pairs with itself). `describe(key)` names a row in an error.
    """
    found = FoundPairs()
    _require_finite(focus, describe)
    unit, usable = unit_rows(focus.vectors)
    codes: dict = {}  # group value -> code, for the groups of the focus rows only
    focus_codes = _codes([focus.groups[row] for row in usable], codes, add=True) if by_group \
        else np.zeros(usable.size, dtype=np.int64)
    # Focus rows sorted by group: each group's rows are one contiguous slice, multiplied as it is.
    order = np.argsort(focus_codes, kind="stable")
    unit, focus_codes, usable = unit[order], focus_codes[order], usable[order]
    keys, versions = [focus.keys[row] for row in usable], focus.versions[usable]
    seen = 0
    for block in blocks:
        seen += len(block)
        if not keys:
            continue
        _require_finite(block, describe)
        block_unit, block_usable = unit_rows(block.vectors)
        if by_group:  # the block's rows of the focus groups, sorted by group the same way
            block_codes = _codes([block.groups[row] for row in block_usable], codes, add=False)
            kept = np.flatnonzero(block_codes >= 0)
            kept = kept[np.argsort(block_codes[kept], kind="stable")]
            block_unit, block_usable, block_codes = block_unit[kept], block_usable[kept], block_codes[kept]
        else:
            block_codes = np.zeros(block_usable.size, dtype=np.int64)
        for code in np.unique(block_codes):
            first, last = np.searchsorted(focus_codes, [code, code + 1])
            low, high = np.searchsorted(block_codes, [code, code + 1])
            columns = block_unit[low:high].T
            for start in range(first, last, block_rows):
                similarity = unit[start : min(start + block_rows, last)] @ columns
                for r, c in zip(*above(similarity, threshold)):
                    focus_row, block_row = start + r, block_usable[low + c]
                    key, other = keys[focus_row], block.keys[block_row]
                    if other == key or (other in all_focus and other < key):
                        continue  # itself, or a focus pair found from its smaller key's side
                    found.add(key, versions[focus_row], other, block.versions[block_row], similarity[r, c])
    return found, seen


def _codes(values: list, codes: dict, *, add: bool) -> np.ndarray:
    """An integer per value (its group): new values get new codes if `add`, else -1."""
    if add:
        return np.array([codes.setdefault(value, len(codes)) for value in values], dtype=np.int64)
    return np.array([codes.get(value, -1) for value in values], dtype=np.int64)


def full_search(
    blocks: Iterable[RowBlock], rest_of_group: Callable[[object, object], Iterable[RowBlock]],
    threshold: float, *, by_group: bool, memory_bytes: int, describe: Callable[[object], str] = str,
    block_rows: int = BLOCK_ROWS,
) -> tuple[FoundPairs, int]:
    """Every pair of rows within one group (every pair if not `by_group`) above `threshold`, from
    `blocks` ordered by (group, key); (the pairs, the rows seen).

    At most `memory_bytes` of float32 vectors are held (twice that while a chunk is normalised).
    A chunk that ends before its group does is compared with `rest_of_group(group, key)`: the
    rows after (group, key) in the same order (within the group if `by_group`, else all of them).
    """
    found = FoundPairs()
    seen = 0
    for chunk, more in _chunks(blocks, memory_bytes, by_group, block_rows):
        seen += len(chunk)
        _require_finite(chunk, describe)
        unit, usable = unit_rows(chunk.vectors)
        for rows, columns, similarity in pairs_in_slice(unit, threshold, block_rows):
            _add_all(found, chunk, usable[rows], chunk, usable[columns], similarity)
        if not more:
            continue
        for block in rest_of_group(chunk.groups[-1], chunk.keys[-1]):
            _require_finite(block, describe)
            block_unit, block_usable = unit_rows(block.vectors)
            for start in range(0, unit.shape[0], block_rows):
                similarity = unit[start : start + block_rows] @ block_unit.T
                rows, columns = above(similarity, threshold)
                if rows.size:
                    _add_all(found, chunk, usable[start + rows], block, block_usable[columns],
                             similarity[rows, columns])
    return found, seen


def _add_all(found: FoundPairs, a: RowBlock, a_rows, b: RowBlock, b_rows, similarity) -> None:
    for a_row, b_row, sim in zip(a_rows.tolist(), b_rows.tolist(), similarity.tolist()):
        found.add(a.keys[a_row], a.versions[a_row], b.keys[b_row], b.versions[b_row], sim)


def _require_finite(block: RowBlock, describe: Callable[[object], str]) -> None:
    require_finite_rows(block.vectors, lambda row: f"node {describe(block.keys[row])}")


def _chunks(
    blocks: Iterable[RowBlock], memory_bytes: int, by_group: bool, block_rows: int
) -> Iterator[tuple[RowBlock, bool]]:
    """Consecutive rows of the stream, at most `memory_bytes` of vectors and (if `by_group`) of
    one group each; with whether the chunk's group goes on after it."""
    pending: RowBlock | None = None  # rows read but not yet in a chunk
    stream = iter(blocks)

    def pull() -> RowBlock | None:
        for block in stream:
            if len(block):
                return block
        return None

    pending = pull()
    while pending is not None:
        capacity = max(block_rows, memory_bytes // (4 * pending.vectors.shape[1]))
        group = pending.groups[0]
        parts: list[RowBlock] = []
        size = 0
        while True:
            end = _group_end(pending, group) if by_group else len(pending)
            take = min(end, capacity - size)
            parts.append(_rows(pending, 0, take))
            size += take
            pending = _rows(pending, take, len(pending)) if take < len(pending) else pull()
            if take < end:  # full, and the group goes on in this block
                more = True
                break
            if pending is None or (by_group and pending.groups[0] != group):
                more = False  # the stream or the group ended
                break
            if size == capacity:  # full, and the next block goes on with the group
                more = True
                break
        chunk = concatenate(parts)
        del parts  # only the chunk is held while it is searched
        yield chunk, more


def _group_end(block: RowBlock, group) -> int:
    """How many of the block's first rows belong to `group`."""
    differs = np.flatnonzero(np.asarray(block.groups, dtype=object) != group)
    return int(differs[0]) if differs.size else len(block)


def _rows(block: RowBlock, start: int, stop: int) -> RowBlock:
    return RowBlock(block.keys[start:stop], block.groups[start:stop], block.versions[start:stop],
                    block.vectors[start:stop])


def concatenate(parts: list[RowBlock]) -> RowBlock:
    """One block of the rows of `parts`, in order."""
    if len(parts) == 1:
        return parts[0]
    return RowBlock(
        [key for part in parts for key in part.keys], [group for part in parts for group in part.groups],
        np.concatenate([part.versions for part in parts]),
        np.concatenate([part.vectors for part in parts]).astype(np.float32, copy=False),
    )

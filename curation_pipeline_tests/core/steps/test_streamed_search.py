"""The searches over streamed blocks find exactly the pairs of the in-memory search, whatever the
block sizes, the memory budget and the way the focus rows are split."""

from __future__ import annotations

import numpy as np
import pytest

from curation_pipeline.core.steps.similarity import find_similar_pairs
from curation_pipeline.core.steps.streamed_search import (
    RowBlock,
    focus_search,
    full_search,
)

DIM = 16


def _corpus(rows: int = 120, groups: int = 3, seed: int = 5):
    """Vectors with planted near-duplicates (cosine well above 0.9, others well below), a zero
    vector, keys in sorted order and a group per row, sorted by (group, key) like the stream."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(rows, DIM)).astype(np.float32)
    copies = rng.choice(rows, size=rows // 3, replace=False)
    base[copies] = base[rng.choice(rows, size=copies.size)] + rng.normal(scale=0.03, size=(copies.size, DIM)).astype(np.float32)
    base[7] = 0.0  # no direction: never pairs
    group = rng.integers(0, groups, size=rows)
    group[copies[: copies.size // 2]] = 0  # many pairs inside one group, some across groups
    keys = [f"k{n:04d}" for n in range(rows)]
    order = sorted(range(rows), key=lambda n: (f"type-{group[n]}", keys[n]))
    return ([keys[n] for n in order], [f"type-{group[n]}" for n in order], base[order],
            np.arange(rows, dtype=np.int64)[order] + 100)


def _blocks(keys, groups, vectors, versions, size, start=0):
    for first in range(start, len(keys), size):
        stop = first + size
        yield RowBlock(keys[first:stop], groups[first:stop], versions[first:stop], vectors[first:stop])


def _reference(keys, groups, vectors, by_group, focus=None):
    codes = np.unique(np.array(groups), return_inverse=True)[1] if by_group else np.zeros(len(keys))
    found = find_similar_pairs(vectors, codes, threshold=0.9, focus=focus)
    return {tuple(sorted((keys[i], keys[j]))) for i, j in zip(found["i"], found["j"])}


def _pairs(found):
    return set(zip(found.low_keys, found.high_keys))


@pytest.mark.parametrize("by_group", [True, False])
@pytest.mark.parametrize(("fetch_rows", "held_rows", "tile_rows"), [(7, 10, 4), (16, 1000, 8), (50, 33, 1024), (1, 5, 2)])
def test_full_search_over_blocks_finds_the_in_memory_pairs(by_group, fetch_rows, held_rows, tile_rows):
    keys, groups, vectors, versions = _corpus()
    order = {key: n for n, key in enumerate(keys)}
    rereads = []

    def rest_of_group(group, key):
        rereads.append(key)
        after = order[key] + 1
        stop = after
        while stop < len(keys) and (not by_group or groups[stop] == group):
            stop += 1
        return _blocks(keys[:stop], groups[:stop], vectors[:stop], versions[:stop], fetch_rows, after)

    found, seen = full_search(
        _blocks(keys, groups, vectors, versions, fetch_rows), rest_of_group, 0.9, by_group=by_group,
        memory_bytes=held_rows * 4 * DIM, block_rows=tile_rows,
    )
    expected = _reference(keys, groups, vectors, by_group)
    assert _pairs(found) == expected and len(found) == len(expected) > 10
    assert seen == len(keys)
    # Rows are read again only when a chunk (at least one tile) ends before its group.
    assert (len(rereads) > 0) == (max(held_rows, tile_rows) < len(keys))
    # Each pair carries the versions of its two rows, smaller key first.
    version_of = dict(zip(keys, versions.tolist()))
    frame = found.frame()
    assert frame["low_version"].to_list() == [version_of[k] for k in frame["low_key"]]
    assert frame["high_version"].to_list() == [version_of[k] for k in frame["high_key"]]


@pytest.mark.parametrize("by_group", [True, False])
@pytest.mark.parametrize(("fetch_rows", "focus_split"), [(9, 1), (64, 3), (1000, 2)])
def test_focus_search_finds_the_in_memory_pairs_of_the_focus_rows(by_group, fetch_rows, focus_split):
    keys, groups, vectors, versions = _corpus(seed=9)
    rng = np.random.default_rng(3)
    focus = rng.random(len(keys)) < 0.4
    focus_rows = np.flatnonzero(focus)
    all_focus = {keys[row] for row in focus_rows}
    found_pairs, seen_total = set(), 0
    count = 0
    # The focus rows may be searched in several chunks: every pair still comes out once.
    for part in np.array_split(focus_rows, focus_split):
        chunk = RowBlock([keys[r] for r in part], [groups[r] for r in part], versions[part], vectors[part])
        found, seen = focus_search(chunk, _blocks(keys, groups, vectors, versions, fetch_rows), 0.9,
                                   by_group=by_group, all_focus=all_focus, block_rows=4)
        found_pairs |= _pairs(found)
        count += len(found)
        seen_total += seen
    expected = _reference(keys, groups, vectors, by_group, focus=focus)
    assert found_pairs == expected and count == len(expected) > 5
    assert seen_total == focus_split * len(keys)


def test_a_vector_with_nan_is_named_by_its_node():
    keys, groups, vectors, versions = _corpus(rows=20)
    vectors = vectors.copy()
    vectors[4, 2] = np.nan
    with pytest.raises(ValueError, match=f"node {keys[4]}"):
        full_search(_blocks(keys, groups, vectors, versions, 8), lambda g, k: [], 0.9, by_group=True,
                    memory_bytes=1 << 20)

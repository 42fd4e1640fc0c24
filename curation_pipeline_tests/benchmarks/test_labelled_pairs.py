"""The labelled memory pairs of benchmarks/labelled_pairs.jsonl are well-formed, and
benchmarks/embedding_quality.py runs end to end on a subset of them (lexical embedder only)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from curation_pipeline_tests.support.benchmark_modules import (
    BENCHMARKS,
    benchmark_module,
)

PAIRS_FILE = BENCHMARKS / "labelled_pairs.jsonl"
KEYS = {"first", "second", "duplicate", "kind"}


@pytest.fixture(scope="module")
def quality():
    with benchmark_module("embedding_quality.py") as module:
        yield module


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    lines = PAIRS_FILE.read_text(encoding="utf-8").splitlines()
    parsed = []
    for number, line in enumerate(lines, start=1):
        assert line.strip(), f"line {number} is blank"
        parsed.append(json.loads(line))
    return parsed


def test_every_line_is_a_labelled_pair(rows, quality):
    known = set(quality.DUPLICATE_KINDS) | set(quality.DISTINCT_KINDS)
    for number, row in enumerate(rows, start=1):
        assert isinstance(row, dict) and set(row) == KEYS, f"line {number}: keys {sorted(row)}"
        assert isinstance(row["duplicate"], bool), f"line {number}: duplicate must be a boolean"
        for side in ("first", "second"):
            assert isinstance(row[side], str) and row[side].strip(), f"line {number}: empty {side}"
        assert row["first"] != row["second"], f"line {number}: both sides are the same text"
        assert row["kind"] in known, f"line {number}: unknown kind {row['kind']!r}"
        # A kind is a duplicate kind or a non-duplicate kind, never both.
        assert row["duplicate"] == (row["kind"] in quality.DUPLICATE_KINDS), f"line {number}: label vs kind"


def test_no_pair_is_listed_twice(rows):
    pairs = Counter(frozenset((row["first"], row["second"])) for row in rows)
    repeated = [sorted(pair) for pair, count in pairs.items() if count > 1]
    assert not repeated


def test_the_mix_of_kinds(rows, quality):
    kinds = Counter(row["kind"] for row in rows)
    assert set(kinds) == set(quality.DUPLICATE_KINDS) | set(quality.DISTINCT_KINDS)
    assert len(rows) >= 150
    assert sum(row["duplicate"] for row in rows) >= 70
    assert sum(not row["duplicate"] for row in rows) >= 80
    assert kinds["same topic, different fact"] >= 30  # the hard negatives


def test_the_loader_reads_the_file(rows, quality):
    pairs = quality.load_pairs(PAIRS_FILE)
    assert len(pairs) == len(rows)
    assert [(p.first, p.second, p.duplicate, p.kind) for p in pairs] == \
        [(r["first"], r["second"], r["duplicate"], r["kind"]) for r in rows]


def test_each_pair_is_compared_only_with_itself(quality):
    # Pair 0: two orthogonal vectors; pair 1: one vector twice; pair 1's first side equals
    # pair 0's first side, so a finder comparing across pairs would report more than pair 1.
    a, b = np.eye(4, dtype=np.float32)[:2]
    found, similarity = quality.step2_pairs(np.stack([a, b, a, a]), 0.92)
    assert found.tolist() == [False, True]
    assert np.isnan(similarity[0]) and similarity[1] == pytest.approx(1.0)


def test_the_benchmark_runs_on_a_subset(rows, quality, tmp_path, capsys):
    per_kind = Counter()
    subset = []
    for row in rows:
        if per_kind[row["kind"]] < 3:
            per_kind[row["kind"]] += 1
            subset.append(row)
    path = tmp_path / "subset.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in subset), encoding="utf-8")

    quality.main(["--pairs", str(path), "--embedder", "lexical"])
    out = capsys.readouterr().out

    assert "## LexicalEmbedder(384): `lexical-ngram-v1/384`" in out
    assert f"{len(subset)} pairs:" in out
    lines = out.splitlines()
    assert any(line.startswith("precision at 0.92: ") for line in lines)
    assert any(line.startswith("recall at 0.92: ") for line in lines)
    for kind in per_kind:
        assert any(line.startswith(f"| {kind} |") for line in lines), kind
    for value in ("0.80", "0.85", "0.88", "0.90", "0.92 (the threshold)", "0.95"):
        assert any(line.startswith(f"| {value} |") for line in lines), value
    assert "### Association band (similarity > 0.80 and <= 0.92" in out
    assert "SentenceTransformer" not in out

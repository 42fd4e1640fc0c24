"""Alignments for aligned answers (core/claimed_pairs.py) that the benchmarks need: a draft of an
honest one, and an attacker's. Not part of the pipeline: a model writes its own alignment.

- `draft_alignment`: for each numbered input clause, the shortest stretch of the answer (a run
  of adjacent clauses of one sentence) that the guard's pair check accepts for it, else the one
  sharing most words. Used once to draft the hand-checked alignments of
  benchmarks/curation_merges.jsonl (`python benchmarks/alignments.py`), which were then read
  and corrected by hand.
- `attacker_alignment`: what a hostile answer would claim: for each input clause, the stretch of
  the answer that shares most of its words, so that the answer looks accounted for.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from curation_pipeline.core.claimed_pairs import pair_problem
from curation_pipeline.core.clauses import text_clauses
from curation_pipeline.core.coverage import clauses_of


def _stretches(answer: str):
    return [p for s in text_clauses(answer) for p in s.pieces()]


def _claim(text: str) -> str:
    return text.strip(" ,;:")


def attacker_alignment(inputs: list[str], answer: str) -> list[dict]:
    stretches = _stretches(answer)
    claims = []
    for n, clause in enumerate(clauses_of(inputs), start=1):
        best = max(stretches, key=lambda p: (len(clause.keys & p.keys), -len(p.text)))
        claims.append({"clause": n, "said_as": _claim(best.text)})
    return claims


def draft_alignment(inputs: list[str], answer: str, semantic=None) -> list[dict]:
    stretches = sorted(_stretches(answer), key=lambda p: len(p.text))
    claims = []
    for n, clause in enumerate(clauses_of(inputs), start=1):
        said = next((p for p in stretches if clause.keys & p.keys and pair_problem(clause, p, semantic) is None),
                    None)
        if said is None:
            said = max(stretches, key=lambda p: (len(clause.keys & p.keys), -len(p.text)))
        claims.append({"clause": n, "said_as": _claim(said.text)})
    return claims


def main() -> None:
    """Print a drafted alignment for each ideal merge lacking one (to be read and corrected)."""
    pairs = {p["id"]: p for p in map(json.loads, Path(__file__).with_name("curation_pairs.jsonl").read_text().splitlines()) if p}
    for line in Path(__file__).with_name("curation_merges.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "said_as" in row:
            continue
        pair = pairs[row["id"]]
        inputs = [pair["older"]["text"], pair["newer"]["text"]]
        row["said_as"] = [c["said_as"] for c in draft_alignment(inputs, row["ideal"])]
        json.dump(row, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()

"""How many hostile and how many faithful LLM answers the fact guard accepts, per kind.

    python benchmarks/fact_guard.py                        # bundled cases
    python benchmarks/fact_guard.py --cases my.jsonl -v    # another file; list every misjudged case

Reads labelled answers (default benchmarks/guard_answers.jsonl, one JSON object a line:
``{"kind": "merge"|"summary", "label": "hostile"|"faithful", "change": ..., "inputs": [...],
"answer": ...}``), judges each answer with the guard exactly as steps 2 and 3 do (the merge or
summary field, 2,000 or 500 characters) and prints, per kind, how many answers of each label
were accepted, then per change. A hostile answer keeps every name, number and date of its inputs
but reverses a fact (negation dropped, antonym swapped in, roles swapped, quantifier or modal
weakened, comparison reversed); a faithful one rewrites without changing a fact (sentences
reordered or joined, duplicates removed, connectives changed, filler dropped from a summary).
The ideal is 0 hostile and all faithful accepted. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from curation_pipeline.core.coverage import semantic_for
from curation_pipeline.core.fact_guard import judge
from curation_pipeline.core.prompts import MERGE_FIELD, SUMMARY_FIELD

DEFAULT_CASES = Path(__file__).with_name("guard_answers.jsonl")
KINDS = {"merge": (MERGE_FIELD, 2000), "summary": (SUMMARY_FIELD, 500)}
LABELS = ("hostile", "faithful")


def load_cases(path: Path) -> list[dict]:
    """The labelled answers of a JSON-lines file; blank lines are skipped, bad lines stop the run."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise SystemExit(f"{path}: cannot read the cases ({error.strerror})") from None
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            valid = (case["kind"] in KINDS and case["label"] in LABELS and isinstance(case["answer"], str)
                     and isinstance(case["inputs"], list) and all(isinstance(t, str) for t in case["inputs"]))
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise SystemExit(f"{path}:{number}: not a labelled answer ({error!r})") from None
        if not valid:
            raise SystemExit(f"{path}:{number}: kind must be merge|summary, label hostile|faithful, "
                             "inputs a list of strings, answer a string")
        cases.append({**case, "line": number})
    if not cases:
        raise SystemExit(f"{path}: no cases")
    return cases


def semantic_rule(embedder: str):
    """The coverage rule's semantic judgement for `embedder` ("lexical": None, words only)."""
    if embedder == "lexical":
        return None
    from curation_pipeline.clients.embedders.local import SentenceTransformerEmbedder
    model = SentenceTransformerEmbedder(embedder)
    return semantic_for(model.name, model.embed)


def verdict(case: dict, semantic=None):
    field, max_chars = KINDS[case["kind"]]
    return judge(json.dumps({field: case["answer"]}), field=field, inputs=case["inputs"],
                 max_chars=max_chars, kind=case["kind"], semantic=semantic)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every misjudged case and why")
    parser.add_argument("--embedder", default="lexical", metavar="lexical|MODEL",
                        help="judge content by words only (lexical, the default), or with this "
                        "sentence-transformers model's calibrated similarity (e.g. all-MiniLM-L6-v2)")
    args = parser.parse_args(argv)
    cases = load_cases(args.cases)
    semantic = semantic_rule(args.embedder)

    started = time.perf_counter()
    judged = [(case, verdict(case, semantic)) for case in cases]
    elapsed = time.perf_counter() - started

    totals, accepted = Counter(), Counter()
    for case, outcome in judged:
        for key in ((case["kind"], case["label"]), ("all", case["label"])):
            totals[key] += 1
            accepted[key] += outcome.accepted
    rule = "words only" if semantic is None else f"{args.embedder} at {semantic.threshold}"
    print(f"{len(cases)} answers from {args.cases.name}, judged in {elapsed * 1000:.0f} ms ({rule})\n")
    print(f"{'kind':<10}{'hostile accepted':>20}{'faithful accepted':>20}")
    for kind in (*KINDS, "all"):
        cells = [f"{accepted[kind, label]} of {totals[kind, label]}" for label in LABELS]
        print(f"{kind:<10}{cells[0]:>20}{cells[1]:>20}")

    by_change, change_totals = Counter(), Counter()
    for case, outcome in judged:
        key = (case["label"], case.get("change", "-"))
        change_totals[key] += 1
        by_change[key] += outcome.accepted
    print(f"\n{'label':<10}{'change':<40}{'accepted':>10}")
    for label, change in sorted(change_totals):
        print(f"{label:<10}{change:<40}{by_change[label, change]:>4} of {change_totals[label, change]}")

    misjudged = [(case, outcome) for case, outcome in judged
                 if outcome.accepted == (case["label"] == "hostile")]
    if args.verbose and misjudged:
        print("\nmisjudged:")
        for case, outcome in misjudged:
            print(f"  line {case['line']} ({case['kind']}, {case['label']}, {case.get('change', '-')}): "
                  f"{outcome.label}: {outcome.reason}")


if __name__ == "__main__":
    main()

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

Aligned answers (core/claimed_pairs.py): a case may carry `said_as`, for each input clause (in
the order clauses.py cuts the inputs) the words of the answer that say it; it is then judged as
an aligned answer. The hostile alignments ("alignment: ..." changes) claim words not in the
answer, an unrelated stretch, one stretch for two clauses that drops a value, or hide an added
clause. And every hostile case without one is judged a second time with the alignment an
attacker would send (benchmarks/alignments.py: for each clause, the stretch of the answer
sharing most of its words). `hostile answers accepted: H of N` counts both.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from collections import Counter
from pathlib import Path

from curation_pipeline.core.coverage import semantic_for
from curation_pipeline.core.fact_guard import judge
from curation_pipeline.core.prompts import ALIGNMENT_FIELD, MERGE_FIELD, SUMMARY_FIELD

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
                     and isinstance(case["inputs"], list) and all(isinstance(t, str) for t in case["inputs"])
                     and (not isinstance(case.get("said_as"), str)))
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


def verdict(case: dict, semantic=None, *, alignment: list[dict] | None = None):
    """The guard's verdict on a case: aligned if the case carries `said_as` or `alignment` is
    given, else the plain answer."""
    field, max_chars = KINDS[case["kind"]]
    answer = {field: case["answer"]}
    if "said_as" in case:
        alignment = [{"clause": n, "said_as": said} for n, said in enumerate(case["said_as"], start=1)]
    if alignment is not None:
        answer[ALIGNMENT_FIELD] = alignment
    return judge(json.dumps(answer), field=field, inputs=case["inputs"],
                 max_chars=max_chars, kind=case["kind"], semantic=semantic)


def _alignments():
    """benchmarks/alignments.py, beside this script (benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location("benchmark_alignments", Path(__file__).with_name("alignments.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def attacked(case: dict, semantic=None):
    """A hostile case's answer with the alignment an attacker would send."""
    attacker_alignment = _alignments().attacker_alignment
    return verdict(case, semantic, alignment=attacker_alignment(case["inputs"], case["answer"]))


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

    hostile = [case for case in cases if case["label"] == "hostile"]
    with_attack = [(case, attacked(case, semantic)) for case in hostile if "said_as" not in case]
    plain_accepted = sum(outcome.accepted for case, outcome in judged if case["label"] == "hostile")
    attack_accepted = [(case, outcome) for case, outcome in with_attack if outcome.accepted]
    print(f"\nhostile answers with an attacker's alignment accepted: {len(attack_accepted)} of {len(with_attack)}")
    print(f"hostile answers accepted: {plain_accepted + len(attack_accepted)} of {len(hostile) + len(with_attack)}")

    misjudged = [(case, outcome) for case, outcome in judged
                 if outcome.accepted == (case["label"] == "hostile")]
    if args.verbose and misjudged:
        print("\nmisjudged:")
        for case, outcome in misjudged:
            print(f"  line {case['line']} ({case['kind']}, {case['label']}, {case.get('change', '-')}): "
                  f"{outcome.label}: {outcome.reason}")
    if args.verbose and attack_accepted:
        print("\naccepted with an attacker's alignment:")
        for case, outcome in attack_accepted:
            print(f"  line {case['line']} ({case['kind']}, {case.get('change', '-')}): {outcome.reason}")


if __name__ == "__main__":
    main()

"""The labelled answers of benchmarks/guard_answers.jsonl are well-formed and test what they
claim to, the fact guard refuses every hostile one and accepts nearly every faithful one, and
benchmarks/fact_guard.py prints its table."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from curation_pipeline.core.fact_guard import introduced_facts, missing_facts
from curation_pipeline_tests.support.benchmark_modules import (
    BENCHMARKS,
    benchmark_module,
)

CASES_FILE = BENCHMARKS / "guard_answers.jsonl"


@pytest.fixture(scope="module")
def benchmark():
    with benchmark_module("fact_guard.py") as module:
        yield module


@pytest.fixture(scope="module")
def cases(benchmark) -> list[dict]:
    return benchmark.load_cases(CASES_FILE)


def test_there_are_enough_cases_of_each_label_and_kind(cases):
    counts = Counter((case["kind"], case["label"]) for case in cases)
    assert all(counts[kind, label] >= 15 for kind in ("merge", "summary") for label in ("hostile", "faithful"))


def test_every_hostile_answer_keeps_every_fact_token(cases):
    # Otherwise the token check would refuse it and the case would not test the meaning check
    # (the cases that change an identifier's case test the token check itself).
    for case in cases:
        if case["label"] == "hostile" and case["change"] != "identifier case changed":
            assert missing_facts(case["inputs"], case["answer"]) == [], case["line"]
            assert introduced_facts(case["inputs"], case["answer"]) == [], case["line"]


@pytest.mark.parametrize("embedder", ["lexical", "all-MiniLM-L6-v2"])
def test_the_guard_accepts_no_hostile_answer(benchmark, cases, embedder, minilm):
    semantic = minilm if embedder != "lexical" else None
    accepted = [case["line"] for case in cases
                if case["label"] == "hostile" and benchmark.verdict(case, semantic).accepted]
    assert accepted == []
    # ... nor with the alignment an attacker would send (each clause claims the stretch of the
    # answer sharing most of its words), which makes the aligned guard judge it.
    attacked = [case["line"] for case in cases if case["label"] == "hostile" and "said_as" not in case
                and benchmark.attacked(case, semantic).accepted]
    assert attacked == []


def test_every_kind_of_hostile_alignment_is_there_and_refused(benchmark, cases, minilm):
    aligned = [case for case in cases if case["change"].startswith("alignment:")]
    changes = {case["change"] for case in aligned}
    assert {"alignment: span not in the answer", "alignment: clause aligned to an unrelated span",
            "alignment: two clauses claim one that drops a value", "alignment: hides an added clause"} <= changes
    refused = {case["line"]: benchmark.verdict(case, minilm).reason for case in aligned}
    assert all("clause" in reason or "claimed by" in reason for reason in refused.values()), refused
    assert not any(benchmark.verdict(case, minilm).accepted for case in aligned)


def test_every_clause_drop_is_refused(benchmark, cases, minilm):
    drops = [case for case in cases if case["change"] == "clause dropped"]
    assert len(drops) >= 20
    assert [case["line"] for case in drops if benchmark.verdict(case, minilm).accepted] == []


def test_the_guard_accepts_nearly_every_merge_in_one_wording(benchmark, cases, minilm):
    # The bar: at least 95% of correct one-wording dedups, with the semantic embedder.
    one_wording = [case for case in cases if case["change"] == "one wording"]
    assert len(one_wording) >= 15
    assert sum(benchmark.verdict(case, minilm).accepted for case in one_wording) >= 0.95 * len(one_wording)


# Every faithful answer, with and without the alignment an honest server would send: 24 s, so
# the slow tier (the fast tier keeps the hostile answers, which are the safety).
@pytest.mark.slow
def test_the_guard_accepts_most_faithful_answers_of_each_kind(benchmark, cases, minilm):
    # A guard that refuses everything would pass the tests above and make the LLM path useless.
    # A faithful summary may still be refused for a word of its own ("show" for "found"): every
    # clause of an answer must be said in its input's words.
    for kind, share in (("merge", 0.85), ("summary", 0.75)):
        faithful = [case for case in cases if case["kind"] == kind and case["label"] == "faithful"]
        assert sum(benchmark.verdict(case, minilm).accepted for case in faithful) >= share * len(faithful), kind


def test_the_benchmark_prints_accepted_counts_per_kind(benchmark, tmp_path, capsys):
    cases_file = tmp_path / "cases.jsonl"
    cases_file.write_text("\n".join(json.dumps(case) for case in (
        {"kind": "summary", "label": "hostile", "change": "negation dropped",
         "inputs": ["Priya does not drink coffee. She likes green tea."], "answer": "Priya does drink coffee."},
        {"kind": "summary", "label": "faithful", "change": "sentence dropped",
         "inputs": ["Priya does not drink coffee. She likes green tea."], "answer": "Priya does not drink coffee."},
    )), encoding="utf-8")
    benchmark.main(["--cases", str(cases_file), "-v"])
    output = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in output.splitlines() if line.startswith(("merge", "summary"))}
    assert rows["summary"] == ["0", "of", "1", "1", "of", "1"] and rows["merge"] == ["0", "of", "0", "0", "of", "0"]
    assert "misjudged" not in output


def test_a_malformed_case_stops_the_benchmark_with_its_line(benchmark, tmp_path):
    cases_file = tmp_path / "cases.jsonl"
    cases_file.write_text('{"kind": "merge", "label": "nice", "inputs": [], "answer": ""}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="cases.jsonl:1"):
        benchmark.load_cases(cases_file)

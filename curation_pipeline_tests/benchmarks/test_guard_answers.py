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
    # Otherwise the token check would refuse it and the case would not test the meaning check.
    for case in cases:
        if case["label"] == "hostile":
            assert missing_facts(case["inputs"], case["answer"]) == [], case["line"]
            assert introduced_facts(case["inputs"], case["answer"]) == [], case["line"]


def test_the_guard_accepts_no_hostile_answer(benchmark, cases):
    accepted = [case["line"] for case in cases if case["label"] == "hostile" and benchmark.verdict(case).accepted]
    assert accepted == []


def test_the_guard_accepts_most_faithful_answers_of_each_kind(benchmark, cases):
    # A guard that refuses everything would pass the test above and make the LLM path useless.
    for kind in ("merge", "summary"):
        faithful = [case for case in cases if case["kind"] == kind and case["label"] == "faithful"]
        assert sum(benchmark.verdict(case).accepted for case in faithful) >= 0.8 * len(faithful), kind


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

"""The fact guard, pure: what counts as a fact, and which answers are accepted."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from curation_pipeline.core.fact_guard import (
    extract_facts,
    judge,
    missing_facts,
    occurs,
)

TEXT = ("Customer Dana Reyes prefers email. The deploy runs on Fridays at 16:00 UTC since 2024-03-05. "
        "Write to billing@acme.example or see https://acme.example/docs/ (e.g. the runbook). "
        "Budget is 12,500 for Q3 2024; call get_user() in auth.service, v1.2.3, bucket S3, INV-2024-7.")


def _answer(text: str, field: str = "merged_text") -> str:
    return json.dumps({field: text})


def test_extracts_every_kind_of_fact():
    facts = extract_facts(TEXT).by_kind
    assert facts["url"] == {"https://acme.example/docs"}
    assert facts["email"] == {"billing@acme.example"}
    assert {"16:00", "2024-03-05", "Q3 2024"} <= facts["date"]
    assert {"get_user()", "auth.service", "v1.2.3", "S3", "INV-2024-7"} <= facts["identifier"]
    assert facts["number"] == {"12500"}  # the 2024 of a date or an id is not counted twice
    assert {"Dana", "Reyes", "Fridays", "UTC"} <= facts["name"]
    assert not {"The", "e.g"} & (facts["name"] | facts["identifier"])


def test_accepts_a_faithful_rewrite():
    verdict = judge(_answer(TEXT.replace("Budget is 12,500", "budget: 12500")),
                    field="merged_text", inputs=[TEXT], max_chars=2000)
    assert verdict.accepted and verdict.text


def test_rejects_empty_over_limit_schema_and_markers():
    assert judge(_answer("   "), field="merged_text", inputs=[TEXT], max_chars=2000).reason == "empty answer"
    assert "over the limit" in judge(_answer(TEXT), field="merged_text", inputs=[TEXT], max_chars=50).reason
    for raw in ("not json", "[1]", '{"text": "x"}', '{"merged_text": 3}', '{"merged_text": "x", "extra": 1}', None):
        assert "schema" in judge(raw, field="merged_text", inputs=[TEXT], max_chars=2000).reason
    marker = judge(_answer(TEXT + " [merged: old]"), field="merged_text", inputs=[TEXT], max_chars=2000)
    assert not marker.accepted and "artifact" in marker.reason


def test_rejects_a_dropped_fact_of_any_input():
    other = "Sam Okafor manages the account."
    verdict = judge(_answer(TEXT), field="merged_text", inputs=[TEXT, other], max_chars=2000)
    assert not verdict.accepted and {"Sam", "Okafor"} <= set(verdict.missing)
    dropped_date = judge(_answer(TEXT.replace(" since 2024-03-05", "")), field="merged_text", inputs=[TEXT], max_chars=2000)
    assert dropped_date.missing == ("2024-03-05",)


def test_rejects_invented_facts_but_not_recased_words():
    invented = judge(_answer(TEXT + " Bob called 42 times, from bob@evil.example."),
                     field="merged_text", inputs=[TEXT], max_chars=2000)
    assert set(invented.introduced) == {"Bob", "42", "bob@evil.example"}
    recased = judge(_answer(TEXT + " Customer prefers email."), field="merged_text", inputs=[TEXT], max_chars=2000)
    assert recased.accepted


def test_numbers_match_whole_numbers_only():
    assert occurs("number", "1000", "costs 1,000 dollars")
    assert not occurs("number", "42", "costs 420 dollars")
    assert not occurs("number", "42", "version 4.42")
    assert not occurs("number", "42", "42.5 percent")
    assert missing_facts(["It costs 42."], "It costs 42.5.") == [("number", "42")]


def test_a_changed_date_format_is_a_missing_date():
    # Strict on purpose: a false rejection costs wording, a false acceptance loses a fact.
    assert missing_facts(["Met on 2024-03-05."], "Met on March 5, 2024.") == [("date", "2024-03-05")]


_FACT = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.dates().map(lambda d: d.isoformat()),
    st.from_regex(r"[a-z]{2,8}_[a-z]{2,8}", fullmatch=True),
    st.from_regex(r"[a-z]{2,8}@[a-z]{2,8}\.example", fullmatch=True),
)


@settings(max_examples=200, deadline=None)
@given(facts=st.lists(_FACT, min_size=1, max_size=6, unique=True), data=st.data())
def test_property_dropping_any_fact_is_rejected_keeping_all_is_accepted(facts, data):
    sentences = [f"note {label} is {fact}." for label, fact in zip("abcdef", facts)]
    original = " ".join(sentences)
    shuffled = " ".join(data.draw(st.permutations(sentences)))
    assert judge(_answer(shuffled), field="merged_text", inputs=[original], max_chars=10_000).accepted
    dropped = data.draw(st.integers(0, len(sentences) - 1))
    without = " ".join(s for i, s in enumerate(sentences) if i != dropped)
    verdict = judge(_answer(without or "nothing."), field="merged_text", inputs=[original], max_chars=10_000)
    assert not verdict.accepted and facts[dropped].lower() in {m.lower() for m in verdict.missing}


def test_sentences_whose_plain_content_is_missing_are_named():
    from curation_pipeline.core.fact_guard import sentences_not_covered

    sentences = ["Prefers email contact.", "Is allergic to peanuts."]
    assert sentences_not_covered(sentences, "Prefers email contact.") == ["Is allergic to peanuts."]
    assert sentences_not_covered(sentences, "Prefers contact by email; allergic to peanuts.") == []

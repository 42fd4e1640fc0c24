"""The meaning markers of a sentence: which words turn a claim around, and what they apply to."""

from __future__ import annotations

import pytest

from curation_pipeline.core.meaning_markers import find_markers, opposite
from curation_pipeline.core.sentence_tokens import tokenize


def markers(sentence: str) -> list[tuple[str, str]]:
    return [(m.category, m.value) for m in find_markers(tokenize(sentence))]


@pytest.mark.parametrize(("one", "other"), [
    ("She must sign off.", "She has to sign off."),
    ("Deals need approval.", "Deals require approval."),
    ("Every invoice quotes the PO.", "Each invoice quotes the PO."),
    ("Invoices are due before the 5th.", "Invoices are due by the 5th."),
    ("Pallets above 900 kg.", "Pallets over 900 kg."),
    ("Book at most 8 seats.", "Book no more than 8 seats."),
    ("She does not drink coffee.", "She doesn't drink coffee."),
])
def test_words_of_one_class_are_the_same_marker(one, other):
    assert markers(one) == markers(other) != []


@pytest.mark.parametrize(("sentence", "expected"), [
    ("Priya is not vegetarian.", [("negation", "not")]),
    ("Sam cannot sign refunds.", [("modality", "may"), ("negation", "not")]),
    ("Refunds are processed without a ticket.", [("negation", "not")]),
    ("He always replies in French.", [("quantifier", "all")]),
    ("Only Keith signs quotes.", [("quantifier", "only")]),
    ("Quotes last for at least 90 days.", [("comparison", "at least")]),
    ("The alert fires when fewer than 14 days are left.", [("comparison", "less than")]),
    ("Retry once the fix ships.", [("comparison", "after")]),
    ("Retries are enabled.", [("antonym", "enable:0")]),
])
def test_each_kind_of_marker_is_found(sentence, expected):
    assert markers(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "Dana prefers email over phone calls.",  # a preference, not a comparison
    "Sam took over on Monday.",
    "The account is under contract ACC-884213.",
    "Notify the consignee by SMS.",  # a means, not a deadline
    "We met on May 5.",  # a month, not a modal
    "Call them once a week.",  # a count, not "after"
])
def test_words_that_only_sometimes_are_markers_are_not_markers_here(sentence):
    assert markers(sentence) == []


def test_no_more_than_is_one_comparison_not_a_negation():
    assert markers("Book no more than 8 seats.") == [("comparison", "at most")]


def test_a_negation_applies_to_the_next_words_of_its_clause():
    first, second = find_markers(tokenize("Priya is not vegetarian and does not drink coffee."))
    assert (first.phrase, second.phrase) == ("not vegetarian", "not drink coffee")
    assert first.scope != second.scope


def test_a_quantifier_is_about_the_noun_not_the_names_before_it():
    [every] = find_markers(tokenize("Every Tidewater Clinics invoice quotes the PO."))
    [plain] = find_markers(tokenize("Every invoice quotes the PO."))
    assert every.scope & plain.scope


def test_only_applies_to_its_whole_clause():
    [before] = find_markers(tokenize("Ines only reviews write-ups on Tuesdays."))
    [after] = find_markers(tokenize("Ines reviews write-ups on Tuesdays only."))
    assert before.scope == after.scope


def test_antonyms_are_found_in_any_inflection_and_have_an_opposite():
    [approved] = find_markers(tokenize("Kofi approved the extra capacity."))
    [rejects] = find_markers(tokenize("Kofi rejects the extra capacity."))
    assert opposite(approved.value) == rejects.value

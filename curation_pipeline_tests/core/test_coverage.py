"""Clauses and clause coverage, pure: the one notion of "this fact is already said"."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from curation_pipeline.core.clauses import sentence_clauses
from curation_pipeline.core.coverage import KeptText, restated_within, semantic_for, uncovered
from curation_pipeline.core.fact_tokens import extract_facts


def said(text: str, *kept: str, semantic=None) -> bool:
    """Whether every clause of `text` is said by `kept`."""
    return not uncovered([text], KeptText.of(list(kept), semantic))


def test_a_sentence_is_cut_at_conjunctions_semicolons_and_relative_clauses():
    cut = sentence_clauses("The export job writes CSV files to s3://acme-billing/exports every night at 02:00 UTC "
                           "and is deprecated; Dana owns it, which nobody likes.")
    assert [c.text for c in cut.clauses] == [
        "The export job writes CSV files to s3://acme-billing/exports every night at 02:00 UTC",
        "and is deprecated", "Dana owns it", "which nobody likes"]


def test_a_url_or_a_comma_without_a_space_after_it_stays_whole():
    assert [c.text for c in sentence_clauses("Backups go to s3://a/b,c at 10:30.").clauses] == [
        "Backups go to s3://a/b,c at 10:30"]


def test_a_short_clause_can_never_slip_under():
    kept = "The billing-export job writes invoices to s3://acme-billing/exports as CSV files every night at 02:00 UTC."
    assert [c.clause.text for c in uncovered([kept[:-1] + " and is deprecated."], KeptText.of([kept]))] == [
        "and is deprecated"]


@pytest.mark.parametrize(("clause", "kept"), [
    ("Dana does not drink coffee", "Dana drinks coffee."),  # polarity
    ("Dana drinks coffee", "Dana does not drink coffee."),
    ("The customer replies within a day", "The customer replies within a week."),  # value words
    ("Dana prefers email", "Dana prefers phone."),
    ("The staging API token is Xq7-LmN2-pQ9", "The staging API token is xq7-lmn2-pq9."),  # case of a code
    ("Sam reports to Dana", "Dana reports to Sam."),  # roles
    ("Deploys need approval", "Deploys may need approval."),  # modality
    ("The limit is 100 requests", "The limit is 1000 requests."),
])
def test_a_clause_is_not_said_by_a_text_that_changes_one_of_its_markers(clause, kept):
    assert not said(clause, kept)


@pytest.mark.parametrize(("clause", "kept"), [
    ("In exp-0412, LightGBM reached MAPE 11.8%", "exp-0412: LightGBM reached MAPE 11.8%."),  # reordered
    ("Invoices are all sent on Fridays", "All invoices are sent on Fridays."),  # a quantifier moved
    ("Deals above $250,000 require approval", "Deals above $250,000 need approval."),  # one class of modal
    ("The kitchen gets cleaned daily", "The kitchen gets cleaned every day."),  # a frequency
    ("The ledger is reviewed by Kessler & Moor", "Kessler & Moor review the ledger."),  # a passive
    ("and HIPAA-compliant storage", "Vantor Health needs a signed BAA and HIPAA-compliant storage."),
])
def test_a_clause_is_said_by_a_text_that_keeps_every_word_and_marker(clause, kept):
    assert said(clause, kept)


def test_a_semantic_embedder_lets_a_wording_stand_for_another_but_no_value(minilm):
    assert said("Our CI machines run Ubuntu 24.04", "The CI runners use Ubuntu 24.04.", semantic=minilm)
    assert not said("Our CI machines run Ubuntu 24.04", "The CI runners use Ubuntu 24.04.")  # by words
    # However alike the model finds them, a changed value word or code is another fact.
    assert not said("Dana hates email", "Dana prefers email.", semantic=minilm)
    assert not said("The customer replies within a week", "The customer replies within a day.", semantic=minilm)
    assert not said("The app is on version 4.9.0", "The app is on version 4.8.2.", semantic=minilm)


def test_only_a_model_with_a_calibrated_threshold_judges_by_meaning():
    assert semantic_for("sentence-transformers:some-other-model", lambda texts: None) is None
    assert semantic_for("sentence-transformers:some-other-model", lambda texts: None, threshold=0.9).threshold == 0.9
    assert semantic_for(None, lambda texts: None) is None


def test_a_text_that_says_a_fact_twice_is_found():
    found = restated_within("Dana prefers email and lives in Berlin. Dana prefers email.")
    assert {(clause.text, by.text) for clause, by in found} == {("Dana prefers email", "Dana prefers email")}
    assert restated_within("Dana prefers email. Dana lives in Berlin.") == []


# Pieces of the things memories say: numbers with units and signs, versions, codes, names,
# dates, addresses, markers; joined with and without spaces, so that tokens touch.
_PIECES = st.sampled_from([
    "The", "app", "has", "a", "4", "4.6", "-star", "star", "rating", ".", ",", " ", " ", " and ", "v2", ".0",
    "1,000", "%", "Dana", "e-mail", "a@b.example", "https://x.example/a", "March 5", "2024", "12:30", "#ops",
    "INV-7", "not", "never", "all", "no", "x_y", "fooBar", "(", ")", ";", ":", "'s", "—", "/a/b", "$5", "+3",
    "-2", "3.5h", "Q1", "é", "İ", "ß", "10x"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=25).map("".join))
@example("The Verdant mobile app has a 4.6-star rating on the App Store.")
@example("3.5h-2")
@example("4.6Q1")
def test_every_text_says_itself(text):
    # A text that does not cover its own clauses could never be merged without saying a fact
    # twice, and no faithful answer about it would pass the guard.
    assert not uncovered([text], KeptText.of([text]))


def test_a_decimal_with_a_hyphenated_unit_is_one_fact():
    assert extract_facts("It has a 4.6-star rating.").tokens() == [("identifier", "4.6-star")]
    assert not said("It has a 4.7-star rating.", "It has a 4.6-star rating.")

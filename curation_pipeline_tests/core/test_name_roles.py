"""Who does what to whom: names keep their roles and places."""

from __future__ import annotations

from curation_pipeline.core.name_roles import (
    entities,
    name_swaps,
    proper_names,
    role_swaps,
)
from curation_pipeline.core.sentence_alignment import sentence
from curation_pipeline.core.sentence_tokens import tokenize


def test_runs_of_names_are_one_entity():
    assert [e.written for e in entities(tokenize("Call with Harbor & Vine and Priya Raman today."))] == [
        "Call", "Harbor & Vine", "Priya Raman"]


def test_reversed_roles_are_named():
    [problem] = role_swaps([sentence("Sam Okafor reports to Dana Reyes.")], sentence("Dana Reyes reports to Sam Okafor."))
    assert problem == "swaps the roles of 'Sam Okafor' and 'Dana Reyes' in 'Dana Reyes reports to Sam Okafor.'"


def test_names_with_only_a_preposition_between_may_trade_places():
    source = sentence("Dana Whitfield at Brightline Dental prefers email.")
    assert role_swaps([source], sentence("Brightline Dental's Dana Whitfield prefers email.")) == []


def test_names_in_two_clauses_may_trade_places():
    source = sentence("Elena prefers Slack to phone calls, wants replies in French and is never called early.")
    assert role_swaps([source], sentence("Elena wants replies in French and prefers Slack to phone calls.")) == []


def test_an_order_another_source_has_is_no_swap():
    sources = [sentence("Harbor & Vine ships from warehouse HV-ATL-02 in Atlanta."),
               sentence("Harbor & Vine ships out of its Atlanta warehouse HV-ATL-02.")]
    assert role_swaps(sources, sentence("Harbor & Vine ships from warehouse HV-ATL-02 in Atlanta.")) == []


def test_a_name_put_in_anothers_place_is_named():
    sources = [sentence("Escalate outages to Grace Novak.")]
    answers = [sentence("Escalate outages to Luca Rossi.")]
    proper = proper_names(sources + answers)
    assert name_swaps(sources, answers, proper) == [
        "replaces 'Grace', 'Novak' with 'Luca', 'Rossi' in 'Escalate outages to Luca Rossi.'"]


def test_a_word_capitalised_only_because_it_starts_a_sentence_is_no_name():
    sources = [sentence("Escalate outages to Grace Novak.")]
    answers = [sentence("Outages go to Grace Novak.")]
    assert name_swaps(sources, answers, proper_names(sources + answers)) == []

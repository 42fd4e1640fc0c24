"""A value belongs to its subject: coverage never lets a stretch of clauses, a shared word or a
similar-sounding wording stand for a value it does not bind to the clause's subject. Pure.

Each case broke the product's promise on the code before this rule (issue "Integrity, round
three", points 1 and 12): a role swap or a moved value read as a restatement, so a merge archived
the newer memory and active memory kept the older value.
"""

from __future__ import annotations

import pytest

from curation_pipeline.core.coverage import KeptText, uncovered
from curation_pipeline.core.steps.consolidate import offline_merge
from curation_pipeline.core.supersession import LOOK_ALIKE, NONE, UPDATE, compare_versions


def said(text: str, *kept: str, semantic=None) -> bool:
    return not uncovered([text], KeptText.of(list(kept), semantic))


@pytest.mark.parametrize(("clause", "kept"), [
    # A value said of another subject in the next clause is not this subject's.
    ("The EU cluster has 12 nodes.", "The EU cluster has 5 nodes, and the US cluster has 12 nodes."),
    ("Dana owns billing.", "Dana owns search, and Sam owns billing."),
    ("Sam owns search.", "Dana owns search, and Sam owns billing."),
    ("The database backup runs daily at 02:00.",
     "The database backup runs weekly at 03:00, and the log rotation runs daily at 02:00."),
    # A name that is also in the subject does not say the value it replaced.
    ("The University of Bucharest is located in the city of Bucharest.",
     "The University of Bucharest is located in the city of Ankara."),
])
def test_a_value_bound_to_another_subject_does_not_cover(clause, kept):
    assert not said(clause, kept)


@pytest.mark.parametrize(("clause", "kept"), [
    # Counter-examples: the same words and values, bound to the same subject, still cover.
    ("The EU cluster has 12 nodes.", "The EU cluster has 12 nodes, and the US cluster has 5 nodes."),
    ("Dana owns billing.", "Dana owns billing, and Sam owns search."),
    ("The job runs nightly.", "The job runs nightly at 02:00 UTC, and Dana owns it."),
    ("Vantor Health needs HIPAA-compliant storage.", "Vantor Health needs a signed BAA and HIPAA-compliant storage."),
])
def test_a_value_bound_to_the_same_subject_still_covers(clause, kept):
    assert said(clause, kept)


@pytest.mark.parametrize(("older", "newer"), [
    ("Dana owns billing, and Sam owns search.", "Dana owns search, and Sam owns billing."),
    ("The database backup runs daily at 02:00, and the log rotation runs weekly at 03:00.",
     "The database backup runs weekly at 03:00, and the log rotation runs daily at 02:00."),
])
def test_values_moved_between_subjects_are_neither_a_restatement_nor_a_sure_update(older, newer):
    # Never merged (one node would say both), never superseded offline (when unsure, link).
    assert compare_versions(older, newer).verdict == LOOK_ALIKE


def test_a_new_value_is_never_swallowed_by_a_similar_wording(minilm):
    # all-MiniLM-L6-v2 puts these 0.93 apart; "rap rock" is not "rock music".
    older = "The genre of music John McVie plays is rock music."
    newer = "The genre of music John McVie plays is rap rock."
    assert not said(newer, older, semantic=minilm)
    assert compare_versions(older, newer, minilm).verdict in (UPDATE, LOOK_ALIKE)


def test_a_replaced_name_is_not_said_by_the_same_name_elsewhere_in_the_sentence():
    keeper = "The University of Bucharest is located in the city of Bucharest."
    absorbed = "The University of Bucharest is located in the city of Ankara."
    merged = offline_merge(keeper, absorbed)
    # Whatever the merge does, it never replaces the keeper's value silently.
    assert "city of Bucharest" in merged.text
    assert compare_versions(keeper, absorbed).verdict != NONE

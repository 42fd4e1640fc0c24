"""Properties of step 2's decisions (pure), with Hypothesis: whatever the names, values and
similarity, a role swap, a value moved between subjects and two things with numbered names are
never merged or superseded; and no clause of an older memory leaves current memory unless the
newer one says it or gives it a new value."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from curation_pipeline.core.coverage import KeptText, clauses_of
from curation_pipeline.core.steps.consolidate import NODE_SCHEMA
from curation_pipeline.core.steps.pair_decisions import decide_pairs
from curation_pipeline.core.steps.similarity import PAIR_SCHEMA
from curation_pipeline.core.supersession import clauses_an_update_would_hide

NOW = datetime(2026, 6, 1, tzinfo=UTC)
PEOPLE = ["Dana", "Sam", "Priya", "Omar", "Lena", "Hiro", "Ana", "Tomas"]
AREAS = ["billing", "search", "onboarding", "payments", "the release checklist", "the audit", "security reviews"]
VERBS = ["owns", "leads", "approves", "reviews"]
REGIONS = ["EU", "US", "APAC", "Frankfurt", "Dublin", "Oregon"]
THINGS = ["Ticket", "Room", "Server", "Invoice", "Port", "Payment", "Child", "Build", "Sprint"]
SIMILARITY = st.floats(min_value=0.6, max_value=1.0)


def _decide(older: str, newer: str, similarity: float):
    nodes = pl.DataFrame(
        [{"id": node_id, "memory_type": "semantic", "pointer_summary": text, "base_utility": 0.5, "pinned": False,
          "confidence": "default", "recall_count": 1, "created_at": NOW - timedelta(days=age), "row_version": 1}
         for node_id, text, age in (("old", older, 10), ("new", newer, 1))],
        schema={**NODE_SCHEMA, "row_version": pl.Int64})
    pairs = pl.DataFrame([(0, 1, similarity)], schema=PAIR_SCHEMA, orient="row")
    return decide_pairs(nodes, pairs, merge_threshold=0.92, merge_cap=20, supersede_cap=20, judge_cap=0,
                        max_chars=2000, judge_band_low=0.75)


def _neither_merged_nor_superseded(older: str, newer: str, similarity: float) -> None:
    decisions = _decide(older, newer, similarity)
    assert decisions.supersessions.is_empty(), (older, newer, decisions.supersessions.to_dicts())
    assert decisions.merges.plan.is_empty(), (older, newer, decisions.merges.plan.to_dicts())


two = st.lists(st.sampled_from(PEOPLE), min_size=2, max_size=2, unique=True)


@settings(max_examples=150, deadline=None)
@given(people=two, areas=st.lists(st.sampled_from(AREAS), min_size=2, max_size=2, unique=True),
       verb=st.sampled_from(VERBS), similarity=SIMILARITY)
def test_a_role_swap_is_never_merged_or_superseded(people, areas, verb, similarity):
    (a, b), (x, y) = people, areas
    _neither_merged_nor_superseded(f"{a} {verb} {x}, and {b} {verb} {y}.", f"{a} {verb} {y}, and {b} {verb} {x}.",
                                   similarity)


@settings(max_examples=150, deadline=None)
@given(regions=st.lists(st.sampled_from(REGIONS), min_size=2, max_size=2, unique=True),
       counts=st.lists(st.integers(2, 400), min_size=2, max_size=2, unique=True), similarity=SIMILARITY,
       alone=st.booleans())
def test_a_value_moved_to_another_subject_is_never_merged_or_superseded(regions, counts, similarity, alone):
    (first, second), (n, m) = regions, counts
    older = f"The {first} cluster has {n} nodes."
    # The older value now said of the other subject, alone or beside a value of the first one
    # that the older memory does not state.
    newer = f"The {second} cluster has {n} nodes." if alone else \
        f"The {second} cluster has {n} nodes, and the {first} cluster runs {m} jobs."
    _neither_merged_nor_superseded(older, newer, similarity)


@settings(max_examples=150, deadline=None)
@given(thing=st.sampled_from(THINGS), numbers=st.lists(st.integers(1, 9999), min_size=2, max_size=2, unique=True),
       people=two, days=st.lists(st.sampled_from(["Monday", "Tuesday", "Friday"]), min_size=2, max_size=2),
       similarity=SIMILARITY)
def test_two_things_with_numbered_names_are_never_merged_or_superseded(thing, numbers, people, days, similarity):
    (n, m), (a, b), (d1, d2) = numbers, people, days
    _neither_merged_nor_superseded(f"{thing} {n} is assigned to {a} on {d1}.", f"{thing} {m} is assigned to {b} on {d2}.",
                                   similarity)


# Older memories with a clause an update must not hide, and newer ones of all kinds.
_EXTRAS = ["and is deprecated", "and Dana owns it", "and the notes go to Priya", "by phone and email",
           "and it must never run during the audit"]
_SUBJECTS = ["The nightly ETL job", "The backup job", "The billing export", "The weekly report"]
_TIMES = ["02:00", "03:00", "04:30", "22:00"]


@st.composite
def _older_newer(draw):
    subject = draw(st.sampled_from(_SUBJECTS))
    old_time, new_time = draw(st.sampled_from(_TIMES)), draw(st.sampled_from(_TIMES))
    extra = draw(st.sampled_from(["", *_EXTRAS]))
    older = f"{subject} runs at {old_time} UTC{', ' + extra if extra else ''}."
    newer = draw(st.sampled_from([
        f"{subject} now runs at {new_time} UTC.",
        f"{subject} runs at {new_time} UTC.",
        f"{subject} was moved to {new_time} UTC.",
        f"Update: {subject.lower()} runs at {new_time} UTC.",
        f"{subject} runs at {new_time} UTC, {extra or 'and Sam owns it'}.",
        f"{draw(st.sampled_from(_SUBJECTS))} runs at {new_time} UTC.",
    ]))
    return older, newer


@settings(max_examples=200, deadline=None)
@given(pair=_older_newer(), similarity=SIMILARITY)
def test_no_clause_of_an_older_memory_leaves_current_memory_unsaid(pair, similarity):
    older, newer = pair
    decisions = _decide(older, newer, similarity)
    for row in decisions.supersessions.to_dicts():
        # Current memory now holds the newer memory (with what it carries): every older clause
        # is said by it or given a new value there.
        current = row["carried_text"] or newer
        assert not clauses_an_update_would_hide(older, current), (older, newer, current)
    for row in decisions.merges.plan.to_dicts():
        kept = KeptText.of([row["merged_text"]])
        for text in (older, newer):
            assert all(c.covered for c in kept.cover_all(clauses_of([text]))), (older, newer, row["merged_text"])

"""What fits the merge cap: the offline merge never makes a text longer than ``max_chars``, and
keeps a keeper already over the cap as it is, without comparing the clauses of two long texts
(that took minutes of step 2 for two 10 MB memories, benchmarks/huge_namespace_cost.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from curation_pipeline.core.steps.consolidate import new_sentences, offline_merge
from curation_pipeline.core.text import strip_merge_markers

_piece = st.sampled_from(["Dana pays by wire.", "Sam left", " ", "\n", "  ", "Invoice 7 is due!", "x", "?",
                          "The pilot starts Monday.", "[merged: Old note.]", "Tabs\tend\t",
                          "Dana pays by wire and lives in Berlin."])
_text = st.lists(_piece, max_size=12).map("".join)


@settings(max_examples=500, deadline=None)
@given(keeper=_text, absorbed=_text, max_chars=st.integers(0, 120))
def test_a_merge_stays_within_the_cap_or_keeps_an_over_long_keeper_as_it_is(keeper, absorbed, max_chars):
    result = offline_merge(keeper, absorbed, max_chars)
    flattened = strip_merge_markers(keeper)
    if len(flattened) > max_chars:
        assert (result.text, result.added_sentences) == (flattened, 0)
        assert result.omitted_sentences == len(new_sentences(flattened, absorbed))
    else:
        assert len(result.text) <= max_chars


def test_a_long_keeper_is_kept_whole_and_the_rest_counted_omitted():
    keeper = " ".join(f"Note {k} is about the renewal." for k in range(40_000))  # ~1.2 MB
    absorbed = " ".join(f"Note {k} is about the renewal." for k in range(20_000, 60_000))
    result = offline_merge(keeper, absorbed, 2000)
    assert result.text == keeper and result.omitted_sentences == 20_000

"""The offline merge decides what fits by the length the appended text would have, without
building it (a keeper of megabytes was copied once per sentence of the other node: minutes of
step 2 for two 10 MB memories, benchmarks/huge_namespace_cost.py); it must decide exactly as
building it would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from curation_pipeline.core.steps.consolidate import new_sentences, offline_merge
from curation_pipeline.core.text import append_sentence, strip_merge_markers


def _built_one_by_one(keeper: str, absorbed: str, max_chars: int) -> tuple[str, int, int]:
    merged, added, omitted = strip_merge_markers(keeper), 0, 0
    for sentence in new_sentences(merged, absorbed):
        candidate = append_sentence(merged, sentence)
        if len(candidate) <= max_chars:
            merged, added = candidate, added + 1
        else:
            omitted += 1
    return merged, added, omitted


_piece = st.sampled_from(["Dana pays by wire.", "Sam left", " ", "\n", "  ", "Invoice 7 is due!", "x", "?",
                          "The pilot starts Monday.", "[merged: Old note.]", "Tabs\tend\t"])
_text = st.lists(_piece, max_size=12).map("".join)


@settings(max_examples=500, deadline=None)
@given(keeper=_text, absorbed=_text, max_chars=st.integers(0, 120))
def test_what_fits_is_decided_as_if_every_candidate_were_built(keeper, absorbed, max_chars):
    result = offline_merge(keeper, absorbed, max_chars)
    assert (result.text, result.added_sentences, result.omitted_sentences) == _built_one_by_one(keeper, absorbed, max_chars)

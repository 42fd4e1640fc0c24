"""The history and changes renderings show a rewrite whole: the sentences added and dropped,
the full texts, table cells that cannot break the markdown table."""

from __future__ import annotations

import re

from curation_pipeline.core.render.changes import full_cell, step_markdown
from curation_pipeline.core.render.history import describe_change, format_search, sentence_diff
from curation_pipeline.service.steps import consolidate

LONG = "The customer prefers email over phone calls for every billing question they raise. " * 4


def test_sentence_diff_names_added_and_dropped_sentences_whole():
    added, dropped = sentence_diff("Likes tea. Lives in Oslo.", "likes tea! Moved to Bergen in May.")
    assert added == ["Moved to Bergen in May."]
    assert dropped == ["Lives in Oslo."]


def test_a_rewrite_shows_the_added_sentence_and_the_new_text_uncut():
    new = LONG.strip() + " Refunds go to the original card."
    lines = describe_change({"pointer_summary": LONG.strip()}, {"pointer_summary": new})
    assert "      + Refunds go to the original card." in lines
    assert f"      now: {new}" in lines and not any("…" in line for line in lines)


def test_full_cell_escapes_pipes_and_line_breaks():
    assert full_cell("a | b\nc") == "a \\| b<br>c"


def test_merge_row_shows_the_keepers_old_text_the_absorbed_text_and_the_merge():
    reason = {"keeper_id": "k1", "absorbed_id": "a1", "similarity": 0.93}
    changes = [
        {"node_id": "k1", "step": "consolidate_duplicates", "reason": reason,
         "before": {"pointer_summary": LONG}, "after": {"pointer_summary": LONG + "Also | pipes."}},
        {"node_id": "a1", "step": "consolidate_duplicates", "reason": reason,
         "before": {"pointer_summary": "Also | pipes."}, "after": {"pointer_summary": "Also | pipes.", "merged_into": "k1"}},
    ]
    table = step_markdown(consolidate.SPEC, changes)
    [row] = [line for line in table.splitlines() if line.startswith("| merged into")]
    assert f"keeper was: {LONG}" in row and "absorbed: Also \\| pipes." in row
    assert f"merged: {LONG}Also \\| pipes." in row
    assert "`curation-pipeline history k1`" in row
    assert len(re.findall(r"(?<!\\)\|", row)) == 7  # six cells: no stray pipe split the row


def test_search_lists_ids_status_and_namespace():
    out = format_search("tea", [{"id": "n1", "status": "merged", "tenant_id": "acme",
                                 "namespace": "support", "text": "Likes tea."}])
    assert "n1  merged      acme:support  Likes tea." in out
    assert format_search("tea", []) == "no memory node's text contains 'tea'"

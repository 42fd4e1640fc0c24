"""The history and changes renderings show a rewrite whole: the sentences added and dropped,
and the full texts, each in a cell of its own."""

from __future__ import annotations

from curation_pipeline.core.render.changes import MAX_ROWS, NOT_REWRITTEN, UNCHANGED, step_tables
from curation_pipeline.core.render.history import describe_change, format_search, sentence_diff
from curation_pipeline.service.steps import consolidate, stale_confidence, summarize

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


def test_merge_row_shows_the_keepers_old_text_the_absorbed_text_and_the_merge():
    reason = {"keeper_id": "k1", "absorbed_id": "a1", "similarity": 0.93}
    changes = [
        {"node_id": "k1", "step": "consolidate_duplicates", "reason": reason,
         "before": {"pointer_summary": LONG}, "after": {"pointer_summary": LONG + "Also | pipes."}},
        {"node_id": "a1", "step": "consolidate_duplicates", "reason": reason,
         "before": {"pointer_summary": "Also | pipes."}, "after": {"pointer_summary": "Also | pipes.", "merged_into": "k1"}},
    ]
    tables = step_tables(consolidate.SPEC, changes)
    assert tables["changes"].rows == ({
        "keeper": "k1", "absorbed": "a1", "similarity": "0.9300", "keeper's text before": LONG,
        "absorbed text": "Also | pipes.", "merged text": LONG + "Also | pipes.",
        "whole history": "curation-pipeline history k1",
    },)
    assert tables["supersessions"].rows == ()
    assert [name for name, _, _ in tables["changes"].columns] == list(tables["changes"].rows[0])


def test_a_supersession_row_shows_both_texts_and_what_changed():
    reason = {"superseded_by": "new1", "similarity": 0.81, "changes": [{"changed": ["number '3' -> '5'"]}]}
    changes = [
        {"node_id": "old1", "step": "consolidate_duplicates", "reason": reason,
         "before": {"pointer_summary": "Ships in 3 days."},
         "after": {"pointer_summary": "Ships in 3 days.", "superseded_by": "new1"}},
        {"node_id": "new1", "step": "consolidate_duplicates", "reason": {},
         "before": {"pointer_summary": "Ships in 5 days.", "confidence": "default"},
         "after": {"pointer_summary": "Ships in 5 days.", "confidence": "verified"}},
    ]
    [row] = step_tables(consolidate.SPEC, changes)["supersessions"].rows
    assert row == {"superseded": "old1", "current": "new1", "similarity": "0.8100",
                   "what changed": "number '3' -> '5'", "superseded text": "Ships in 3 days.",
                   "current text": "Ships in 5 days.", "whole history": "curation-pipeline history old1"}


def test_a_text_change_is_one_row_per_column_with_both_values_whole():
    changes = [{"node_id": "n1", "step": "summarize_verbose", "reason": {},
                "before": {"pointer_summary": LONG, "embedding": "present"},
                "after": {"pointer_summary": "Prefers email.", "embedding": None}}]
    table = step_tables(summarize.SPEC, changes)["changes"]
    assert table.rows == (
        {"node": "n1", "column": "pointer_summary", "before": LONG, "after": "Prefers email.",
         "whole history": "curation-pipeline history n1"},
        {"node": "n1", "column": "embedding", "before": "present", "after": "∅",
         "whole history": "curation-pipeline history n1"},
    )


def test_the_ui_shows_the_first_rows_and_counts_the_rest():
    changes = [{"node_id": f"n{i}", "step": "mark_stale_confidence", "reason": {},
                "before": {"confidence": "default"}, "after": {"confidence": "stale"}} for i in range(MAX_ROWS + 3)]
    table = step_tables(stale_confidence.SPEC, changes)["changes"]
    assert len(table.shown) == MAX_ROWS and table.not_shown == 3


def test_search_lists_ids_status_and_namespace():
    out = format_search("tea", [{"id": "n1", "status": "merged", "tenant_id": "acme",
                                 "namespace": "support", "text": "Likes tea."}])
    assert "n1  merged      acme:support  Likes tea." in out
    assert format_search("tea", []) == "no memory node's text contains 'tea'"


def test_a_merge_that_left_the_keeper_as_it_was_says_so_rather_than_showing_blank_cells():
    reason = {"keeper_id": "k1", "absorbed_id": "a1", "similarity": 0.99}
    changes = [{"node_id": "a1", "step": "consolidate_duplicates", "reason": reason,
                "before": {"pointer_summary": "Likes tea."},
                "after": {"pointer_summary": "Likes tea.", "merged_into": "k1"}}]
    [row] = step_tables(consolidate.SPEC, changes)["changes"].rows
    assert row["keeper's text before"] == NOT_REWRITTEN and row["merged text"] == UNCHANGED
    assert row["absorbed text"] == "Likes tea."
    # A merge records the text of a keeper it leaves as it was: the table shows it like the others'.
    reason["keeper_text"] = "Likes tea, green."
    [row] = step_tables(consolidate.SPEC, changes)["changes"].rows
    assert row["keeper's text before"] == "Likes tea, green." and row["merged text"] == UNCHANGED

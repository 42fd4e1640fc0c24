"""A step's changes as the run page shows them: tables inline in the event log, every cell
whole, the rows past the limit counted (fast: builds metadata, runs nothing)."""

from __future__ import annotations

import dagster as dg

from curation_pipeline.core.render.changes import MAX_ROWS, step_tables
from curation_pipeline.defs.ops import change_metadata
from curation_pipeline.service.steps import consolidate, stale_confidence


def _stale(count: int) -> list[dict]:
    return [{"node_id": f"n{i}", "step": "mark_stale_confidence", "reason": {},
             "before": {"confidence": "default"}, "after": {"confidence": "stale"}} for i in range(count)]


def test_changes_are_an_inline_table_with_typed_described_columns():
    metadata = change_metadata(step_tables(stale_confidence.SPEC, _stale(2)))
    table = metadata["changes"]
    assert isinstance(table, dg.TableMetadataValue)
    assert [column.name for column in table.schema.columns] == ["node", "column", "before", "after", "whole history"]
    assert all(column.description for column in table.schema.columns)
    assert table.records[1].data == {"node": "n1", "column": "confidence", "before": "default", "after": "stale",
                                     "whole history": "curation-pipeline history n1"}
    assert "changes_not_shown" not in metadata


def test_past_the_limit_the_table_says_how_many_rows_it_leaves_out_and_where_they_are():
    metadata = change_metadata(step_tables(stale_confidence.SPEC, _stale(MAX_ROWS + 2)))
    assert len(metadata["changes"].records) == MAX_ROWS
    assert metadata["changes_not_shown"].value.startswith("2 more row(s)")
    assert "curation-pipeline history NODE_ID" in metadata["changes_not_shown"].value


def test_a_step_with_nothing_to_show_says_so_in_each_of_its_tables():
    metadata = change_metadata(step_tables(consolidate.SPEC, []))
    assert metadata == {"changes": dg.MetadataValue.text("no changes"),
                        "supersessions": dg.MetadataValue.text("no changes")}

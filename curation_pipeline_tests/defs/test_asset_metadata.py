"""The numbers a cycle records on its memory_namespace partition, as typed Dagster metadata
(fast: builds metadata, runs nothing)."""

from __future__ import annotations

import dagster as dg

from curation_pipeline.core.cycles import combine_cycles
from curation_pipeline.core.health import Snapshot, cycle_health
from curation_pipeline.defs.assets import cycle_metadata, health_metadata
from curation_pipeline.service.steps.registry import STEPS


def _health() -> dict:
    row = {"run_id": "run-1", "status": "success", "duration_s": 1.23456,
           "steps": {"revectorize": {"status": "succeeded", "embedded": 3}}}
    return cycle_health(Snapshot(8, 1, 0, 2, 0, 0), combine_cycles([row], STEPS), STEPS)


def test_counts_are_integers_shares_percent_and_durations_seconds():
    health = _health()
    metadata = health_metadata(health)
    assert metadata["active_nodes"] == dg.MetadataValue.int(8)
    assert metadata["re_embedded"] == dg.MetadataValue.int(3)
    assert metadata["stale_share (%)"] == dg.MetadataValue.float(25.0)
    assert "stale_share" not in metadata
    duration = metadata["duration_s"]
    assert isinstance(duration, dg.FloatMetadataValue) and duration.value == round(health["duration_s"], 2)


def test_a_rate_without_data_is_left_out_rather_than_plotted_as_zero():
    metadata = health_metadata(_health())
    assert "llm_acceptance_rate (%)" not in metadata and "llm_acceptance_rate" not in metadata


def test_the_cycle_says_its_status_and_runs():
    metadata = cycle_metadata(_health(), cycle_status="partial", run_ids=("run-1", "run-2"))
    assert metadata["cycle_status"] == dg.MetadataValue.text("partial")
    assert metadata["cycle_runs"] == dg.MetadataValue.text("run-1, run-2")

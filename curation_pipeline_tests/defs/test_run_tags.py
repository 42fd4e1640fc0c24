"""Who started a run, as the Runs list's `curation/trigger` tag says it."""

from __future__ import annotations

from curation_pipeline.defs.run_tags import TRIGGER_TAG, TRIGGERS, inferred_trigger


def test_a_run_launched_from_the_ui_or_a_backfill_gets_its_trigger():
    assert inferred_trigger({"dagster/partition": "acme:support"}) == "ui"
    assert inferred_trigger({"dagster/partition": "acme:support", "dagster/backfill": "abc"}) == "backfill"


def test_a_run_that_says_who_started_it_is_left_as_it_is():
    for trigger in TRIGGERS:
        assert inferred_trigger({TRIGGER_TAG: trigger, "dagster/backfill": "abc"}) is None

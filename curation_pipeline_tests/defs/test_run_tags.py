"""Who started a run, as the Runs list's `curation/trigger` tag says it."""

from __future__ import annotations

from curation_pipeline.defs.run_tags import RETRY_OF_TAG, TRIGGER_TAG, TRIGGERS, inferred_trigger, trigger_tags


def test_a_run_launched_from_the_ui_or_a_backfill_gets_its_trigger():
    assert inferred_trigger({"dagster/partition": "acme:support"}) == "ui"
    assert inferred_trigger({"dagster/partition": "acme:support", "dagster/backfill": "abc"}) == "backfill"


def test_a_run_that_says_who_started_it_is_left_as_it_is():
    for trigger in TRIGGERS:
        assert inferred_trigger({TRIGGER_TAG: trigger, "dagster/backfill": "abc"}) is None


def test_the_daemons_retry_is_tagged_as_one_with_its_parent_whatever_it_copied():
    # The run-retries daemon copies the failed run's tags (here the CLI's) and adds its own.
    copied = {TRIGGER_TAG: "cli", "dagster/partition": "acme:support", "dagster/retry_number": "1",
              "dagster/parent_run_id": "run-a", "dagster/root_run_id": "run-a"}
    assert trigger_tags(copied) == {TRIGGER_TAG: "retry", RETRY_OF_TAG: "run-a"}
    assert trigger_tags({**copied, TRIGGER_TAG: "retry", RETRY_OF_TAG: "run-a"}) == {}  # tagged already
    # A re-execution an operator launched from the UI is no automatic retry: its tags stay.
    assert trigger_tags({TRIGGER_TAG: "cli", "dagster/parent_run_id": "run-a"}) == {}

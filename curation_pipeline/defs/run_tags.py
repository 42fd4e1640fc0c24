"""The tags of a curation run: which namespace it curates and who started it.

The Runs list shows them, and an operator filters by them (`curation/trigger=idle`). The
schedule, the sensors and the CLI set `curation/trigger` when they launch a run; a run launched
from the UI (Materialize, the launchpad) or by a backfill gets it from its first step, and so
does the daemon's automatic retry of a run whose process died (`retry`, with `curation/retry_of`).
"""

from __future__ import annotations

from collections.abc import Mapping

TENANT_TAG = "curation/tenant"
NAMESPACE_TAG = "curation/namespace"
TRIGGER_TAG = "curation/trigger"  # who started the run: TRIGGERS
TRIGGERS = ("cli", "ui", "backfill", "schedule", "idle", "ceiling", "retry")
RETRY_OF_TAG = "curation/retry_of"  # a retry's: the failed run it re-executes
# Dagster's, on a run its run-retries daemon launched: the attempt's number and the failed run.
RETRY_NUMBER_TAG = "dagster/retry_number"
PARENT_RUN_TAG = "dagster/parent_run_id"
BACKFILL_TAG = "dagster/backfill"
REASON_TAG = "curation/reason"  # triggers.ACTIVITY, NEVER_CURATED, CEILING or "idle"
PRIORITY_TAG = "dagster/priority"  # the run queue dequeues higher numbers first


def inferred_trigger(tags: Mapping[str, str]) -> str | None:
    """The trigger of a run launched without our tag: a backfill's, or the UI's (Materialize or
    the launchpad); a retry's, whatever the tag it copied from the run it retries says. None if
    the run says already."""
    if RETRY_NUMBER_TAG in tags:
        return None if tags.get(TRIGGER_TAG) == "retry" else "retry"
    if TRIGGER_TAG in tags:
        return None
    return "backfill" if BACKFILL_TAG in tags else "ui"


def trigger_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """The tags to add to a run with `tags` so that it says who started it: {} when it says
    already. The daemon's retry of a failed run copies that run's tags (`curation/trigger=cli`,
    say): it is tagged `retry`, with the run it retries."""
    trigger = inferred_trigger(tags)
    if trigger is None:
        return {}
    if trigger == "retry":
        return {TRIGGER_TAG: "retry", RETRY_OF_TAG: tags.get(PARENT_RUN_TAG, "-")}
    return {TRIGGER_TAG: trigger}

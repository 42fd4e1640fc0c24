"""The tags of a curation run: which namespace it curates and who started it.

The Runs list shows them, and an operator filters by them (`curation/trigger=idle`). The
schedule, the sensors and the CLI set `curation/trigger` when they launch a run; a run launched
from the UI (Materialize, the launchpad) or by a backfill gets it from its first step.
"""

from __future__ import annotations

from collections.abc import Mapping

TENANT_TAG = "curation/tenant"
NAMESPACE_TAG = "curation/namespace"
TRIGGER_TAG = "curation/trigger"  # who started the run: TRIGGERS
TRIGGERS = ("cli", "ui", "backfill", "schedule", "idle", "ceiling")
BACKFILL_TAG = "dagster/backfill"
REASON_TAG = "curation/reason"  # triggers.ACTIVITY, NEVER_CURATED, CEILING or "idle"
PRIORITY_TAG = "dagster/priority"  # the run queue dequeues higher numbers first


def inferred_trigger(tags: Mapping[str, str]) -> str | None:
    """The trigger of a run launched without our tag: a backfill's, or the UI's (Materialize or
    the launchpad). None if the run says already."""
    if TRIGGER_TAG in tags:
        return None
    return "backfill" if BACKFILL_TAG in tags else "ui"

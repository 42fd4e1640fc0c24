"""Previews (dry runs) are runs of their own job, `preview_namespace`, tagged `curation/dry_run`.

A preview runs the same graph as `curate_namespace` but writes nothing (service/session.py rolls
its one transaction back). As a job of its own it stays off `curate_namespace`'s partition status
and off the `memory_namespace` asset: both show real curation only.
"""

from __future__ import annotations

import dagster as dg

PREVIEW_JOB_NAME = "preview_namespace"
DRY_RUN_TAG = "curation/dry_run"
PREVIEW_TAGS = {DRY_RUN_TAG: "true"}
PREVIEW_NOTICE = (
    "preview, nothing written: every step runs in one database transaction that is rolled back; "
    "only a curation_preview activity row is kept"
)


def is_preview(run: dg.DagsterRun) -> bool:
    return run.job_name == PREVIEW_JOB_NAME


def wants_preview(run: dg.DagsterRun) -> bool:
    """The run is tagged as a preview, whichever job it is of (a tag typed in the launchpad)."""
    return run.tags.get(DRY_RUN_TAG, "").lower() == "true"

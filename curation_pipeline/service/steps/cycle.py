"""Step 7, `log_curation_activity`: close the cycle's activity row (status and duration); only a
cycle without failed steps marks the namespace curated."""

from __future__ import annotations

from collections.abc import Mapping

from curation_pipeline.service.session import NamespaceSession
from curation_pipeline.store import activity

STEP = "log_curation_activity"


def close_cycle(session: NamespaceSession, run_info: Mapping) -> dict:
    with session.transaction() as conn:
        return activity.close_cycle(conn, session.scope(STEP), run_info)

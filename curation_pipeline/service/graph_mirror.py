"""With the Apache AGE graph backend, a step's graph changes are mirrored into AGE in the same
transaction (store/graph_age.py); with the plain tables backend this does nothing."""

from __future__ import annotations

import psycopg

from curation_pipeline.service.step_run import StepRun
from curation_pipeline.store import graph_age


def follow_in_graph_backend(conn: psycopg.Connection, run: StepRun) -> dict:
    scope = run.scope
    return graph_age.follow_step(conn, scope.run_id, scope.step, scope.tenant_id, scope.namespace,
                                 run.session.settings.graph_backend)

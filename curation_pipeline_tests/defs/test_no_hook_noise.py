"""A run's event log holds what happened, not what did not: a failed step is
recorded by the op itself, so no failure hook logs `HOOK_SKIPPED` after every step that
succeeded. That failures are still recorded, whatever failed (the step's work, its config), is
tested in test_job.py and test_semantic_curation.py."""

from __future__ import annotations

import pytest

from curation_pipeline.defs.definitions import load_defs
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.previews import PREVIEW_JOB_NAME
from curation_pipeline_tests.conftest import cycle_row, insert, node, run_cycle

pytestmark = pytest.mark.slow


def test_a_successful_run_logs_no_hook_events(db, instance):
    insert(db, node(text="Customer Dana Reyes prefers email over phone calls."),
           node(text="Customer Dana Reyes prefers email to phone calls."))
    result = run_cycle(instance)
    assert result.success
    hooks = [event.event_type_value for event in result.all_events if "HOOK" in event.event_type_value]
    assert hooks == []
    assert cycle_row(db, result.run_id)["status"] == "success"


def test_the_jobs_carry_no_failure_hook():
    defs = load_defs()
    for job in (defs.resolve_job_def(JOB_NAME), defs.resolve_job_def(PREVIEW_JOB_NAME)):
        assert not job.hook_defs, job.name
        assert all(not job.graph.node_named(name).hook_defs for name in job.graph.node_names())

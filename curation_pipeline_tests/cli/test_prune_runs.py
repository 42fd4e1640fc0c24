"""`curation-pipeline prune-runs` and the daily schedule that does the same in the daemon."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest
from dagster._core.storage.runs.schema import RunsTable

from curation_pipeline.cli.main import main
from curation_pipeline.defs.definitions import load_defs
from curation_pipeline.defs.run_retention import SCHEDULE_NAME

pytestmark = pytest.mark.slow


def _age(instance: dg.DagsterInstance, run_id: str, days: int) -> None:
    """Make a run look `days` old (Dagster stamps runs with the time they were written)."""
    with instance.run_storage.connect() as conn:
        conn.execute(RunsTable.update().where(RunsTable.c.run_id == run_id).values(
            update_timestamp=datetime.now(UTC).replace(tzinfo=None) - timedelta(days=days)))


def test_the_daily_schedule_runs_the_job_that_prunes_with_the_setting_of_the_moment(monkeypatch):
    schedule = load_defs().get_repository_def().get_schedule_def(SCHEDULE_NAME)
    assert schedule.cron_schedule == "17 3 * * *" and schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    job = load_defs().resolve_job_def(schedule.job_name)
    with dg.instance_for_test() as instance:
        old = job.execute_in_process(instance=instance).run_id
        _age(instance, old, days=40)
        monkeypatch.setenv("CURATION_RUN_RETENTION_DAYS", "0")  # off: nothing goes
        assert job.execute_in_process(instance=instance).success
        assert instance.get_run_by_id(old) is not None
        monkeypatch.setenv("CURATION_RUN_RETENTION_DAYS", "30")  # read by the run, not at import
        pruned = job.execute_in_process(instance=instance)
        assert pruned.success and instance.get_run_by_id(old) is None
        [materialized] = [e for e in pruned.all_events if e.event_type_value == "STEP_OUTPUT"]
        assert materialized.event_specific_data.metadata["deleted"].value == 1


def test_the_command_line_prunes_with_the_setting_or_its_option(dagster_home, monkeypatch, capsys):
    monkeypatch.setenv("CURATION_RUN_RETENTION_DAYS", "0")
    assert main(["prune-runs"]) == 0
    assert "retention is off" in capsys.readouterr().out
    monkeypatch.setenv("CURATION_RUN_RETENTION_DAYS", "36500")
    assert main(["prune-runs", "--dry-run"]) == 0
    assert "would delete 0 Dagster run(s) older than 36500 day(s)" in capsys.readouterr().out
    assert main(["prune-runs", "--days", "36500"]) == 0
    assert "deleted 0 Dagster run(s) older than 36500 day(s)" in capsys.readouterr().out

"""`curation-pipeline undo` as a run of the `undo_curation_run` job, so the undo appears in
Dagster's Runs list beside the runs it undoes, tagged `curation/trigger=cli`.

The run does the undo (defs/undo_job.py); this module launches it from the code location as the
UI would, waits for it, and reads back the reports its op recorded as metadata, so the command
prints what it always printed. A run that changed nothing is refused before anything is
launched: no empty undo is recorded anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg

from curation_pipeline.cli.dagster_home import prepare_dagster_home
from curation_pipeline.cli.launcher import code_location_workspace, launch_job_run
from curation_pipeline.cli.runner import FINISHED, QUIET_CONSOLE
from curation_pipeline.config.settings import Settings
from curation_pipeline.defs.run_tags import TRIGGER_TAG
from curation_pipeline.service.memory_store import store_url
from curation_pipeline.service.undo import UndoReport, namespaces_to_undo

UNDO_JOB = "undo_curation_run"
UNDO_OP = "undo_run_op"


class UndoRunFailed(RuntimeError):
    """The undo's Dagster run failed; the message names the run and its step's error."""


@dataclass(frozen=True)
class UndoOutcome:
    undo_run_id: str  # the Dagster run that did the undo (also the undo's id)
    reports: list[UndoReport]


def undo_through_dagster(settings: Settings, run_id: str, *, partition_key: str | None = None,
                         force: bool = False, timeout_s: float = 1800, poll_s: float = 0.2,
                         verbose: bool = False,
                         on_started: Callable[[str], None] = lambda undo_run_id: None) -> UndoOutcome:
    """Undo `run_id` in a run of the undo job; NothingToUndoError (before any run) if it changed
    nothing, UndoRunFailed if the undo's run failed. Unless `verbose`, the run logs only
    warnings to this terminal (as `run` does); `on_started` hears the undo run's id."""
    namespaces_to_undo(store_url(settings), run_id, partition_key=partition_key)
    config = {"run_id": run_id, "force": force, **({"namespace": partition_key} if partition_key else {})}
    prepare_dagster_home(settings)
    with dg.DagsterInstance.get() as instance:
        with code_location_workspace(instance) as workspace:
            undo_run_id = launch_job_run(instance, workspace, UNDO_JOB,
                                         run_config={"ops": {UNDO_OP: {"config": config}},
                                                     **({} if verbose else QUIET_CONSOLE)},
                                         tags={TRIGGER_TAG: "cli"})
            on_started(undo_run_id)
            status = _wait(instance, undo_run_id, timeout_s, poll_s)
        if status != dg.DagsterRunStatus.SUCCESS:
            raise UndoRunFailed(f"the undo run {undo_run_id} {status.value.lower()}: {_step_error(instance, undo_run_id)}")
        return UndoOutcome(undo_run_id, _reports(instance, undo_run_id))


def _wait(instance: dg.DagsterInstance, run_id: str, timeout_s: float, poll_s: float) -> dg.DagsterRunStatus:
    deadline = time.monotonic() + timeout_s
    while True:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.status in FINISHED:
            return run.status
        if time.monotonic() > deadline:
            raise TimeoutError(f"the undo run {run_id} did not finish within {timeout_s:.0f} s")
        time.sleep(poll_s)


def _events(instance: dg.DagsterInstance, run_id: str):
    return [record.event_log_entry.dagster_event for record in instance.get_records_for_run(run_id).records
            if record.event_log_entry.dagster_event is not None]


def _reports(instance: dg.DagsterInstance, run_id: str) -> list[UndoReport]:
    [output] = [event for event in _events(instance, run_id)
                if event.is_successful_output and event.node_name == UNDO_OP]
    return [UndoReport(**report) for report in output.event_specific_data.metadata["reports"].value]


def _step_error(instance: dg.DagsterInstance, run_id: str) -> str:
    failures = [event for event in _events(instance, run_id) if event.is_step_failure]
    if not failures:
        return "see its page in the Dagster UI"
    error = failures[0].step_failure_data.error
    cause = error.cause or error
    return f"{cause.cls_name}: {cause.message.strip()}" if cause.cls_name else cause.message.strip()

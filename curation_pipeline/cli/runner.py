"""Run the curation job for namespaces through Dagster, recorded in DAGSTER_HOME.

Used by `curation-pipeline run` and `demo`: register the namespaces as dynamic partitions,
launch one run per partition from the code location (so the UI shows them like its own runs),
keep up to `max_parallel` of them running, and collect each cycle's activity row as its run
finishes (`on_started` hears of each run launched, `on_finished` of each one finished: the
command line's progress).

Ctrl-C (SIGINT, which a terminal sends to the whole foreground process group; the code server
and its runs are in a session of their own, cli/launcher.py) stops it in order: the first one
launches nothing more and waits for the runs in flight to finish their cycle; a second one
cancels those runs (Dagster interrupts their step, whose transaction rolls back, and the cycle
row says so). Either way `RunsStopped` carries what finished and what never started.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import dagster as dg
from dagster._core.storage.tags import WILL_RETRY_TAG

from curation_pipeline.cli.dagster_home import prepare_dagster_home
from curation_pipeline.cli.launcher import PartitionRunLauncher, code_location_workspace
from curation_pipeline.config.settings import Settings
from curation_pipeline.core.partition_keys import parse_partition_key
from curation_pipeline.defs.job import JOB_NAME
from curation_pipeline.defs.partitions import register_partitions
from curation_pipeline.defs.previews import PREVIEW_JOB_NAME
from curation_pipeline.defs.run_tags import TRIGGER_TAG
from curation_pipeline.service.inspection import cycle_of_run

QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
FINISHED = frozenset({dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED})


@dataclass(frozen=True)
class CycleResult:
    partition_key: str
    run_id: str
    run_status: str
    metadata: Mapping | None
    # A run that did not succeed: what Dagster recorded as its end (its process killed, say),
    # and whether the daemon's run retries will run it again.
    failure: str | None = None
    will_retry: bool = False

    @property
    def succeeded(self) -> bool:
        return self.run_status == dg.DagsterRunStatus.SUCCESS.value


class RunsStopped(Exception):
    """The operator stopped the runs (Ctrl-C): `finished` ran (or were canceled), in the order of
    the keys; `not_started` were never launched."""

    def __init__(self, finished: list[CycleResult], not_started: list[str]) -> None:
        super().__init__(f"stopped: {len(finished)} run(s) finished, {len(not_started)} not started")
        self.finished, self.not_started = finished, not_started


@dataclass
class _StopRequests:
    """Ctrl-Cs received (counted by the signal handler, acted on by the loop)."""

    count: int = 0
    notify: Callable[[str], None] = field(default=lambda message: print(message, file=sys.stderr, flush=True))

    def __call__(self, signum, frame) -> None:
        self.count += 1


@contextmanager
def _stop_on_interrupt(requests: _StopRequests) -> Iterator[None]:
    """SIGINT counted instead of raised while runs go (a handler only the main thread may set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, requests)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_partitions(
    settings: Settings,
    keys: Sequence[str],
    *,
    run_config: Mapping | None = None,
    max_parallel: int = 4,
    verbose: bool = False,
    dry_run: bool = False,
    on_finished: Callable[[CycleResult], None] | None = None,
    on_started: Callable[[str, str], None] | None = None,
    on_ready: Callable[[], None] | None = None,
    timeout_s: float = 1800,
) -> list[CycleResult]:
    """Curate (or, with `dry_run`, preview) each partition once through Dagster and return what
    every cycle did, in the order of `keys`.

    Unless `verbose`, run processes log only warnings to this terminal; every event is still
    stored in Dagster and shown in the UI. Ctrl-C: see the module docstring (`RunsStopped`).
    """
    if not verbose:
        run_config = {**QUIET_CONSOLE, **(run_config or {})}
    keys = unique_keys(keys)
    for key in keys:
        parse_partition_key(key)  # a clear error before anything is launched
    job_name = PREVIEW_JOB_NAME if dry_run else JOB_NAME
    results: dict[str, CycleResult] = {}
    stop = _StopRequests()
    with _stop_on_interrupt(stop):
        prepare_dagster_home(settings)
        with dg.DagsterInstance.get() as instance:
            register_partitions(instance, keys)
            with code_location_workspace(instance) as workspace:
                launcher = PartitionRunLauncher(instance, workspace, run_config=run_config, job_name=job_name,
                                                tags={TRIGGER_TAG: "cli"})
                if on_ready is not None:
                    on_ready()

                def launch(key: str) -> str:
                    run_id = launcher.launch(key)
                    if on_started is not None:
                        on_started(key, run_id)
                    return run_id

                # Each run is a process: at most `max_parallel` at a time keeps a large --all
                # from forking hundreds, and the next one starts as soon as one ends.
                for key, run_id, status in _as_they_finish(instance, keys, launch, max_parallel, timeout_s, stop):
                    result = _collect(settings, key, run_id, status.value, preview=dry_run, instance=instance)
                    results[key] = result
                    if on_finished is not None:
                        on_finished(result)
    if stop.count:
        raise RunsStopped([results[key] for key in keys if key in results],
                          [key for key in keys if key not in results])
    return [results[key] for key in keys]


def require_workers(settings: Settings) -> None:
    """Runs on Celery wait for a worker: without one, say so now rather than time out later
    (a BrokerError naming the queue and the broker; nothing when runs do not go to Celery)."""
    if settings.run_launcher != "celery":
        return
    from curation_pipeline.config.runs import redacted_url
    from curation_pipeline.instance.broker import check_broker, resolve_broker_url
    from curation_pipeline.instance.celery_app import make_celery_app, workers_taking
    from curation_pipeline.instance.embedded_broker import BrokerError

    url = resolve_broker_url(settings)
    check_broker(url)
    if not workers_taking(make_celery_app(settings), settings.celery_queue):
        raise BrokerError(
            f"no Celery worker takes runs from the queue {settings.celery_queue!r} (CURATION_CELERY_QUEUE) "
            f"at {redacted_url(url)}: start one with `curation-pipeline worker`, or unset CURATION_RUN_LAUNCHER"
        )


def unique_keys(keys: Sequence[str]) -> list[str]:
    """One run per namespace, even if named twice (in their first order)."""
    return list(dict.fromkeys(keys))


def _as_they_finish(
    instance: dg.DagsterInstance, keys: Sequence[str], launch: Callable[[str], str],
    max_parallel: int, timeout_s: float, stop: _StopRequests, poll_s: float = 0.2,
) -> Iterator[tuple[str, str, dg.DagsterRunStatus]]:
    """(key, run id, final status) of each run as it finishes, launching the next key then;
    after a Ctrl-C nothing more is launched, after a second one the runs in flight are canceled.

    Launches run in threads beside the polling: a launch waits on the code server (seconds on
    a busy machine, as it starts the run's process), and neither the next launch nor the news
    of a run that finished meanwhile should wait behind it."""
    waiting = list(keys)
    launching: dict[Future, str] = {}  # launches under way -> key
    running: dict[str, str] = {}  # run id -> key
    deadline = time.monotonic() + timeout_s
    acted_on = 0  # Ctrl-Cs already acted on
    with ThreadPoolExecutor(max_workers=max_parallel, thread_name_prefix="launch") as pool:
        while waiting or launching or running:
            if stop.count > acted_on:
                acted_on = _act_on_stop(instance, stop, acted_on, waiting, running)
            while waiting and len(running) + len(launching) < max_parallel and not stop.count:
                key = waiting.pop(0)
                launching[pool.submit(launch, key)] = key
            for future in [future for future in launching if future.done()]:
                key = launching.pop(future)
                run_id = future.result()  # a launch that failed raises here, as it did inline
                running[run_id] = key
                if stop.count >= 2:  # launched after the operator asked to cancel the runs in flight
                    instance.run_launcher.terminate(run_id)
            finished = [run for run in instance.get_runs(dg.RunsFilter(run_ids=list(running)))
                        if run.status in FINISHED] if running else []
            for run in finished:
                yield running.pop(run.run_id), run.run_id, run.status
            if finished or launching:
                deadline = time.monotonic() + timeout_s
            elif time.monotonic() > deadline:
                raise TimeoutError(f"no run finished for {timeout_s:.0f} s: {sorted(running.values())}")
            if not finished:
                time.sleep(poll_s)


def _act_on_stop(instance: dg.DagsterInstance, stop: _StopRequests, acted_on: int,
                 waiting: list[str], running: dict[str, str]) -> int:
    if acted_on == 0:
        not_started = len(waiting)
        waiting.clear()
        stop.notify(
            f"stopping: {not_started} namespace(s) not started; waiting for the {len(running)} run(s) "
            "in flight to finish their cycle (Ctrl-C again cancels them)"
        )
    if stop.count >= 2 and running:
        stop.notify(f"canceling the {len(running)} run(s) in flight: {', '.join(sorted(running.values()))}")
        for run_id in running:
            instance.run_launcher.terminate(run_id)
    return stop.count


def _collect(settings: Settings, key: str, run_id: str, run_status: str, *, preview: bool,
             instance: dg.DagsterInstance | None = None) -> CycleResult:
    failure, will_retry = (run_end(instance, run_id) if instance is not None
                           and run_status != dg.DagsterRunStatus.SUCCESS.value else (None, False))
    return CycleResult(key, run_id, run_status, cycle_of_run(settings, key, run_id, preview=preview),
                       failure, will_retry)


def run_end(instance: dg.DagsterInstance, run_id: str) -> tuple[str | None, bool]:
    """(what Dagster said when the run failed or was canceled, whether it will be retried)."""
    ends = instance.get_records_for_run(run_id, of_type={
        dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.RUN_CANCELED}).records
    message = ends[-1].event_log_entry.message if ends else None
    run = instance.get_run_by_id(run_id)
    return message, run is not None and run.tags.get(WILL_RETRY_TAG) == "true"

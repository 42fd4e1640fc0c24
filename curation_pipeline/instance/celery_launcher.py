"""dagster-celery's CeleryRunLauncher, configured from the settings, with what a fleet needs on top.

- **A broker that is down** when the daemon dequeues a run: the launcher reports it as an
  unreachable code location, which the run queue answers by putting the run back in the queue
  and pausing that location's dequeues (`max_user_code_failure_retries`,
  `user_code_failure_retry_delay` in dagster.yaml) instead of failing it. Nothing was sent, so
  nothing runs twice.
- **A worker that died** (kill -9, out of memory, a lost machine): dagster-celery reads only the
  task's state, which stays STARTED for ever when no process is left to change it, so run
  monitoring would wait for `max_runtime_seconds`. Here a STARTED (or unknown) task must also be
  among the tasks the live workers say they are running; missing from that list at
  `MISSES_TO_FAIL` checks in a row (one per `poll_interval_seconds`), the worker counts as dead
  and monitoring fails the run.
- A run launched before the instance used Celery (no task id) is not checked by Celery: the
  timeouts still apply to it.
"""

from __future__ import annotations

import time
import warnings

from dagster._core.errors import DagsterUserCodeUnreachableError
from dagster._core.launcher import CheckRunHealthResult, LaunchRunContext, ResumeRunContext, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun
from dagster_celery.launcher import CeleryRunLauncher
from dagster_celery.tags import DAGSTER_CELERY_TASK_ID_TAG

from curation_pipeline.config.runs import RunSettings, redacted_url
from curation_pipeline.instance.broker import BROKER_VARIABLE, resolve_broker_url
from curation_pipeline.instance.celery_app import celery_config, declare_queues

# dagster-celery registers its run task again at every launch; the first registration is the
# one used, and the same callable each time: nothing to warn about in the daemon's log.
warnings.filterwarnings("ignore", message=r"Task name '(execute|resume)_job' is already registered")

# A run's task missing from every live worker's list this many checks in a row: its worker is
# dead. Two, so that one slow answer (a loaded machine) fails nothing.
MISSES_TO_FAIL = 2
# How long the workers have to say which tasks they run.
INSPECT_TIMEOUT_S = 2.0
# One answer serves every run checked within this long (monitoring checks them one by one).
ACTIVE_TASKS_TTL_S = 5.0


class BrokerUnreachableError(DagsterUserCodeUnreachableError):
    """The broker did not take the run; the run queue tries it again later."""


class CurationCeleryRunLauncher(CeleryRunLauncher):
    def __init__(self, settings: RunSettings, inst_data=None) -> None:
        self._url = resolve_broker_url(settings)
        super().__init__(
            default_queue=settings.celery_queue, broker=self._url, backend=self._url, include=[],
            config_source=celery_config(settings.celery_queue), inst_data=inst_data,
        )
        declare_queues(self.celery, [settings.celery_queue])
        self._misses: dict[str, int] = {}
        self._active: tuple[float, set[str] | None] = (0.0, None)

    def launch_run(self, context: LaunchRunContext) -> None:
        with self._broker_errors("send the run"):
            super().launch_run(context)

    def resume_run(self, context: ResumeRunContext) -> None:
        with self._broker_errors("resume the run"):
            super().resume_run(context)

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        if run is None or DAGSTER_CELERY_TASK_ID_TAG not in run.tags:
            return False  # never sent to a worker: nothing to stop
        return super().terminate(run_id)

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        task_id = run.tags.get(DAGSTER_CELERY_TASK_ID_TAG)
        if task_id is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING, "not launched through Celery: only its timeouts apply")
        state = self.celery.AsyncResult(task_id).state  # a broker error propagates: nothing decided
        if state == "SUCCESS":
            self._misses.pop(run.run_id, None)
            return CheckRunHealthResult(WorkerStatus.SUCCESS)
        if state in ("FAILURE", "REVOKED"):
            self._misses.pop(run.run_id, None)
            return CheckRunHealthResult(WorkerStatus.FAILED, f"its Celery task {task_id} ended {state}")
        if task_id in self._active_task_ids():
            self._misses.pop(run.run_id, None)
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        misses = self._misses[run.run_id] = self._misses.get(run.run_id, 0) + 1
        if misses < MISSES_TO_FAIL:
            return CheckRunHealthResult(WorkerStatus.RUNNING, f"no live worker reports task {task_id}; checking again")
        self._misses.pop(run.run_id, None)
        return CheckRunHealthResult(
            WorkerStatus.FAILED,
            f"no live Celery worker is running its task {task_id} (state {state}) at "
            f"{MISSES_TO_FAIL} checks in a row: its worker died",
        )

    def get_run_worker_debug_info(self, run: DagsterRun, include_container_logs: bool | None = True) -> str | None:
        if DAGSTER_CELERY_TASK_ID_TAG not in run.tags:
            return None
        return super().get_run_worker_debug_info(run, include_container_logs)

    def _active_task_ids(self) -> set[str]:
        """Every task id the live workers are running now (one broadcast per few seconds)."""
        checked_at, ids = self._active
        if ids is None or time.monotonic() - checked_at > ACTIVE_TASKS_TTL_S:
            replies = self.celery.control.inspect(timeout=INSPECT_TIMEOUT_S).active() or {}
            ids = {task["id"] for tasks in replies.values() for task in tasks}
            self._active = (time.monotonic(), ids)
        return ids

    def _broker_errors(self, doing: str):
        return _BrokerErrors(doing, self._url, self.celery)


class _BrokerErrors:
    """Turns the broker's connection errors into BrokerUnreachableError (password hidden)."""

    def __init__(self, doing: str, url: str, app) -> None:
        self._doing, self._url, self._app = doing, url, app

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        from kombu.exceptions import OperationalError

        unreachable = (OperationalError, *self._app.connection_for_write().connection_errors)
        if error is None or not any(isinstance(cause, unreachable) for cause in _causes(error)):
            return False
        raise BrokerUnreachableError(
            f"could not {self._doing}: the broker at {BROKER_VARIABLE}={redacted_url(self._url)} "
            f"is unreachable ({type(error).__name__}: {str(error).replace(self._url, redacted_url(self._url))})"
        ) from None


def _causes(error: BaseException):
    """The error and what caused it: Celery's result backend wraps a lost connection in a
    RuntimeError ("retry limit exceeded") raised from the connection error."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__

"""The Celery app that carries runs: one configuration for the run launcher (which sends a run)
and the worker (which executes it), so both agree on the broker, the result backend and the
queue.

dagster-celery's task executes a whole run in the worker's process (its pool child): the code
location is imported once per process and every later run starts warm. The result backend is
the broker's own server; run monitoring reads each run's task state there
(celery_launcher.py).
"""

from __future__ import annotations

from typing import Any

from curation_pipeline.config.runs import RunSettings
from curation_pipeline.instance.broker import resolve_broker_url

# How long a broker or result-backend call may take before it fails: the daemon's dequeue and
# monitoring loops call the broker, and a broker that went away must not stall them for minutes.
BROKER_TIMEOUT_S = 5.0


def celery_config(queue: str) -> dict[str, Any]:
    """Celery settings beyond dagster-celery's defaults, shared by the launcher and the workers."""
    return {
        "task_default_queue": queue,
        # An idle worker takes the next run; a busy one holds none back for later (without this,
        # a worker reserves one more run than it can execute, which then waits for it while
        # another worker is idle). Redis brokers only, which is what this project uses.
        "worker_prefetch_multiplier": 1,
        "worker_disable_prefetch": True,
        # A run's message leaves the queue when a worker starts it. A worker that dies mid-run
        # does not get its run redelivered to another worker: run monitoring fails it (and the
        # daemon's run retry or the next tick curates the namespace again).
        "task_acks_late": False,
        "task_track_started": True,
        # A worker that starts before the broker, or loses it, keeps retrying instead of exiting.
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,
        "broker_connection_timeout": BROKER_TIMEOUT_S,
        # Sending a run: dagster-celery's few quick retries, then the launcher reports the broker
        # as unreachable and the run goes back to the run queue (celery_launcher.py).
        "broker_transport_options": {
            "max_retries": 3, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5,
        },
        "redis_socket_connect_timeout": BROKER_TIMEOUT_S,
        "redis_socket_timeout": BROKER_TIMEOUT_S,
        "result_backend_always_retry": False,
        # The result backend's own retries (Celery's default: 20, a second apart) would hold a
        # launch or a monitoring check for 20 s per run while the broker is down.
        "result_backend_transport_options": {
            "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1},
        },
        # Results only serve run monitoring while a run is in flight; Dagster keeps the record.
        "result_expires": 24 * 3600,
        # A run's events go to Dagster's storage, not Celery's: no task events on the broker.
        "worker_send_task_events": False,
        "worker_hijack_root_logger": False,
    }


def make_celery_app(settings: RunSettings, queue: str | None = None):
    """The app, with dagster-celery's run tasks registered, on the configured broker."""
    from dagster_celery.make_app import make_app
    from dagster_celery.tasks import create_execute_job_task, create_resume_job_task

    url = resolve_broker_url(settings)
    queue = queue or settings.celery_queue
    app = make_app(app_args={
        "broker": url, "backend": url, "include": [], "config_source": celery_config(queue),
        "task_default_queue": queue,
    })
    declare_queues(app, [queue])
    create_execute_job_task(app)
    create_resume_job_task(app)
    return app


def declare_queues(app, names: list[str]) -> None:
    """Declare the queues by name as dagster-celery declares its `dagster` queue (which it
    declares alone): the launcher's routing keys are `QUEUE.execute_job` and `QUEUE.resume_job`,
    and run priorities apply (`dagster-celery/run_priority`)."""
    from kombu import Queue

    app.conf.task_queues = [
        Queue(name, routing_key=f"{name}.#", queue_arguments={"x-max-priority": 10})
        for name in dict.fromkeys(names)
    ]


def workers_taking(app, queue: str, timeout_s: float = 2.0) -> list[str]:
    """The names of the live workers that take runs from `queue`."""
    replies = app.control.inspect(timeout=timeout_s).active_queues() or {}
    return sorted(name for name, queues in replies.items() if any(q["name"] == queue for q in queues))

"""`curation-pipeline worker`: a Celery worker that executes curation runs (CURATION_RUN_LAUNCHER=celery).

It prepares this machine's DAGSTER_HOME (its own CURATION_HOME; the storage named by
CURATION_DAGSTER_STORAGE_URL when set, else the memory store's server), checks that the
broker answers, imports the code location once and then forks its pool: every run executes in
an already warm process, `concurrency` of them at a time, one run per process.

Between runs a process keeps only what is loaded on purpose: the imported code, and a
sentence-transformers model once loaded (seconds to load, read-only). Each run builds its own
resources (the namespace session and its lease, the LLM client with its budget and breaker,
the embedder resource) and reads its settings from this worker's environment and the run's
own launchpad config; nothing a run sets survives it.

SIGTERM or Ctrl-C: a warm shutdown (the runs in progress finish, no new one starts); a second
Ctrl-C, or SIGQUIT, stops at once (the runs in progress are then failed by run monitoring).
"""

from __future__ import annotations

import os
import socket

from curation_pipeline.cli.dagster_home import STORAGE_URL_VARIABLE, prepare_dagster_home
from curation_pipeline.config.runs import redacted_url
from curation_pipeline.config.settings import Settings
from curation_pipeline.instance.broker import check_broker, resolve_broker_url
from curation_pipeline.service.memory_store import shown_url

# A pool process that grew past this (a huge namespace's vectors) is replaced once its run ends:
# the next run starts in a fresh process instead of inheriting a bloated one.
MAX_MEMORY_PER_PROCESS_KIB = 2 * 1024 * 1024


def worker_name() -> str:
    """Unique per process, so that two workers on one machine never answer for each other."""
    return f"curation-{os.getpid()}@{socket.gethostname()}"


def serve_worker(settings: Settings, *, concurrency: int | None = None, queues: list[str] | None = None) -> int:
    from curation_pipeline.instance.celery_app import declare_queues, make_celery_app

    # The broker first: a worker that cannot reach it says so before it touches anything.
    url = resolve_broker_url(settings)
    check_broker(url)
    prepare_dagster_home(settings, keep_storage_url=True)
    queues = list(dict.fromkeys(queues or [settings.celery_queue]))
    concurrency = concurrency or settings.worker_concurrency
    app = make_celery_app(settings, queue=queues[0])
    declare_queues(app, queues)
    # Loaded before the pool forks, so that no run pays for the imports of the code location.
    import curation_pipeline.defs.definitions  # noqa: F401

    name = worker_name()
    print(
        f"worker {name}: {concurrency} run(s) at a time from queue(s) {', '.join(queues)}; "
        f"broker {redacted_url(url)}; memory store {shown_url(settings)}; "
        f"Dagster storage {redacted_url(os.environ[STORAGE_URL_VARIABLE])}",
        flush=True,
    )
    app.worker_main([
        "worker", f"--concurrency={concurrency}", "--pool=prefork", f"--queues={','.join(queues)}",
        f"--hostname={name}", "--loglevel=INFO",
        # Workers need not know each other (gossip, mingle) nor send events nobody reads; the
        # remote control run monitoring uses (which tasks are active) stays on.
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        f"--max-memory-per-child={MAX_MEMORY_PER_PROCESS_KIB}",
    ])
    return 0

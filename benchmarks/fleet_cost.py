"""A fleet: 1,000 namespaces of 200 nodes, one node changed in 10% of them, curated by the real
Dagster daemon (the schedule's tick, the run queue, 4 runs at a time).

    python benchmarks/fleet_cost.py                  # 1,000 namespaces (~5 minutes)
    python benchmarks/fleet_cost.py --quick          # 200 namespaces
    python benchmarks/fleet_cost.py --dequeue-interval 5   # with Dagster's default run queue interval
    python benchmarks/fleet_cost.py --launcher celery --workers 2   # both launchers, side by side

With `--launcher celery` the same fleet is curated twice in one run: first by the default
launcher (a process per run), then, after the same kind of change in the same namespaces, by
`--workers` Celery workers (`curation-pipeline worker`, on the embedded broker) beside the
daemon, and the two are printed side by side.

Seeds a fresh embedded Postgres; every namespace was curated half an hour ago and its last passes
were complete (their state copied from one namespace's real cycle); then one node changes (a new
vector) and an interaction is recorded in 10% of them. The daemon runs with the package's
dagster.yaml (QueuedRunCoordinator, 4 concurrent runs, a dequeue every second) and
CURATOR_INTERVAL_SECS=60, so the schedule ticks at the next minute. Prints namespaces curated
per minute and where a run's time goes, from Dagster's own records: the tick, the queue, the run
process's start, the steps.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib import resources

import numpy as np
import scale_data

NODES = 200
TIMEOUT_S = 1800


def seed_fleet(conn, names: list[str], rng) -> None:
    for namespace in names:
        scale_data.seed_namespace(conn, "fleet", namespace, NODES, vectors=lambda k: scale_data.unit_vectors(rng, k))
    scale_data.analyze(conn)


def start_daemon(home, log_path, env) -> subprocess.Popen:
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "dagster._daemon", "run", "-w", str(home / "workspace.yaml")],
            cwd=home, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )


def start_worker(home, log_path, env, concurrency: int) -> subprocess.Popen:
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "curation_pipeline.cli.main", "worker", "--concurrency", str(concurrency)],
            cwd=home, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )


def stop_group(process: subprocess.Popen) -> None:
    """Stop the daemon and every process it started (its own process group)."""
    for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            process.poll()  # reaps the leader: a zombie would still count as a member of its group
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)


def run_timeline(instance, run_id: str) -> dict:
    """Timestamps of a run's lifecycle events (Dagster's event log)."""
    import dagster as dg

    kinds = dg.DagsterEventType
    marks: dict = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None:
            continue
        kind = event.event_type
        if kind == kinds.RUN_ENQUEUED:
            marks["enqueued"] = entry.timestamp
        elif kind == kinds.RUN_STARTING:  # dequeued, and handed to the launcher
            marks["starting"] = entry.timestamp
        elif kind == kinds.ENGINE_EVENT and entry.message.startswith("Started process for run"):
            marks.setdefault("process", entry.timestamp)  # the run's process has it (new, or a warm worker's)
        elif kind == kinds.RUN_START:
            marks["started"] = entry.timestamp
        elif kind == kinds.STEP_START:
            marks.setdefault("first_step", entry.timestamp)
        elif kind in (kinds.STEP_SUCCESS, kinds.STEP_FAILURE):
            marks["last_step"] = entry.timestamp
        elif kind in (kinds.RUN_SUCCESS, kinds.RUN_FAILURE):
            marks["ended"] = entry.timestamp
            marks["success"] = kind == kinds.RUN_SUCCESS
    return marks


def set_queue(home, *, dequeue_interval: int | None, max_concurrent_runs: int | None) -> str:
    """This DAGSTER_HOME's dagster.yaml with other queue values (the package's file is left
    alone); returns the dequeue interval in force."""
    path = home / "dagster.yaml"
    config = path.read_text()
    if dequeue_interval is not None:
        config = re.sub(r"dequeue_interval_seconds: \d+", f"dequeue_interval_seconds: {dequeue_interval}", config)
    if max_concurrent_runs is not None:
        config = re.sub(r"max_concurrent_runs: \d+", f"max_concurrent_runs: {max_concurrent_runs}", config)
    path.write_text(config.replace("# Managed by curation-pipeline", "# Edited"))
    found = re.search(r"dequeue_interval_seconds: (\d+)", config)
    return found.group(1) if found else "5 (Dagster's default)"


def change_fleet(conn, changed: list[str], rng) -> None:
    """One node of each changed namespace gets a new vector, and the namespace an interaction."""
    from pgvector import Vector

    for name in changed:
        conn.execute(
            "UPDATE memory_nodes SET embedding = %s WHERE id = (SELECT id FROM memory_nodes"
            " WHERE tenant_id = 'fleet' AND namespace = %s ORDER BY id LIMIT 1)",
            (Vector(scale_data.unit_vectors(rng, 1)[0]), name),
        )
    conn.execute("UPDATE namespace_activity SET last_interaction_at = now()"
                 " WHERE tenant_id = 'fleet' AND namespace = ANY(%s)", (changed,))
    conn.commit()


def wait_for_workers(count: int, timeout_s: float = 120) -> None:
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.instance.celery_app import make_celery_app

    app = make_celery_app(load_settings())
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if len([name for reply in app.control.ping(timeout=1.0) for name in reply]) >= count:
            return
    raise SystemExit(f"{count} worker(s) did not answer within {timeout_s:.0f} s")


def curate(instance, home, env, expected: int, began: float, workers: int, concurrency: int) -> dict:
    """Start the daemon (and the workers), wait for the schedule's runs, stop everything, and
    measure the runs created after `began`."""
    import dagster as dg

    from curation_pipeline.defs.job import JOB_NAME

    logs = tempfile.mkdtemp(prefix="fleet-logs-")
    processes = [start_worker(home, os.path.join(logs, f"worker-{i}.log"), env, concurrency) for i in range(workers)]
    if workers:
        wait_for_workers(workers)
    processes.append(start_daemon(home, os.path.join(logs, "daemon.log"), env))
    started = time.time()
    after = dg.RunsFilter(job_name=JOB_NAME, tags={"curation/trigger": "schedule"},
                          created_after=datetime.fromtimestamp(began, UTC))
    try:
        runs: list = []
        while time.time() - started < TIMEOUT_S:
            runs = [run for run in instance.get_runs(after) if run.is_finished]
            if len(runs) >= expected:
                break
            time.sleep(2)
    finally:
        for process in reversed(processes):
            stop_group(process)
    if not runs:
        raise SystemExit(f"no run finished within {TIMEOUT_S} s; logs: {logs}")
    [state] = [s for s in instance.all_instigator_state() if s.instigator_name == "curation_schedule"]
    measured = {run.run_id for run in runs}
    tick = min((t for t in instance.get_ticks(state.instigator_origin_id, state.selector_id)
                if measured & set(t.run_ids)), key=lambda t: t.timestamp)
    timelines = [run_timeline(instance, run.run_id) for run in runs]
    stats = [instance.get_run_step_stats(run.run_id) for run in runs]
    last_ended = max(t["ended"] for t in timelines)
    span = last_ended - tick.timestamp

    def median(name_from, name_to):
        return statistics.median(t[name_to] - t[name_from] for t in timelines)

    return {
        "tick": f"{tick.end_timestamp - tick.timestamp:.1f}",
        "requests": len(tick.run_ids),
        "first_queued": f"{min(t['enqueued'] for t in timelines) - tick.timestamp:.1f}",
        "span": f"{span:.1f}",
        "succeeded": f"{sum(1 for t in timelines if t.get('success'))}/{len(timelines)}",
        "queue": f"{median('enqueued', 'starting'):.2f}",
        "to_process": f"{median('starting', 'process'):.2f}",
        "process_to_start": f"{median('process', 'started'):.2f}",
        "launch_to_start": f"{median('starting', 'started'):.2f}",
        "start_to_step": f"{median('started', 'first_step'):.2f}",
        "taken_to_step": f"{median('process', 'first_step'):.2f}",
        "launch_to_step": f"{median('starting', 'first_step'):.2f}",
        "steps": f"{median('first_step', 'last_step'):.2f}",
        "own": f"{statistics.median(sum(s.end_time - s.start_time for s in steps) for steps in stats):.2f}",
        "to_end": f"{median('last_step', 'ended'):.2f}",
        "per_minute": len(timelines) / span * 60,
    }


ROWS = [
    ("tick", "schedule tick: its time to the tick's end ({requests} run requests)"),
    ("first_queued", "tick's time to the first run queued"),
    ("span", "tick to the last run finished ({succeeded} succeeded)"),
    ("queue", "per run, median: waiting in the run queue (for a slot and a dequeue)"),
    ("launch_to_start", "per run, median: launched to run started"),
    ("to_process", "  of which: launched to its process taking it (default: a new process, imports; celery: the broker, a free worker)"),
    ("process_to_start", "  of which: process taking it to run started (code location, run record)"),
    ("start_to_step", "per run, median: run started to its first step (resources: session, lease)"),
    ("launch_to_step", "per run, median: launched to its first step"),
    ("taken_to_step", "per run, median: taken by its process to its first step (celery: the warm worker's own cost)"),
    ("steps", "per run, median: first step start to last step end"),
    ("own", "per run, median: the steps' own time (sum of step durations)"),
    ("to_end", "per run, median: last step to run success"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 namespaces")
    parser.add_argument("--namespaces", type=int)
    parser.add_argument("--changed-percent", type=float, default=10.0)
    parser.add_argument("--dequeue-interval", type=int,
                        help="the run queue's dequeue_interval_seconds (default: the package's dagster.yaml)")
    parser.add_argument("--launcher", choices=["default", "celery"], default="default",
                        help="celery: curate the fleet with the default launcher, then on Celery workers")
    parser.add_argument("--workers", type=int, default=2, help="Celery workers (with --launcher celery)")
    parser.add_argument("--concurrency", type=int, default=1, help="runs per Celery worker at once")
    parser.add_argument("--celery-max-concurrent-runs", type=int,
                        help="the run queue's global cap for the Celery pass (default: the package's dagster.yaml)")
    args = parser.parse_args()
    total = args.namespaces or (200 if args.quick else 1_000)
    count = max(1, round(total * args.changed_percent / 100))

    env = {"CURATOR_INTERVAL_SECS": "60", "IDLE_THRESHOLD_SECS": "86400"}
    os.environ.update(env)
    url = scale_data.fresh_store()
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.core.partition_keys import partition_key
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.job import JOB_NAME
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
    from curation_pipeline.store.database import open_connection
    defs = load_defs()

    home = prepare_dagster_home(load_settings())
    interval = set_queue(home, dequeue_interval=args.dequeue_interval, max_concurrent_runs=None)
    with resources.as_file(resources.files("curation_pipeline") / "instance" / "workspace.yaml") as source:
        shutil.copyfile(source, home / "workspace.yaml")
    rng = np.random.default_rng(23)
    names = [f"agent-{index:04d}" for index in range(total)]
    changed = names[:: total // count][:count]
    print(f"# fleet ({os.cpu_count()} cores): {total:,} namespaces of {NODES} nodes, one node changed in {len(changed)}")
    began = time.perf_counter()
    results = {}
    with open_connection(url) as conn, dg.DagsterInstance.get() as instance:
        seed_fleet(conn, names, rng)
        keys = [partition_key("fleet", name) for name in names]
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, keys)
        # One namespace's real cycle: the pass state every namespace's complete passes leave.
        job = defs.resolve_job_def(JOB_NAME)
        assert job.execute_in_process(partition_key=keys[0], instance=instance, run_config=scale_data.QUIET).success
        for name in changed:
            if name != names[0]:
                scale_data.copy_pass_state(conn, "fleet", names[0], name)
            scale_data.mark_graph_synced(conn, "fleet", name)
        conn.execute("UPDATE namespace_activity SET last_curated_at = now() - interval '30 minutes',"
                     " last_interaction_at = now() - interval '1 hour' WHERE tenant_id = 'fleet'")
        conn.commit()
        print(f"seeded in {time.perf_counter() - began:.0f} s")

        change_fleet(conn, changed, rng)
        results["default"] = curate(instance, home, {**env, "CURATION_RUN_LAUNCHER": "default"}, len(changed),
                                    time.time(), workers=0, concurrency=0)
        print(f"default launcher: {results['default']['per_minute']:.1f} namespaces per minute", flush=True)
        if args.launcher == "celery":
            set_queue(home, dequeue_interval=None, max_concurrent_runs=args.celery_max_concurrent_runs)
            change_fleet(conn, changed, rng)  # the same kind of work again, in the same namespaces
            results["celery"] = curate(instance, home, {**env, "CURATION_RUN_LAUNCHER": "celery"}, len(changed),
                                       time.time(), workers=args.workers, concurrency=args.concurrency)
            print(f"celery: {results['celery']['per_minute']:.1f} namespaces per minute", flush=True)

    columns = {"default": "default launcher (a process per run)"}
    if "celery" in results:
        columns["celery"] = f"celery, {args.workers} worker(s) x {args.concurrency}"
    print(f"\n## Fleet: {total:,} namespaces of {NODES} nodes, {len(changed)} with one changed node "
          f"(daemon, schedule tick, QueuedRunCoordinator, dequeue every {interval} s)\n")
    print("| what | " + " | ".join(columns.values()) + " |")
    print("|---|" + "---|" * len(columns))
    for key, label in ROWS:
        print(f"| {label.format(**results['default'])} | " + " | ".join(results[c][key] for c in columns) + " |")
    print("| namespaces curated per minute (tick to the last run's end) | "
          + " | ".join(f"{results[c]['per_minute']:.1f}" for c in columns) + " |")
    if "celery" in results:
        ratio = results["celery"]["per_minute"] / results["default"]["per_minute"]
        print(f"\ncelery / default namespaces per minute: {ratio:.2f}x (target: at least 3x)")
        print(f"launched to first step, celery, median: {results['celery']['launch_to_step']} s; "
              f"taken by a warm worker to first step: {results['celery']['taken_to_step']} s (target: under 0.3 s)")


if __name__ == "__main__":
    main()

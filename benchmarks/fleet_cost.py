"""A fleet: 1,000 namespaces of 200 nodes, one node changed in 10% of them, curated by the real
Dagster daemon (the schedule's tick, the run queue, 4 runs at a time).

    python benchmarks/fleet_cost.py                  # 1,000 namespaces (~5 minutes)
    python benchmarks/fleet_cost.py --quick          # 200 namespaces
    python benchmarks/fleet_cost.py --dequeue-interval 5   # with Dagster's default run queue interval

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


def stop_group(process: subprocess.Popen) -> None:
    """Stop the daemon and every process it started (its own process group)."""
    for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
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
        elif kind == kinds.RUN_STARTING:  # dequeued, and its process launched
            marks["starting"] = entry.timestamp
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 namespaces")
    parser.add_argument("--namespaces", type=int)
    parser.add_argument("--changed-percent", type=float, default=10.0)
    parser.add_argument("--dequeue-interval", type=int,
                        help="the run queue's dequeue_interval_seconds (default: the package's dagster.yaml)")
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
    from curation_pipeline.defs.definitions import defs
    from curation_pipeline.defs.job import JOB_NAME
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
    from curation_pipeline.store.database import open_connection

    home = prepare_dagster_home(load_settings())
    config = (home / "dagster.yaml").read_text()
    if args.dequeue_interval is not None:  # this DAGSTER_HOME's copy only, not the package's
        config = re.sub(r"dequeue_interval_seconds: \d+", f"dequeue_interval_seconds: {args.dequeue_interval}", config)
        (home / "dagster.yaml").write_text(config.replace("# Managed by curation-pipeline", "# Edited"))
    found = re.search(r"dequeue_interval_seconds: (\d+)", config)
    interval = found.group(1) if found else "5 (Dagster's default)"
    with resources.as_file(resources.files("curation_pipeline") / "instance" / "workspace.yaml") as source:
        shutil.copyfile(source, home / "workspace.yaml")
    rng = np.random.default_rng(23)
    names = [f"agent-{index:04d}" for index in range(total)]
    changed = names[:: total // count][:count]
    print(f"# fleet ({os.cpu_count()} cores): {total:,} namespaces of {NODES} nodes, one node changed in {len(changed)}")
    began = time.perf_counter()
    with open_connection(url) as conn, dg.DagsterInstance.get() as instance:
        seed_fleet(conn, names, rng)
        keys = [partition_key("fleet", name) for name in names]
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, keys)
        # One namespace's real cycle: the pass state every namespace's complete passes leave.
        job = defs.get_job_def(JOB_NAME)
        assert job.execute_in_process(partition_key=keys[0], instance=instance, run_config=scale_data.QUIET).success
        for name in changed:
            if name != names[0]:
                scale_data.copy_pass_state(conn, "fleet", names[0], name)
            scale_data.mark_graph_synced(conn, "fleet", name)
        conn.execute("UPDATE namespace_activity SET last_curated_at = now() - interval '30 minutes',"
                     " last_interaction_at = now() - interval '1 hour' WHERE tenant_id = 'fleet'")
        conn.commit()
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
        print(f"seeded in {time.perf_counter() - began:.0f} s")

        log_path = os.path.join(tempfile.mkdtemp(prefix="fleet-daemon-"), "daemon.log")
        daemon = start_daemon(home, log_path, env)
        started = time.time()
        try:
            finished: list = []
            while time.time() - started < TIMEOUT_S:
                runs = instance.get_runs(dg.RunsFilter(job_name=JOB_NAME, tags={"curation/trigger": "schedule"}))
                finished = [run for run in runs if run.is_finished]
                if len(finished) >= len(changed):
                    break
                time.sleep(2)
        finally:
            stop_group(daemon)
        runs = finished
        [state] = [s for s in instance.all_instigator_state() if s.instigator_name == "curation_schedule"]
        ticks = [tick for tick in instance.get_ticks(state.instigator_origin_id, state.selector_id)
                 if tick.run_ids]
        timelines = [run_timeline(instance, run.run_id) for run in runs]
        stats = {run.run_id: instance.get_run_step_stats(run.run_id) for run in runs}

    if not timelines:
        print(f"no run finished within {TIMEOUT_S} s; daemon log: {log_path}")
        return
    tick = min(ticks, key=lambda t: t.timestamp)
    first_created = min(t["enqueued"] for t in timelines)
    last_ended = max(t["ended"] for t in timelines)
    succeeded = sum(1 for t in timelines if t.get("success"))
    span = last_ended - tick.timestamp

    def median(name_from, name_to):
        return statistics.median(t[name_to] - t[name_from] for t in timelines)

    step_seconds = [sum(s.end_time - s.start_time for s in steps) for steps in stats.values()]
    print(f"\n## Fleet: {total:,} namespaces of {NODES} nodes, {len(changed)} with one changed node "
          f"(daemon, schedule tick, QueuedRunCoordinator, 4 at a time, dequeue every {interval} s)\n")
    print("| what | seconds |")
    print("|---|---|")
    print(f"| schedule tick: its time to the tick's end ({len(tick.run_ids)} run requests) "
          f"| {tick.end_timestamp - tick.timestamp:.1f} |")
    print(f"| tick's time to the first run queued | {first_created - tick.timestamp:.1f} |")
    print(f"| tick's time to the last run finished ({succeeded}/{len(timelines)} succeeded) | {span:.1f} |")
    print(f"| per run, median: waiting in the queue (for a slot and the next dequeue) "
          f"| {median('enqueued', 'starting'):.2f} |")
    print(f"| per run, median: launched to run started (process start, imports, code load) "
          f"| {median('starting', 'started'):.2f} |")
    print(f"| per run, median: run started to its first step (resources: session, lease) "
          f"| {median('started', 'first_step'):.2f} |")
    print(f"| per run, median: first step start to last step end | {median('first_step', 'last_step'):.2f} |")
    print(f"| per run, median: the steps' own time (sum of step durations) | {statistics.median(step_seconds):.2f} |")
    print(f"| per run, median: last step to run success | {median('last_step', 'ended'):.2f} |")
    print(f"\nnamespaces curated per minute: {len(timelines) / span * 60:.1f} "
          f"(from the tick to the last run's end)")


if __name__ == "__main__":
    main()

"""How long a schedule tick takes with 10,000 registered namespaces of which 1% changed.

    python benchmarks/schedule_tick.py [--namespaces 10000] [--changed-percent 1]

Uses a fresh embedded Postgres in a temporary CURATION_HOME and a Postgres-backed Dagster
instance (like `curation-pipeline ui`), evaluates the real schedule and idle sensor, and prints
timings (medians of several ticks) and the query plan. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

import scale_data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespaces", type=int, default=10_000)
    parser.add_argument("--changed-percent", type=float, default=1.0)
    parser.add_argument("--ticks", type=int, default=5)
    args = parser.parse_args()

    scale_data.fresh_home()

    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.core.partition_keys import partition_key
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
    from curation_pipeline.defs.resources import MemoryStore
    from curation_pipeline.defs.schedules import build_curation_schedule
    from curation_pipeline.defs.sensors import build_idle_sensor
    from curation_pipeline.store.database import ensure_database, open_connection
    from curation_pipeline.store.triggers import load_candidates
    defs = load_defs()

    settings = load_settings()
    prepare_dagster_home(settings)
    url = ensure_database(settings)
    now = datetime.now(UTC)
    total, changed = args.namespaces, max(1, round(args.namespaces * args.changed_percent / 100))
    names = [(f"tenant{index % 100:03d}", f"agent-{index:05d}") for index in range(total)]

    with open_connection(url, autocommit=True) as conn:
        # Everyone was curated an hour ago after their last interaction; `changed` of them have
        # had an interaction since (and have been idle for 15 minutes, so the sensor wants them).
        conn.execute(
            """
            INSERT INTO namespace_activity (tenant_id, namespace, last_interaction_at, last_curated_at)
            SELECT t, n, CASE WHEN i < %(changed)s THEN %(recent)s ELSE %(before)s END, %(curated)s
            FROM unnest(%(t)s::text[], %(n)s::text[]) WITH ORDINALITY AS p(t, n, i)
            """,
            {"t": [t for t, _ in names], "n": [n for _, n in names], "changed": changed + 1,
             "recent": now - timedelta(minutes=15), "before": now - timedelta(hours=2),
             "curated": now - timedelta(hours=1)},
        )
        conn.execute("ANALYZE namespace_activity")
        plan = conn.execute(
            "EXPLAIN SELECT tenant_id, namespace FROM namespace_activity WHERE curation_enabled"
            " AND (last_curation_started_at IS NULL OR last_interaction_at > last_curation_started_at)"
        ).fetchall()

    with dg.DagsterInstance.get() as instance:
        started = time.perf_counter()
        keys = [partition_key(t, n) for t, n in names]
        for start in range(0, len(keys), 1000):
            instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, keys[start : start + 1000])
        registering = time.perf_counter() - started

        def timed(function) -> tuple[float, object]:
            samples, result = [], None
            for _ in range(args.ticks):
                begin = time.perf_counter()
                result = function()
                samples.append(time.perf_counter() - begin)
            return statistics.median(samples), result

        with open_connection(url) as conn:
            query_s, rows = timed(lambda: load_candidates(conn, overdue_before=now - timedelta(hours=6)))

        schedule = build_curation_schedule(settings)
        sensor = build_idle_sensor(settings)
        repository = defs.get_repository_def()

        def schedule_tick():
            with dg.build_schedule_context(
                instance=instance, instance_ref=instance.get_ref(), scheduled_execution_time=now,
                resources={"memory_store": MemoryStore()}, repository_def=repository,
            ) as context:
                return schedule.evaluate_tick(context)

        def sensor_tick():
            with dg.build_sensor_context(
                instance=instance, instance_ref=instance.get_ref(),
                resources={"memory_store": MemoryStore()}, repository_def=repository,
            ) as context:
                return sensor.evaluate_tick(context)

        schedule_s, schedule_result = timed(schedule_tick)
        sensor_s, sensor_result = timed(sensor_tick)

    print(f"namespaces: {total}, changed since their last curation: {changed}")
    print(f"registering {total} partitions (one-off): {registering:.2f} s")
    print("plan of the pending-namespaces query:")
    for (line,) in plan:
        print(f"    {line}")
    print(f"candidate query: {query_s * 1000:.1f} ms, {len(rows)} rows read")
    print(f"schedule tick (median of {args.ticks}): {schedule_s * 1000:.1f} ms, "
          f"{len(schedule_result.run_requests)} run requests")
    print(f"idle sensor tick (median of {args.ticks}, cap {settings.idle_max_runs_per_tick}): "
          f"{sensor_s * 1000:.1f} ms, {len(sensor_result.run_requests)} run requests")


if __name__ == "__main__":
    main()

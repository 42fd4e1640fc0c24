"""What a curation cycle costs: step 2's pair search, repeat cycles, and Dagster's overhead.

    python benchmarks/curation_cost.py            # everything (about 10 minutes on 2 cores)
    python benchmarks/curation_cost.py --quick    # smaller sizes, a minute or two

Seeds its own data in a fresh embedded Postgres (a temporary CURATION_HOME), runs each
measurement several times and prints tables of medians. Prints figures; asserts nothing,
except that the pair search found exactly the pairs of the brute-force references.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc
import uuid

import numpy as np
import scale_data

DIM = 384
THRESHOLD = 0.92
# The default embedder's name: the job compares (and keeps) only vectors of the configured model.
MODEL = f"lexical-ngram-v1/{DIM}"


def _clustered_vectors(rng: np.random.Generator, n: int, duplicate_share: float = 0.02) -> np.ndarray:
    """Random unit vectors with a share of near-duplicates (cosine ~0.95-0.99) planted."""
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    copies = rng.choice(n, size=int(n * duplicate_share), replace=False)
    sources = rng.choice(n, size=copies.size)
    vectors[copies] = vectors[sources] + rng.normal(scale=0.12, size=(copies.size, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), copies, sources


def _grouped(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n vectors in 20 groups, each planted duplicate in its source's group."""
    vectors, copies, sources = _clustered_vectors(rng, n)
    groups = rng.integers(0, 20, size=n)
    groups[copies] = groups[sources]
    return vectors, groups


def _load_namespace(conn, tenant: str, namespace: str, vectors: np.ndarray, groups: np.ndarray) -> list[str]:
    """Insert one node per vector with binary COPY; returns the ids."""
    from pgvector import Vector

    ids = [uuid.uuid4() for _ in range(len(vectors))]
    now = conn.execute("SELECT now()").fetchone()[0]
    with conn.cursor().copy(
        "COPY memory_nodes (id, tenant_id, namespace, memory_type, pointer_summary, embedding,"
        " embedding_model, recall_count, last_recalled_at, epoch) FROM STDIN WITH (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["uuid", "text", "text", "text", "text", "vector", "text", "int4", "timestamptz", "int8"])
        for node_id, vector, group in zip(ids, vectors, groups):
            copy.write_row([node_id, tenant, namespace, f"type-{group}", f"Memory {node_id.hex[:8]}.",
                            Vector(vector), MODEL, 3, now, 0])
    conn.execute(
        "INSERT INTO namespace_activity (tenant_id, namespace, current_epoch) VALUES (%s, %s, 0)"
        " ON CONFLICT DO NOTHING", (tenant, namespace),
    )
    conn.commit()
    conn.execute("ANALYZE memory_nodes")  # what autovacuum does soon after a bulk load
    conn.commit()
    return [str(node_id) for node_id in ids]


def bench_pair_search(url: str, sizes: dict, repeats: int) -> None:
    from curation_pipeline.core.scope import Scope
    from curation_pipeline.core.steps.similarity import find_similar_pairs
    from curation_pipeline.store.candidates import consolidation_candidates
    from curation_pipeline.store.database import open_connection

    rng = np.random.default_rng(7)
    print("\n## Step 2 pair search (exact, 384-d, float32 blocks)\n")
    print("| case | nodes | load (s) | search (s) | total (s) | peak search memory (MiB) | pairs | reference |")
    print("|---|---|---|---|---|---|---|---|")
    with open_connection(url) as conn:
        # 1. n nodes in 20 memory_type groups, loaded from Postgres.
        n = sizes["grouped"]
        vectors, groups = _grouped(rng, n)
        _load_namespace(conn, "bench", "grouped", vectors, groups)
        scope = Scope("bench", "bench", "grouped", "bench")
        load_s, (frame, loaded) = scale_data.median_time(lambda: consolidation_candidates(conn, scope, MODEL), repeats)
        group_ids = frame.select(__import__("polars").col("memory_type").rank("dense")).to_series().to_numpy()
        tracemalloc.start()
        search_s, pairs = scale_data.median_time(lambda: find_similar_pairs(loaded, group_ids, threshold=THRESHOLD), repeats)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        found = _sample_reference(loaded, group_ids, pairs, rng)
        print(f"| {n:,} nodes, 20 groups | {n:,} | {load_s:.2f} | {search_s:.2f} | {load_s + search_s:.2f} "
              f"| {peak:.0f} | {pairs.height:,} | {found} |")

        # 2. One group: the search against a bare blocked float32 matrix product.
        n = sizes["one_group"]
        one = _clustered_vectors(rng, n)[0]
        search_s, pairs = scale_data.median_time(lambda: find_similar_pairs(one, np.zeros(n, dtype=np.int64), threshold=THRESHOLD), 1)
        bare_s, _ = scale_data.median_time(lambda: _bare_blocked_product(one), 1)
        print(f"| {n:,} nodes, one group | {n:,} | - | {search_s:.2f} | {search_s:.2f} | - | {pairs.height:,} "
              f"| bare blocked product {bare_s:.2f} s: ratio {search_s / bare_s:.2f}x |")

        # 3. The quadratic SQL self-join, same data, same answer.
        n = sizes["sql"]
        small, small_groups = _grouped(rng, n)
        _load_namespace(conn, "bench", "sql", small, small_groups)
        sql_scope = Scope("bench", "bench", "sql", "bench")

        def numpy_path():
            frame, vectors = consolidation_candidates(conn, sql_scope, MODEL)
            ids = frame["id"].to_numpy()
            group_of = frame.select(__import__("polars").col("memory_type").rank("dense")).to_series().to_numpy()
            found = find_similar_pairs(vectors, group_of, threshold=THRESHOLD)
            return {tuple(sorted((ids[i], ids[j]))) for i, j in zip(found["i"], found["j"])}

        def sql_path():
            rows = conn.execute(
                "SELECT a.id::text, b.id::text FROM memory_nodes a JOIN memory_nodes b"
                " ON a.memory_type = b.memory_type AND a.id < b.id"
                " WHERE a.namespace = 'sql' AND b.namespace = 'sql' AND a.tenant_id = 'bench'"
                " AND b.tenant_id = 'bench' AND 1 - (a.embedding <=> b.embedding) > %s",
                (THRESHOLD,),
            ).fetchall()
            return {tuple(sorted(row)) for row in rows}

        _against_sql(f"{n:,} nodes, 20 groups, SQL self-join", n, numpy_path, sql_path, repeats)
        # The same nodes as one memory type: the self-join's quadratic case.
        conn.execute("UPDATE memory_nodes SET memory_type = 'one' WHERE namespace = 'sql' AND tenant_id = 'bench'")
        conn.commit()
        _against_sql(f"{n:,} nodes, one group, SQL self-join", n, numpy_path, sql_path, repeats)


def _against_sql(label: str, n: int, numpy_path, sql_path, repeats: int) -> None:
    numpy_s, numpy_pairs = scale_data.median_time(numpy_path, repeats)
    sql_s, sql_pairs = scale_data.median_time(sql_path, 1)
    # Pairs right at the threshold could differ in the last float32 bit between the two.
    same = "same pairs" if numpy_pairs == sql_pairs else f"{len(numpy_pairs ^ sql_pairs)} pairs differ"
    print(f"| {label} | {n:,} | - | {sql_s:.2f} | {sql_s:.2f} | - | {len(sql_pairs):,} "
          f"| numpy incl. load {numpy_s:.2f} s: {sql_s / numpy_s:.0f}x faster, {same} |")


def _sample_reference(vectors: np.ndarray, groups: np.ndarray, pairs, rng, sample: int = 300) -> str:
    """Brute force in float64 for a sample of rows: every pair of theirs must have been found."""
    rows = rng.choice(len(vectors), size=min(sample, len(vectors)), replace=False)
    found = set(zip(pairs["i"].to_list(), pairs["j"].to_list()))
    unit = vectors.astype(np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    missing = expected = 0
    for row in rows:
        sims = unit @ unit[row]
        partners = np.flatnonzero((sims > THRESHOLD + 1e-6) & (groups == groups[row]))
        for partner in partners:
            if partner == row:
                continue
            expected += 1
            missing += (min(row, partner), max(row, partner)) not in found
    return f"brute force on {len(rows)} rows: {expected - missing}/{expected} pairs found"


def _bare_blocked_product(unit: np.ndarray) -> None:
    """The physical floor: the upper-triangle blocked products alone (same tiles), nothing kept."""
    from curation_pipeline.core.steps.similarity import BLOCK_ROWS as block

    for start in range(0, len(unit), block):
        row_block = unit[start : start + block]
        for col in range(start, len(unit), block):
            row_block @ unit[col : col + block].T


def _cycle_phases(records, started: float, returned: float) -> dict[str, float]:
    """Where one in-process cycle's wall time went, from its run's event log (timestamps in
    seconds): Dagster's run creation, each step from its start to its success, Dagster's
    bookkeeping between the steps, and the return."""
    times = {}
    step_started = {}
    for record in records:
        event = record.dagster_event.event_type_value if record.dagster_event else None
        step = (record.step_key or "").rsplit(".", 1)[-1]
        if event == "PIPELINE_START":
            times["run created, to its start (run record; the asset's and checks' planned events)"] = \
                record.timestamp - started
        elif event == "STEP_START":
            step_started[step] = record.timestamp
        elif event == "STEP_SUCCESS":
            times[f"step {step}"] = record.timestamp - step_started[step]
        elif event == "PIPELINE_SUCCESS":
            times["run succeeded, to the call's return"] = returned - record.timestamp
    times["between the steps (Dagster's own bookkeeping)"] = returned - started - sum(times.values())
    return times


def bench_repeat_cycles(url: str, sizes: list[int], changes: list[int], repeats: int) -> None:
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.job import step_key
    from curation_pipeline.store.database import open_connection
    defs = load_defs()
    # Dagster's storage as a deployment has it (dagster.yaml: the `dagster` database on the
    # store's Postgres), not a test instance's SQLite: each of a run's events is a write there.
    prepare_dagster_home(load_settings())
    phases: dict[str, list[float]] = {}

    rng = np.random.default_rng(11)
    job = defs.resolve_job_def("curate_namespace")
    print("\n## Repeat cycles: one namespace (20 memory types), k nodes changed since the last cycle\n")
    print("| nodes | changed | cycle (s) | step 2 (s) | step 2 pass | nodes loaded | compared as changed |")
    print("|---|---|---|---|---|---|---|")
    with dg.DagsterInstance.get() as instance, open_connection(url) as conn:
        for n in sizes:
            namespace = f"cycle-{n}"
            ids = _load_namespace(conn, "bench", namespace, _clustered_vectors(rng, n, 0.0)[0], rng.integers(0, 20, size=n))
            key = f"bench:{namespace}"
            instance.add_dynamic_partitions("namespaces", [key])
            quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
            job.execute_in_process(partition_key=key, instance=instance, run_config=quiet)  # the first, full pass
            # Step 6 mirrors a new namespace into the graph CURATOR_GRAPH_BACKFILL_CAP (20,000) nodes
            # a cycle: done at once here, so the rows below are repeat cycles, not its catching up.
            scale_data.mark_graph_synced(conn, "bench", namespace)
            for k in changes:
                timings = []
                for _ in range(repeats):
                    if k:
                        changed = rng.choice(ids, size=k, replace=False).tolist()
                        new_vectors = _clustered_vectors(rng, k, 0.0)[0]
                        from pgvector import Vector

                        conn.execute(
                            "UPDATE memory_nodes m SET embedding = v.e FROM unnest(%s::uuid[], %s::vector[]) AS v(id, e)"
                            " WHERE m.id = v.id", (changed, [Vector(v) for v in new_vectors]),
                        )
                        conn.commit()
                    started = time.time()
                    result = job.execute_in_process(partition_key=key, instance=instance, run_config=quiet)
                    returned = time.time()
                    total = returned - started
                    for phase, seconds in _cycle_phases(instance.all_logs(result.run_id), started, returned).items():
                        phases.setdefault(phase, []).append(seconds)
                    stats = instance.get_run_step_stats(result.run_id)
                    step2 = next(s for s in stats if s.step_key == step_key("consolidate_duplicates"))
                    [output] = [e for e in result.all_events
                                if e.is_successful_output and e.step_key == step_key("consolidate_duplicates")]
                    meta = output.event_specific_data.metadata
                    timings.append((total, step2.end_time - step2.start_time,
                                    meta["pass"].value, meta["nodes_compared"].value, meta["focus_nodes"].value))
                total, step2 = statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings)
                print(f"| {n:,} | {k:,} | {total:.2f} | {step2:.2f} | {timings[-1][2]} | {timings[-1][3]:,} "
                      f"| {timings[-1][4]:,} |")
    print("\n## Where a cycle's time goes: medians over the cycles above\n")
    print("| part of the cycle | median (ms) |")
    print("|---|---|")
    for phase, seconds in phases.items():
        print(f"| {phase} | {statistics.median(seconds) * 1000:.0f} |")


def bench_dagster_overhead(runs: int) -> None:
    """Launch partition runs the way the CLI does and time them end to end."""
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.cli.launcher import (
        code_location_workspace,
        launch_partition_runs,
    )
    from curation_pipeline.cli.runner import FINISHED
    from curation_pipeline.config.settings import load_settings

    settings = load_settings()
    prepare_dagster_home(settings)
    print("\n## Dagster overhead per partition run (in-process executor, launched like the UI)\n")
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("namespaces", ["bench:tiny"])
        with code_location_workspace(instance) as workspace:
            quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}

            def launch_and_wait() -> None:
                [run_id] = launch_partition_runs(instance, workspace, ["bench:tiny"], run_config=quiet)
                while instance.get_run_by_id(run_id).status not in FINISHED:
                    time.sleep(0.05)

            launch_and_wait()  # the first run pays the imports
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                launch_and_wait()
                times.append(time.perf_counter() - start)
    print(f"launch to success of a run on an empty namespace: median {statistics.median(times):.2f} s, "
          f"min {min(times):.2f} s over {runs} runs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", choices=["pairs", "cycles", "dagster"], help="one part only")
    args = parser.parse_args()

    url = scale_data.fresh_store()
    print(f"# curation-pipeline cost benchmark ({os.cpu_count()} cores, numpy {np.__version__})")
    quick = args.quick
    if args.only in (None, "pairs"):
        sizes = {"grouped": 20_000, "one_group": 20_000, "sql": 5_000} if quick else \
            {"grouped": 100_000, "one_group": 100_000, "sql": 20_000}
        bench_pair_search(url, sizes, repeats=3)
    if args.only in (None, "cycles"):
        bench_repeat_cycles(url, [1_000, 10_000] if quick else [1_000, 10_000, 100_000], [0, 10, 1_000], repeats=3)
    if args.only in (None, "dagster"):
        bench_dagster_overhead(runs=5 if quick else 10)


if __name__ == "__main__":
    main()

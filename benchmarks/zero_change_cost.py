"""A cycle where nothing changed: its cost at 1M nodes next to 1k, step by step, with the plans.

    python benchmarks/zero_change_cost.py              # 1,000 and 1,000,000 nodes (~10 minutes)
    python benchmarks/zero_change_cost.py --quick      # 1,000 and 100,000 nodes

One namespace per size (20 memory types, 384-d vectors of a semantic model, so that step 6b
runs too; nothing is ever embedded, so no embedder is called), in two cases: loaded as the
import loads them (with the namespace's activity row and its epoch), and COPYed in by an
agent's own SQL, with no activity row (the pipeline then makes one, without an epoch: step 1
falls back to the nodes' highest epoch). The small namespace gets two real
full cycles; at the large size a full pass would take minutes, so its passes are set complete
directly (the state those cycles leave). Both graphs are brought up to date directly (step 6
syncs 100 nodes a cycle). Then the real job runs zero-change cycles in process, the sizes taking
turns: per-step times from Dagster's step stats (medians), and every statement of one more
cycle is recorded and replayed under EXPLAIN (ANALYZE, BUFFERS) in a transaction that is rolled
back: the buffers a step touches must not grow with the namespace.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import traceback
from collections import defaultdict

import numpy as np
import scale_data

MODEL = scale_data.SEMANTIC_MODEL
STEPS = ("reclassify_stale", "consolidate_duplicates", "summarize_verbose", "revectorize",
         "mark_stale_confidence", "sync_graph", "associate_concepts", "log_curation_activity")


class StatementLog:
    """Every statement psycopg sends while active, with the step (service module) that sent it."""

    def __init__(self):
        self.statements: list[tuple[str, str, object]] = []
        self._patched: list = []

    @contextlib.contextmanager
    def recording(self):
        import psycopg

        for cls in (psycopg.Cursor, psycopg.ServerCursor):
            original = cls.execute

            def execute(cursor, query, params=None, *args, _original=original, **kwargs):
                text = query if isinstance(query, str) else query.as_string(cursor.connection)
                self.statements.append((_sender(), text, params))
                return _original(cursor, query, params, *args, **kwargs)

            cls.execute = execute
            self._patched.append((cls, original))
        try:
            yield self
        finally:
            for cls, original in self._patched:
                cls.execute = original
            self._patched.clear()


def _sender() -> str:
    """The step whose service module is on the stack (else the run's own bookkeeping)."""
    for frame in reversed(traceback.extract_stack()):
        if "/service/steps/" in frame.filename:
            return frame.filename.rsplit("/", 1)[1].removesuffix(".py")
    return "session and bookkeeping"


def explain(url: str, query: str, params, form: str = "JSON"):
    """The statement's EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back: the plan as a
    dict (JSON), or its lines (TEXT)."""
    from curation_pipeline.store.database import open_connection

    with open_connection(url) as conn:
        try:
            rows = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT {form}) {query}", params).fetchall()
        finally:
            conn.rollback()
    return rows[0][0][0] if form == "JSON" else [row[0] for row in rows]


def _walk(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _walk(child)


def summarise(plan: dict) -> dict:
    top = plan["Plan"]
    scans = []
    for node in _walk(top):
        kind = node["Node Type"]
        if "Scan" in kind and node.get("Relation Name"):
            target = node.get("Index Name") or node["Relation Name"]
            never = " (never run)" if node.get("Actual Loops") == 0 else ""
            scans.append(f"{kind.replace(' Scan', '')}:{target}{never}")
    return {
        "buffers": top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0),
        "ms": plan.get("Execution Time", 0.0),
        "scans": scans,
    }


def run_cycles(instance, job, key: str, count: int, run_config) -> list[dict]:
    """Per cycle: total seconds and each step's seconds (Dagster's step stats)."""
    cycles = []
    for _ in range(count):
        start = time.perf_counter()
        result = job.execute_in_process(partition_key=key, instance=instance, run_config=run_config)
        total = time.perf_counter() - start
        assert result.success
        steps = {s.step_key.removeprefix("memory_namespace."): s.end_time - s.start_time for s in instance.get_run_step_stats(result.run_id)}
        cycles.append({"total": total, **steps})
    return cycles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 and 100,000 nodes")
    parser.add_argument("--sizes", type=int, nargs="+", help="namespace sizes (the first is the reference)")
    parser.add_argument("--statements", action="store_true", help="print each statement of the largest size")
    parser.add_argument("--cycles", type=int, default=7, help="measured cycles per size (median)")
    parser.add_argument("--case", choices=[*CASES, "both"], default="both",
                        help="imported (with an activity row), agent (COPY without one), or both")
    args = parser.parse_args()
    sizes = args.sizes or ([1_000, 100_000] if args.quick else [1_000, 1_000_000])
    os.environ.update(scale_data.SEMANTIC_ENV)
    url = scale_data.fresh_store()
    for case in (CASES if args.case == "both" else (args.case,)):
        measure(args, url, sizes, case)


CASES = {"imported": "loaded with the namespace's activity row (as `import` writes it)",
         "agent": "COPYed in by an agent's own SQL, no namespace_activity row"}


def measure(args, url: str, sizes: list[int], case: str) -> None:
    import dagster as dg

    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.store.database import open_connection
    defs = load_defs()

    job = defs.resolve_job_def("curate_namespace")
    quiet = scale_data.QUIET
    rng = np.random.default_rng(3)
    results, plans, loads = {}, {}, []
    print(f"# zero-change cycles ({os.cpu_count()} cores, numpy {np.__version__}); sizes {sizes}")
    with dg.instance_for_test() as instance, open_connection(url) as conn:
        keys = {}
        for n in sizes:
            namespace = f"zero-{case}-{n}"
            keys[n] = key = f"bench:{namespace}"
            start = time.perf_counter()
            scale_data.seed_namespace(conn, "bench", namespace, n, model=MODEL, activity_row=case == "imported",
                                      vectors=lambda k: scale_data.unit_vectors(rng, k))
            scale_data.analyze(conn)
            scale_data.mark_graph_synced(conn, "bench", namespace)
            print(f"seeded {n:,} nodes in {time.perf_counter() - start:.0f} s")
            instance.add_dynamic_partitions("namespaces", [key])
            if n == sizes[0]:
                run_cycles(instance, job, key, 2, quiet)  # two real full cycles
            else:
                scale_data.copy_pass_state(conn, "bench", f"zero-{case}-{sizes[0]}", namespace)
                run_cycles(instance, job, key, 1, quiet)  # warm-up
        # The sizes take turns, so that both see the same load of a shared machine.
        cycles = {n: [] for n in sizes}
        for _ in range(args.cycles):
            for n in sizes:
                cycles[n] += run_cycles(instance, job, keys[n], 1, quiet)
        for n in sizes:
            results[n] = {name: statistics.median(c.get(name, 0.0) for c in cycles[n])
                          for name in ("total", *STEPS)}
            log = StatementLog()
            with log.recording():
                run_cycles(instance, job, keys[n], 1, quiet)
            per_step = defaultdict(lambda: {"statements": 0, "buffers": 0, "ms": 0.0, "scans": []})
            for sender, query, params in log.statements:
                first = query.lstrip().split(None, 1)[0].upper()
                if "advisory" in query or first not in ("SELECT", "WITH", "INSERT", "UPDATE", "DELETE"):
                    continue
                summary = summarise(explain(url, query, params))
                entry = per_step[sender]
                entry["statements"] += 1
                entry["buffers"] += summary["buffers"]
                entry["ms"] += summary["ms"]
                entry["scans"].extend(summary["scans"])
                if n == sizes[-1] and "memory_nodes" in query and sender != "cycle":
                    loads.append((sender, query, params))
                if args.statements and n == sizes[-1]:
                    print(f"  {sender}: {summary['buffers']} buffers, {', '.join(summary['scans'])}: "
                          f"{' '.join(query.split())[:160]}")
            plans[n] = dict(per_step)

    small, large = sizes[0], sizes[-1]
    print(f"\n## Zero-change cycle, {CASES[case]}: {small:,} vs {large:,} nodes (median of {args.cycles}"
          " cycles each, taking turns, in process)\n")
    print(f"| step | {small:,} nodes (s) | {large:,} nodes (s) | ratio |")
    print("|---|---|---|---|")
    for name in (*STEPS, "total"):
        a, b = results[small][name], results[large][name]
        label = "whole cycle" if name == "total" else name
        print(f"| {label} | {a:.3f} | {b:.3f} | {b / a:.2f}x |")

    print("\n## What each step's statements read (last cycle replayed under EXPLAIN ANALYZE)\n")
    print(f"| sender | statements | buffers at {small:,} | buffers at {large:,} | SQL ms at {small:,} "
          f"| SQL ms at {large:,} | scans at {large:,} |")
    print("|---|---|---|---|---|---|---|")
    for sender in sorted(plans[large]):
        a, b = plans[small].get(sender, {"buffers": 0, "ms": 0.0}), plans[large][sender]
        scans = ", ".join(sorted(set(b["scans"])))
        print(f"| {sender} | {b['statements']} | {a['buffers']} | {b['buffers']} | {a['ms']:.1f} "
              f"| {b['ms']:.1f} | {scans} |")

    print(f"\n## The plans of the statements that read memory_nodes, at {large:,} nodes ({case})\n")
    for sender, query, params in loads:
        print(f"{sender}: {' '.join(query.split())[:100]}...")
        for line in explain(url, query, params, "TEXT"):
            print(f"    {line}")


if __name__ == "__main__":
    main()

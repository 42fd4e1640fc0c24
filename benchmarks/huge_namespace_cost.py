"""Huge inputs: a namespace's first cycles stay bounded in time and memory per step.

    python benchmarks/huge_namespace_cost.py              # 200,000 tiny rows, 6 cycles; two 10 MB memories
    python benchmarks/huge_namespace_cost.py --quick      # 50,000 rows, 3 cycles; two 1 MB memories

1. **200,000 tiny rows** COPYed into one namespace the way an agent's own SQL writes them: no
   vectors, no namespace_activity row, ANALYZEd. Then the namespace's first cycles, each in a
   fresh process (as a run worker: the process's own peak RSS is the cycle's), with the default
   settings and the lexical embedder (the data's vectors are its): each step's time (Dagster's step stats), what it
   did, the embedding backlog and the graph's vertices after the cycle.
2. **The last of those cycles**, where step 2's search is largest: the same namespace size with
   all but 5,000 nodes embedded already (written directly, random unit vectors in ONE memory
   type, the worst case for the search: every changed node is compared with every node) and its
   passes and graph up to date, as 39 cycles would leave it: two cycles.
3. **Two 10 MB memories**, recalled often (so step 3 leaves them long), in a namespace of
   ordinary ones, none embedded yet: the first two cycles (the second merges them), the same way.

Reports the figures docs/cost.md quotes (caps: CURATOR_EMBED_CAP, CURATOR_SEARCH_MAX_CHANGED,
CURATOR_GRAPH_BACKFILL_CAP, the embedders' input limits, vertex summaries). Asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time

import scale_data

TENANT = "bench"

# One cycle of one namespace in this (fresh) process, as a run worker runs it: what each step
# took and did, printed as JSON (the caller adds the process's peak RSS).
_CYCLE = """
import json, sys, time
import dagster as dg
from curation_pipeline.defs.definitions import load_defs

defs = load_defs()

key = sys.argv[1]
with dg.instance_for_test() as instance:
    instance.add_dynamic_partitions("namespaces", [key])
    started = time.perf_counter()
    result = defs.resolve_job_def("curate_namespace").execute_in_process(
        partition_key=key, instance=instance, raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}})
    took = time.perf_counter() - started
    steps = {s.step_key.removeprefix("memory_namespace."): s.end_time - s.start_time for s in instance.get_run_step_stats(result.run_id)}
    print(json.dumps({"run_id": result.run_id, "success": result.success, "seconds": took, "steps": steps}))
"""


def copy_tiny_rows(conn, namespace: str, n: int) -> None:
    """n short, distinct memories, COPYed as an agent would: no vector, no activity row."""
    buffer = io.StringIO()
    words = ("invoice renewal webhook roadmap pilot retention export escalation contract audit badge "
             "laptop printer vacation payroll migration firewall backup sprint onboarding").split()
    for k in range(n):
        buffer.write(f"{TENANT}\t{namespace}\tNote {k}: {words[k % 20]} {words[(k // 20) % 20]}"
                     f" {words[(k // 400) % 20]} for ticket T-{k * 7919 % 1_000_003}.\n")
    with conn.cursor().copy("COPY memory_nodes (tenant_id, namespace, pointer_summary) FROM STDIN") as copy:
        copy.write(buffer.getvalue())
    conn.commit()


def add_huge_memories(conn, namespace: str, size: int) -> None:
    """Two memories of about `size` characters of distinct sentences, recalled often (so step 3
    leaves them long: only rarely recalled ones are summarized), among ordinary ones; none has
    a vector yet. They begin alike (what an embedder reads of them is the same), so step 2
    merges them in the second cycle, and half the other's sentences are new to the keeper."""
    def log(prefix: str, numbers) -> str:
        return " ".join(f"{prefix} {n}: the agent noted contract C-{n * 7} on day {n}." for n in numbers)

    count = size // 55
    huge = [log("Entry", range(count)), log("Entry", range(count // 2)) + " " + log("Later", range(count // 2, count))]
    ordinary = [f"Ordinary memory {k} about the quarterly review." for k in range(20)]
    with conn.cursor() as cursor:
        for text, recalled in [*((text, 5) for text in huge), *((text, 0) for text in ordinary)]:
            cursor.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary, recall_count)"
                           " VALUES (%s, %s, %s, %s)", (TENANT, namespace, text, recalled))
    conn.commit()


def as_if_almost_caught_up(conn, namespace: str, rows: int, left: int) -> None:
    """`rows - left` nodes embedded (one memory type) and `left` tiny rows still without a vector,
    with step 2's pass complete and the graph synced: the state of the last cycles."""
    import numpy as np

    rng = np.random.default_rng(23)
    scale_data.seed_namespace(conn, TENANT, namespace, rows - left, types=1, activity_row=False,
                              vectors=lambda k: scale_data.unit_vectors(rng, k))
    copy_tiny_rows(conn, namespace, left)
    # The same memory type as the embedded ones: step 2 compares each with all of them.
    conn.execute("UPDATE memory_nodes SET memory_type = 'type-00' WHERE tenant_id = %s AND namespace = %s",
                 (TENANT, namespace))
    conn.commit()
    scale_data.mark_graph_synced(conn, TENANT, namespace)
    conn.execute(
        "UPDATE namespace_activity SET consolidate_txid = pg_snapshot_xmax(pg_current_snapshot()),"
        " consolidate_node_id = NULL, consolidate_pending = '{}', consolidate_complete = true,"
        " consolidate_params = %s::jsonb, consolidate_chains_checked = true"
        " WHERE tenant_id = %s AND namespace = %s",
        (json.dumps({"similarity_threshold": 0.92, "model": scale_data.LEXICAL_MODEL}), TENANT, namespace),
    )
    conn.commit()


def after_cycle(conn, namespace: str, run_id: str) -> dict:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM memory_nodes WHERE tenant_id = %(t)s AND namespace = %(n)s"
        "        AND archived_at IS NULL AND embedding IS NULL),"
        " (SELECT count(*) FROM graph_vertices WHERE tenant_id = %(t)s AND namespace = %(n)s),"
        " (SELECT max(length(summary)) FROM graph_vertices WHERE tenant_id = %(t)s AND namespace = %(n)s),"
        " (SELECT metadata->'steps' FROM activity_log WHERE action = 'curation_cycle' AND run_id = %(r)s)",
        {"t": TENANT, "n": namespace, "r": run_id},
    ).fetchone()
    return {"backlog": row[0], "vertices": row[1], "longest_summary": row[2], "counts": row[3] or {}}


def cycles(conn, namespace: str, count: int) -> list[dict]:
    measured = []
    for number in range(1, count + 1):
        rss, out = scale_data.in_child(_CYCLE.replace("sys.argv[1]", repr(f"{TENANT}:{namespace}")))
        cycle = json.loads(out.strip().splitlines()[-1])
        cycle.update(rss_mib=rss, number=number, **after_cycle(conn, namespace, cycle["run_id"]))
        measured.append(cycle)
        slowest = max(cycle["steps"].items(), key=lambda item: item[1])
        print(f"  cycle {number}: {cycle['seconds']:.1f} s, peak RSS {rss:.0f} MiB, slowest step {slowest[0]} "
              f"{slowest[1]:.1f} s, backlog {cycle['backlog']:,}, vertices {cycle['vertices']:,}", flush=True)
    return measured


STEPS = ("reclassify_stale", "consolidate_duplicates", "summarize_verbose", "revectorize",
         "mark_stale_confidence", "sync_graph", "associate_concepts", "log_curation_activity")


def table(measured: list[dict]) -> None:
    print("| cycle | whole run (s) | peak RSS (MiB) | " + " | ".join(STEPS) + " | embedded | step 2 focus nodes "
          "| vertices synced | embedding backlog after | vertices after |")
    print("|---" * (len(STEPS) + 8) + "|")
    for cycle in measured:
        counts = cycle["counts"]
        print(f"| {cycle['number']} | {cycle['seconds']:.1f} | {cycle['rss_mib']:.0f} | "
              + " | ".join(f"{cycle['steps'].get(step, 0):.2f}" for step in STEPS)
              + f" | {counts.get('revectorize', {}).get('embedded', '-')}"
              f" | {counts.get('consolidate_duplicates', {}).get('focus_nodes', '-')}"
              f" | {counts.get('sync_graph', {}).get('nodes_considered', '-')}"
              f" | {cycle['backlog']:,} | {cycle['vertices']:,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 rows, 3 cycles; two 1 MB memories")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--cycles", type=int)
    args = parser.parse_args()
    rows = args.rows or (50_000 if args.quick else 200_000)
    count = args.cycles or (3 if args.quick else 6)
    huge = 1_000_000 if args.quick else 10_000_000

    url = scale_data.fresh_store()
    from curation_pipeline.store.database import open_connection

    print(f"# huge inputs ({os.cpu_count()} cores); the lexical embedder, every cap at its default")
    with open_connection(url) as conn:
        started = time.perf_counter()
        copy_tiny_rows(conn, "tiny", rows)
        scale_data.analyze(conn)
        print(f"\n## {rows:,} tiny rows COPYed in (no vectors, no activity row), {time.perf_counter() - started:.0f} s;"
              f" the first {count} cycles, each in a fresh process")
        tiny = cycles(conn, "tiny", count)
        as_if_almost_caught_up(conn, "late", rows, 5_000)
        scale_data.analyze(conn)
        print(f"\n## The last cycles: {rows - 5_000:,} of {rows:,} rows embedded already (one memory type)")
        late = cycles(conn, "late", 2)
        add_huge_memories(conn, "huge", huge)
        scale_data.analyze(conn)
        print(f"\n## Two {huge / 1e6:.0f} MB memories among 20 ordinary ones: the first two cycles")
        big = cycles(conn, "huge", 2)
    print(f"\n### {rows:,} tiny rows\n")
    table(tiny)
    print(f"\n### the last cycles ({rows - 5_000:,} of {rows:,} embedded, one memory type)\n")
    table(late)
    print(f"\n### two {huge / 1e6:.0f} MB memories\n")
    table(big)
    print(f"\nlongest vertex summary: {big[0]['longest_summary']:,} characters")
    every = tiny + late + big
    worst = max((seconds, step) for cycle in every for step, seconds in cycle["steps"].items())
    print(f"peak RSS of a cycle: {max(c['rss_mib'] for c in every):.0f} MiB; longest step: {worst[1]} {worst[0]:.1f} s")


if __name__ == "__main__":
    main()

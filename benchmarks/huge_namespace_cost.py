"""Huge inputs: a namespace's first cycles stay bounded in time and memory per step.

    python benchmarks/huge_namespace_cost.py              # 200,000 tiny rows, 6 cycles; two 10 MB memories
    python benchmarks/huge_namespace_cost.py --quick      # 50,000 rows, 3 cycles; two 1 MB memories
    python benchmarks/huge_namespace_cost.py --only catch-up long-lists   # sections 4 and 5 alone

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
4. **Step 6's catch-up after one bulk COPY** of 100,000 nodes (`--bulk-rows`), all written by
   one transaction, so the graph sync's cursor `(transaction id, node id)` sits inside that
   transaction's rows for the whole catch-up: step 6 alone, cycle after cycle, each cycle's
   seconds and nodes (CURATOR_GRAPH_BACKFILL_CAP a cycle, in batches of 1,000). Each cycle costs
   the same: the cursor starts its index range (store/graph.py: past_cursor). Before, the
   range started at the transaction's first row and each batch re-read every row before the
   cursor: 1.9, 3.8, 5.2, then 6.8 s for the same 20,000 nodes.
5. **Step 2 on long lists**: `compare_versions` (core/supersession.py) on two comma lists of
   1 to 8.7 KB, and step 2 run directly on a namespace of two 8.7 KB lists that differ in one
   value. Clause by clause, two lists cost the product of their clauses (4.6 s at 3 KB, 52 s at
   6.5 KB, one run 126 s at 8.7 KB); past MAX_CLAUSES_COMPARED clauses a pair is not compared
   (`too_long_to_compare`), so a pair costs at most what the cap's clauses cost.

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


def bulk_catch_up(url: str, conn, rows: int) -> list[dict]:
    """`rows` nodes COPYed in one transaction, then step 6 alone, cycle after cycle, at the
    default caps, until the graph has caught up: each cycle's seconds and nodes synced."""
    import uuid
    from types import SimpleNamespace

    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.config.steps import StepSettings
    from curation_pipeline.service.session import open_namespace_session
    from curation_pipeline.service.step_run import StepRun, run_step
    from curation_pipeline.service.steps.graph_sync import sync_graph

    copy_tiny_rows(conn, "bulk", rows)  # one COPY, one commit: one transaction id
    scale_data.analyze(conn)
    defaults = StepSettings.model_construct()
    config = SimpleNamespace(cap=defaults.graph_sync_cap, backfill_cap=defaults.graph_backfill_cap)
    measured, number = [], 0
    while True:
        number += 1
        with open_namespace_session(url, load_settings(), str(uuid.uuid4()), TENANT, "bulk",
                                    lock_timeout_s=5) as session:
            run = StepRun(session, session.scope("sync_graph"))
            started = time.perf_counter()
            counts = run_step(run, lambda r: sync_graph(r, config)).counts
            took = time.perf_counter() - started
        measured.append({"cycle": number, "seconds": took, "nodes": counts["nodes_considered"],
                         "batches": counts.get("batches", 1)})
        print(f"  cycle {number}: {counts['nodes_considered']:,} nodes in {counts.get('batches', 1)} batch(es),"
              f" {took:.1f} s ({1000 * took / max(counts['nodes_considered'], 1):.3f} ms a node)", flush=True)
        if counts["nodes_considered"] < config.backfill_cap or number >= 60:
            return measured


def long_lists(url: str, conn) -> None:
    """compare_versions on two comma lists of growing size, and step 2 on two 8.7 KB lists."""
    import uuid
    from types import SimpleNamespace

    from curation_pipeline.clients.embedders.lexical import LexicalEmbedder
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.config.steps import StepSettings
    from curation_pipeline.core import supersession
    from curation_pipeline.core.clauses import text_clauses
    from curation_pipeline.service.session import open_namespace_session
    from curation_pipeline.service.step_run import StepRun, run_step
    from curation_pipeline.service.steps.consolidate import consolidate_duplicates

    def price_list(size: int, changed: bool = False) -> str:
        items, k = [], 0
        while len(", ".join(items)) < size:
            items.append(f"item {k} costs {k * 7 % 97 + (1 if changed and k == 3 else 0)} euros")
            k += 1
        return "The price list: " + ", ".join(items) + "."

    print(f"at most {supersession.MAX_CLAUSES_COMPARED} clauses compared (MAX_CLAUSES_COMPARED)\n\n"
          "| list size (KB) | clauses | compared | verdict | compare_versions (s) |\n|---|---|---|---|---|")
    for size in (1_000, 2_000, 2_700, 3_000, 6_500, 8_700):
        older, newer = price_list(size), price_list(size, changed=True)
        clauses = sum(len(s.bounds) for s in text_clauses(older))
        started = time.perf_counter()
        check = supersession.compare_versions(older, newer)
        took = time.perf_counter() - started
        print(f"| {len(older) / 1000:.1f} | {clauses} | {'no (too long)' if check.too_long else 'yes'} "
              f"| {check.verdict} | {took:.2f} |", flush=True)
    embedder = LexicalEmbedder(scale_data.DIM)
    texts = [price_list(8_700), price_list(8_700, changed=True)]
    vectors = embedder.embed(texts)
    for days, text, vector in zip((9, 2), texts, vectors):
        conn.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary, embedding, embedding_model,"
                     " created_at) VALUES (%s, 'lists', %s, %s::vector, %s, now() - make_interval(days => %s))",
                     (TENANT, text, str([float(x) for x in vector]), embedder.name, days))
    conn.commit()
    d = StepSettings.model_construct()
    config = SimpleNamespace(
        similarity_threshold=d.similarity_threshold, cap=d.consolidate_cap, max_chars=d.merge_max_chars,
        in_database_search_max_changed=d.in_database_search_max_changed, max_archive_fraction=d.max_archive_fraction,
        judge_band_low=d.judge_band_low, update_min_similarity=d.update_min_similarity,
        supersede_cap=d.supersede_cap, judge_cap=d.judge_cap, search_max_changed=d.search_max_changed)
    with open_namespace_session(url, load_settings(), str(uuid.uuid4()), TENANT, "lists", lock_timeout_s=5) as session:
        run = StepRun(session, session.scope("consolidate_duplicates"))
        started = time.perf_counter()
        counts = run_step(run, lambda r: consolidate_duplicates(r, config, model=embedder.name, llm=None)).counts
        took = time.perf_counter() - started
    print(f"\nstep 2 on two {len(texts[0]) / 1000:.1f} KB lists (one value apart): {took:.1f} s; "
          f"pairs compared {counts.get('pairs_compared')}, too long to compare {counts.get('too_long_to_compare')}, "
          f"superseded {counts.get('superseded')}, merged {counts.get('pairs_merged')}")


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


SECTIONS = ("cycles", "catch-up", "long-lists")  # 1-3, 4, 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 rows, 3 cycles; two 1 MB memories")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--cycles", type=int)
    parser.add_argument("--bulk-rows", type=int, default=100_000, help="rows of the bulk COPY (section 4)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="these sections alone")
    args = parser.parse_args()
    sections = args.only or SECTIONS
    rows = args.rows or (50_000 if args.quick else 200_000)
    count = args.cycles or (3 if args.quick else 6)
    huge = 1_000_000 if args.quick else 10_000_000

    url = scale_data.fresh_store()
    from curation_pipeline.store.database import open_connection

    print(f"# huge inputs ({os.cpu_count()} cores); the lexical embedder, every cap at its default")
    with open_connection(url) as conn:
        if "catch-up" in sections:
            print(f"\n## Step 6's catch-up after one bulk COPY of {args.bulk_rows:,} nodes (one transaction)")
            caught = bulk_catch_up(url, conn, args.bulk_rows)
            full = [c["seconds"] for c in caught if c["nodes"] == caught[0]["nodes"]]
            print(f"full cycles: first {full[0]:.1f} s, last {full[-1]:.1f} s (last/first {full[-1] / full[0]:.2f})")
        if "long-lists" in sections:
            print("\n## Step 2 on long lists")
            long_lists(url, conn)
        if "cycles" not in sections:
            return
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

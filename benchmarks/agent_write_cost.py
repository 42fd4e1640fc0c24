"""What the activity clocks (sql/015) cost the agents that write memory.

    python benchmarks/agent_write_cost.py [--writers 8] [--inserts 300] [--batches 10]

Every write to memory_nodes that is not the curator's moves its namespaces' activity clock in
the same transaction, once per statement. This measures the agents' side of that, on a fresh
embedded Postgres, each workload with the clock triggers disabled, with them counting every
statement (curation.clock_granularity_ms = 0), and as shipped (a clock moved less than 100 ms
ago is left alone, which is what keeps writers of one namespace from queueing on its row):

  - single-row INSERTs (autocommit) from `--writers` concurrent connections into one namespace;
  - the same into one namespace per writer;
  - 1,000-row INSERT statements (`--batches` per writer) from the same writers, one namespace.

Prints a table of inserts per second and per-statement latency (median and 99th percentile).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import scale_data

MODES = {
    "no clock trigger": None,
    "every statement (0 ms)": 0,
    "as shipped (100 ms)": 100,
}
_TEXT = "The customer asked for the invoice of March to be sent again, to the billing address on file."


def _writer(url: str, granularity: int | None, namespace: str, statements: int, rows: int,
            start: threading.Barrier, latencies: list[float]) -> None:
    from curation_pipeline.store.database import open_connection

    with open_connection(url, vector=False, autocommit=True) as conn:
        if granularity is not None:
            conn.execute(f"SET curation.clock_granularity_ms = {int(granularity)}")
        start.wait()
        for index in range(statements):
            began = time.perf_counter()
            if rows == 1:
                conn.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary) VALUES ('bench', %s, %s)",
                             (namespace, f"{_TEXT} #{index}"))
            else:
                conn.execute("INSERT INTO memory_nodes (tenant_id, namespace, pointer_summary)"
                             " SELECT 'bench', %s, %s || n FROM generate_series(1, %s) AS n",
                             (namespace, f"{_TEXT} #{index}.", rows))
            latencies.append(time.perf_counter() - began)


def _run(url: str, granularity: int | None, namespaces: list[str], statements: int, rows: int) -> dict:
    from curation_pipeline.store.database import open_connection

    with open_connection(url, vector=False, autocommit=True) as conn:
        conn.execute("TRUNCATE memory_nodes, namespace_activity CASCADE")
        action = "DISABLE" if granularity is None else "ENABLE"
        for trigger in ("memory_nodes_clock_on_insert", "memory_nodes_clock_on_update", "memory_nodes_stamp_epoch"):
            conn.execute(f"ALTER TABLE memory_nodes {action} TRIGGER {trigger}")
        conn.execute("CHECKPOINT")
    start = threading.Barrier(len(namespaces) + 1)
    latencies: list[list[float]] = [[] for _ in namespaces]
    threads = [threading.Thread(target=_writer, args=(url, granularity, namespace, statements, rows, start, mine))
               for namespace, mine in zip(namespaces, latencies)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    every = sorted(latency for mine in latencies for latency in mine)
    with open_connection(url, vector=False, autocommit=True) as conn:
        epochs = conn.execute("SELECT coalesce(sum(current_epoch), 0) FROM namespace_activity").fetchone()[0]
        conn.execute("ALTER TABLE memory_nodes ENABLE TRIGGER ALL")
    return {
        "rows_per_s": len(every) * rows / elapsed,
        "p50_ms": statistics.median(every) * 1000,
        "p99_ms": every[min(len(every) - 1, int(len(every) * 0.99))] * 1000,
        "clock_moves": epochs,
        "statements": len(every),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--inserts", type=int, default=300, help="single-row inserts per writer")
    parser.add_argument("--batches", type=int, default=10, help="1,000-row inserts per writer")
    args = parser.parse_args()
    url = scale_data.fresh_store()
    workloads = [
        (f"1-row inserts, {args.writers} writers, 1 namespace", ["shared"] * args.writers, args.inserts, 1),
        (f"1-row inserts, {args.writers} writers, {args.writers} namespaces",
         [f"ns{index}" for index in range(args.writers)], args.inserts, 1),
        (f"1,000-row inserts, {args.writers} writers, 1 namespace", ["shared"] * args.writers, args.batches, 1000),
    ]
    print("| workload | clock | rows/s | p50 ms | p99 ms | clock moves / statements |")
    print("|---|---|---:|---:|---:|---:|")
    for label, namespaces, statements, rows in workloads:
        for mode, granularity in MODES.items():
            figures = _run(url, granularity, namespaces, statements, rows)
            print(f"| {label} | {mode} | {figures['rows_per_s']:,.0f} | {figures['p50_ms']:.2f} |"
                  f" {figures['p99_ms']:.2f} | {figures['clock_moves']:,} / {figures['statements']:,} |", flush=True)


if __name__ == "__main__":
    main()

"""The first pass over a large namespace: step 2's full pair search in bounded memory, against
the bare blocked product, and whether an approximate index (pgvector HNSW) would pay off.

    python benchmarks/first_pass_cost.py             # 1,000,000 nodes, 20 memory types (~30 minutes)
    python benchmarks/first_pass_cost.py --quick     # 100,000 nodes
    python benchmarks/first_pass_cost.py --embedders-only   # only part 0, the cost of embedding

0. Embedding: before step 2 can compare anything, step 4 embeds every node. Each embedder
   (lexical; onnx-minilm, the default; sentence-transformers' all-MiniLM-L6-v2 when installed)
   embeds the same agent memories (the demo corpus, several seeds) in a fresh process, in batches
   of CURATOR_EMBED_BATCH_SIZE as step 4 sends them: CPU seconds per 1,000 nodes (all the
   process's threads), wall seconds, the model's load, and the process's peak RSS.

1. One namespace, 20 memory types, 2% near-duplicates (cosine ~0.97) within a memory type. Step
   2's full pass (service/similar_pairs.py: the namespace streamed by memory type) runs in a
   fresh process that has imported the job's code, like a run process: its time and peak RSS.
   Reference, same run: the bare blocked product (the same upper-triangle tiles per memory
   type, nothing kept), and a brute-force check in float64 of every pair of 300 sampled nodes.
2. HNSW (pgvector) at two sizes of one memory type: build time, time per query (the 10 nearest
   neighbours of each sampled node) and recall of the pairs above the threshold, against the
   exact search of the same rows in the same run; then where its cost per node would meet the
   exact search's, which grows with the size of a memory type.

Prints figures; asserts nothing but the references.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
import scale_data
from psycopg import sql

TENANT = "bench"
THRESHOLD = 0.92
MODEL = scale_data.LEXICAL_MODEL

CHILD = """
import json, time
import curation_pipeline.defs.definitions  # what a run process has loaded before its first step
from curation_pipeline.core.scope import Scope
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.core.steps.incremental import PassStart
from curation_pipeline.service.similar_pairs import search_pairs
from curation_pipeline.store.database import open_connection
scope = Scope("bench", {tenant!r}, {namespace!r}, "consolidate_duplicates")
full = PassStart(False, frozenset(), SyncPosition(), SyncPosition(), {{}})
with open_connection({url!r}) as conn, conn.transaction():
    began = time.perf_counter()
    search = search_pairs(conn, scope, full, model={model!r}, threshold={threshold!r}, in_database_max_changed=0)
    seconds = time.perf_counter() - began
ids = search.nodes["id"]
pairs = [sorted(pair) for pair in zip(ids.gather(search.pairs["i"]), ids.gather(search.pairs["j"]))]
print(json.dumps({{"seconds": seconds, "compared": search.compared, "pairs": pairs}}))
"""


EMBED_CHILD = """
import json, time
from datetime import datetime, timezone
began_cpu, began = time.process_time(), time.perf_counter()
from curation_pipeline.clients.embedders.factory import make_embedder
from curation_pipeline.config.embedder import load_embedder_settings
from curation_pipeline.config.settings import load_settings
from curation_pipeline.demo.corpus import generate_seed_corpus
texts, seed = [], 0
while len(texts) < {count}:
    nodes, _ = generate_seed_corpus(now=datetime(2026, 1, 1, tzinfo=timezone.utc), seed=seed)
    texts += [node["pointer_summary"] for node in nodes]
    seed += 1
texts = texts[:{count}]
batch = load_settings().embed_batch_size
embedder = make_embedder(load_embedder_settings(), batch_size=batch)
embedder.embed(["warm up: the model loads on first use"])
load_cpu, load_s = time.process_time() - began_cpu, time.perf_counter() - began
began_cpu, began = time.process_time(), time.perf_counter()
for start in range(0, len(texts), batch):
    embedder.embed(texts[start:start + batch])
print(json.dumps({{"name": embedder.name, "cpu": time.process_time() - began_cpu, "wall": time.perf_counter() - began,
                  "load_cpu": load_cpu, "load_s": load_s, "chars": sum(map(len, texts)) / len(texts)}}))
"""
EMBEDDERS = ("lexical", "onnx-minilm", "sentence-transformers")


def embedding_cost(count: int) -> list[tuple[str, dict | str, float]]:
    """(CURATION_EMBEDDER, figures or why not measured, peak RSS in MiB) of each embedder."""
    rows = []
    for provider in EMBEDDERS:
        try:
            peak_mib, out = scale_data.in_child(EMBED_CHILD.format(count=count), env={"CURATION_EMBEDDER": provider})
        except RuntimeError as error:  # sentence-transformers is not installed: say so, go on
            rows.append((provider, str(error).strip().splitlines()[-1], 0.0))
            continue
        rows.append((provider, json.loads(out.strip().splitlines()[-1]), peak_mib))
    return rows


def print_embedding_cost(count: int) -> None:
    rows = embedding_cost(count)
    print(f"\n## Embedding the nodes first (step 4): {count:,} agent memories of the demo corpus, one fresh process each\n")
    print("| CURATION_EMBEDDER | recorded as | CPU-s per 1,000 nodes | wall s per 1,000 nodes | model load (CPU-s) | peak RSS of the process (MiB) |")
    print("|---|---|---|---|---|---|")
    for provider, figures, peak_mib in rows:
        if isinstance(figures, str):
            print(f"| {provider} | not measured: {figures} | | | | |")
            continue
        per = 1000 / count
        print(f"| {provider} | `{figures['name']}` | {figures['cpu'] * per:.2f} | {figures['wall'] * per:.2f} "
              f"| {figures['load_cpu']:.1f} | {peak_mib:.0f} |")
    chars = next((f["chars"] for _, f, _ in rows if not isinstance(f, str)), 0)
    print(f"\n(texts of {chars:.0f} characters on average; CPU seconds count every thread of the process)")


def group_sizes(conn, namespace: str) -> list[int]:
    return [row[0] for row in conn.execute(
        "SELECT count(*) FROM memory_nodes WHERE tenant_id = %s AND namespace = %s GROUP BY memory_type",
        (TENANT, namespace))]


def bare_blocked_product(sizes: list[int], measured_groups: int) -> float:
    """Seconds of the upper-triangle tile products of groups of these sizes (as the search's
    tiles), measured on `measured_groups` of them and scaled by the sum of squared sizes."""
    from curation_pipeline.core.steps.similarity import BLOCK_ROWS as block

    rng = np.random.default_rng(1)
    measured = sorted(sizes, reverse=True)[:measured_groups]
    began = time.perf_counter()
    for size in measured:
        unit = scale_data.unit_vectors(rng, size)
        for start in range(0, size, block):
            rows = unit[start : start + block]
            for column in range(start, size, block):
                rows @ unit[column : column + block].T
    seconds = time.perf_counter() - began
    return seconds * sum(s * s for s in sizes) / sum(s * s for s in measured)


def stream(conn, namespace: str, extra: str = "", params=()):
    """(ids, memory types, float32 vectors) of a namespace, block by block (binary COPY)."""
    from curation_pipeline.store.candidates import _decode_vectors

    batch = []
    with conn.cursor(binary=True).copy(
        f"COPY (SELECT id::text, memory_type, vector_send(embedding) FROM memory_nodes"
        f" WHERE tenant_id = %s AND namespace = %s {extra}) TO STDOUT WITH (FORMAT BINARY)",
        (TENANT, namespace, *params),
    ) as copy:
        copy.set_types(["text", "text", "bytea"])
        for row in copy.rows():
            batch.append(row)
            if len(batch) == 50_000:
                yield _columns(batch, _decode_vectors)
                batch = []
    if batch:
        yield _columns(batch, _decode_vectors)


def _columns(batch, decode):
    ids, kinds, raw = zip(*batch)
    return np.array(ids), np.array(kinds), decode(list(raw))


def brute_force_sample(conn, namespace: str, found: set, sample: int = 300) -> str:
    """Every pair of `sample` random nodes, in float64 against every node of their memory type:
    the search must have found exactly those (pairs within 1e-6 of the threshold excepted)."""
    rows = conn.execute(
        "SELECT id::text, memory_type, vector_send(embedding) FROM memory_nodes"
        " WHERE tenant_id = %s AND namespace = %s ORDER BY random() LIMIT %s", (TENANT, namespace, sample),
    ).fetchall()
    from curation_pipeline.store.candidates import _decode_vectors

    sample_ids, sample_types = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    sample_unit = _decode_vectors([r[2] for r in rows]).astype(np.float64)
    sample_unit /= np.linalg.norm(sample_unit, axis=1, keepdims=True)
    expected, borderline = set(), set()
    for ids, kinds, vectors in stream(conn, namespace):
        unit = vectors.astype(np.float64)
        unit /= np.linalg.norm(unit, axis=1, keepdims=True)
        similarity = sample_unit @ unit.T
        same = sample_types[:, None] == kinds[None, :]
        for r, c in zip(*np.nonzero(same & (similarity > THRESHOLD - 1e-6))):
            if sample_ids[r] == ids[c]:
                continue
            pair = tuple(sorted((sample_ids[r], ids[c])))
            (expected if similarity[r, c] > THRESHOLD + 1e-6 else borderline).add(pair)
    conn.commit()
    sampled = set(sample_ids)
    found_here = {pair for pair in found if pair[0] in sampled or pair[1] in sampled} - borderline
    ok = "all found, none extra" if found_here == expected else \
        f"{len(expected - found_here)} missed, {len(found_here - expected)} extra"
    return f"{len(rows)} sampled nodes, {len(expected)} pairs: {ok}"


def hnsw_at(conn, url: str, n: int, rng, samples: int = 1000) -> dict:
    """HNSW against the exact search for one memory type of n nodes (2% near-duplicates)."""
    from curation_pipeline.core.steps.similarity import find_similar_pairs

    namespace = f"hnsw-{n}"
    make = scale_data.grouped_duplicates(rng, 1)
    scale_data.seed_namespace(conn, TENANT, namespace, n, model=MODEL, types=1, vectors=make)
    scale_data.analyze(conn)
    ids, _, vectors = (np.concatenate(parts) for parts in zip(*stream(conn, namespace)))
    began = time.perf_counter()
    exact = find_similar_pairs(vectors, np.zeros(len(ids), dtype=np.int64), threshold=THRESHOLD)
    exact_s = time.perf_counter() - began
    exact_pairs = {tuple(sorted((ids[i], ids[j]))) for i, j in zip(exact["i"], exact["j"])}
    chosen = rng.choice(len(ids), size=min(samples, len(ids)), replace=False)
    sample_ids = set(ids[chosen])

    conn.commit()
    autocommit = conn.autocommit
    conn.autocommit = True
    conn.execute("SET maintenance_work_mem = '2GB'")  # the graph fits: no slow spill during the build
    began = time.perf_counter()
    conn.execute(sql.SQL(  # an index predicate takes no parameters: the names go in as literals
        "CREATE INDEX {} ON memory_nodes USING hnsw (embedding vector_cosine_ops)"
        " WHERE tenant_id = {} AND namespace = {}"
    ).format(sql.Identifier(f"bench_hnsw_{n}"), sql.Literal(TENANT), sql.Literal(namespace)))
    build_s = time.perf_counter() - began
    conn.autocommit = autocommit
    began = time.perf_counter()
    neighbours = conn.execute(
        """
        SELECT q.id::text, n.id::text, 1 - (q.embedding <=> n.embedding)
        FROM memory_nodes q CROSS JOIN LATERAL (
            SELECT id, embedding FROM memory_nodes
            WHERE tenant_id = %(t)s AND namespace = %(n)s
            ORDER BY embedding <=> q.embedding LIMIT 10) n
        WHERE q.id = ANY(%(ids)s::uuid[]) AND n.id <> q.id
        """,
        {"t": TENANT, "n": namespace, "ids": list(sample_ids)},
    ).fetchall()
    query_s = (time.perf_counter() - began) / len(sample_ids)
    conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(f"bench_hnsw_{n}")))
    conn.commit()
    approximate = {tuple(sorted((a, b))) for a, b, sim in neighbours if sim > THRESHOLD}
    wanted = {pair for pair in exact_pairs if pair[0] in sample_ids or pair[1] in sample_ids}
    recall = len(approximate & wanted) / len(wanted) if wanted else 1.0
    return {"n": n, "exact_s": exact_s, "build_s": build_s, "query_s": query_s, "recall": recall,
            "pairs": len(wanted)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 nodes; HNSW at 10,000 and 30,000")
    parser.add_argument("--nodes", type=int)
    parser.add_argument("--types", type=int, default=20)
    parser.add_argument("--hnsw-sizes", type=int, nargs="*")
    parser.add_argument("--embed-nodes", type=int, default=2000, help="texts each embedder embeds (part 0)")
    parser.add_argument("--embedders-only", action="store_true", help="only part 0: the cost of embedding")
    args = parser.parse_args()
    print(f"# first pass ({os.cpu_count()} cores, numpy {np.__version__})")
    print_embedding_cost(args.embed_nodes)
    if args.embedders_only:
        return
    n = args.nodes or (100_000 if args.quick else 1_000_000)
    hnsw_sizes = args.hnsw_sizes if args.hnsw_sizes is not None else \
        ([10_000, 30_000] if args.quick else [20_000, 100_000])

    url = scale_data.fresh_store()
    from curation_pipeline.store.database import open_connection

    rng = np.random.default_rng(17)
    namespace = f"first-{n}"
    print(f"\n# step 2's first pass: {n:,} nodes, {args.types} memory types")
    with open_connection(url) as conn:
        began = time.perf_counter()
        scale_data.seed_namespace(conn, TENANT, namespace, n, types=args.types,
                                  vectors=scale_data.grouped_duplicates(rng, args.types))
        scale_data.analyze(conn)
        print(f"seeded in {time.perf_counter() - began:.0f} s")
        peak_mib, out = scale_data.in_child(CHILD.format(
            tenant=TENANT, namespace=namespace, url=url, model=MODEL, threshold=THRESHOLD))
        run = json.loads(out.strip().splitlines()[-1])
        found = {tuple(pair) for pair in run["pairs"]}
        sizes = group_sizes(conn, namespace)
        bare_s = bare_blocked_product(sizes, measured_groups=min(4, len(sizes)))
        check = brute_force_sample(conn, namespace, found)
        hnsw = [hnsw_at(conn, url, size, rng) for size in hnsw_sizes]

    print(f"\n## Step 2's first pass: {n:,} nodes in {len(sizes)} memory types (largest {max(sizes):,})\n")
    print("| search | time (s) | bare blocked product (s) | ratio | peak RSS of the process (MiB) | pairs | reference |")
    print("|---|---|---|---|---|---|---|")
    print(f"| streamed by memory type | {run['seconds']:.1f} | {bare_s:.1f} | {run['seconds'] / bare_s:.2f}x "
          f"| {peak_mib:.0f} | {len(found):,} | brute force: {check} |")

    if not hnsw:
        return
    print("\n## HNSW (pgvector, m=16, ef_construction=64, ef_search=40) against the exact search, one memory type\n")
    print("| nodes | exact search (s) | exact per node (ms) | HNSW build (s) | query (ms) | HNSW per node (ms) "
          "| recall of the pairs of 1,000 sampled nodes |")
    print("|---|---|---|---|---|---|---|")
    for h in hnsw:
        per_node = (h["build_s"] / h["n"] + h["query_s"]) * 1000
        print(f"| {h['n']:,} | {h['exact_s']:.2f} | {h['exact_s'] / h['n'] * 1000:.3f} | {h['build_s']:.1f} "
              f"| {h['query_s'] * 1000:.2f} | {per_node:.2f} | {h['recall']:.3f} ({h['pairs']} pairs) |")
    # The exact search's cost per node grows with the size of the memory type (n x n / 2 products);
    # HNSW's grows with log n (a graph walk per insert and per query).
    last = hnsw[-1]
    exact_per_node = last["exact_s"] / last["n"]
    hnsw_per_node = last["build_s"] / last["n"] + last["query_s"]

    def gap(size: float) -> float:
        return exact_per_node * size / last["n"] - hnsw_per_node * math.log(size) / math.log(last["n"])

    low, high = float(last["n"]), float(last["n"])
    while gap(high) < 0:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if gap(middle) < 0 else (low, middle)
    print(f"\nCrossover (extrapolated from {last['n']:,}): HNSW would cost less per node than the exact "
          f"search from about {high:,.0f} nodes in one memory type; the largest here is {max(sizes):,}.")


if __name__ == "__main__":
    main()

"""Incremental passes stream: k changed nodes against a large namespace, in bounded memory.

    python benchmarks/streamed_search_cost.py            # 1,000,000 nodes, k = 1,000 (~10 minutes)
    python benchmarks/streamed_search_cost.py --quick    # 100,000 nodes

One namespace (20 memory types, 384-d vectors of a semantic model, so step 6b runs too) whose
last passes were complete; then k nodes change: a third become near-duplicates of another node
of their memory type (step 2 pairs), a third similar ones (step 6b's band), a third new random
vectors. Measured:

- in a fresh process that has loaded the job, as a run process has: steps 2 and 6b's searches
  (service/similar_pairs.py) and the floor, taking turns (medians): a bare binary COPY of the
  namespace's vectors (what any search must read) plus the bare k x N float32 product in the
  same blocks (what an exact search must compute, before any grouping); then the real cycle:
  the steps' times in it and the process's peak RSS;
- the reference: steps 2 and 6b's pairs from the streamed search (service/similar_pairs.py)
  against the in-memory search (all vectors loaded, core/steps/similarity.py), same snapshot.

Prints figures; asserts nothing but that reference.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import scale_data

TENANT = "bench"


def change_nodes(conn, namespace: str, k: int, rng: np.random.Generator) -> None:
    """k nodes get new vectors: near-duplicates, similar ones, random ones (a third each)."""
    from pgvector import Vector

    from curation_pipeline.store.candidates import _decode_vectors

    rows = conn.execute(
        "SELECT id::text, memory_type, vector_send(embedding) FROM memory_nodes"
        " WHERE tenant_id = %s AND namespace = %s ORDER BY random() LIMIT %s",
        (TENANT, namespace, 2 * k),
    ).fetchall()
    changed, sources = rows[:k], rows[k:]
    source_vectors = _decode_vectors([row[2] for row in sources])
    # cosine 1/sqrt(1 + s^2 d): s = 0.0128 gives ~0.97 (a duplicate), s = 0.0316 ~0.85 (a concept).
    noise = np.where(np.arange(k)[:, None] < k // 3, 0.0128, 0.0316).astype(np.float32)
    new = source_vectors + rng.standard_normal(source_vectors.shape, dtype=np.float32) * noise
    new[2 * k // 3:] = scale_data.unit_vectors(rng, k - 2 * k // 3)
    conn.execute(
        "UPDATE memory_nodes m SET embedding = v.e, memory_type = v.t"
        " FROM unnest(%s::uuid[], %s::vector[], %s::text[]) AS v(id, e, t) WHERE m.id = v.id",
        ([row[0] for row in changed], [Vector(vector) for vector in new],
         [source[1] for source in sources]),
    )
    conn.commit()


def floor(conn, namespace: str, k: int, model: str) -> tuple[float, float]:
    """(a bare binary COPY of the namespace's searched vectors, the bare k x N product in the
    stream's blocks), seconds."""
    from curation_pipeline.store.candidates import STREAM_BLOCK_ROWS

    start = time.perf_counter()
    rows = 0
    with conn.cursor().copy(
        "COPY (SELECT embedding FROM memory_nodes WHERE tenant_id = %s AND namespace = %s"
        " AND archived_at IS NULL AND embedding IS NOT NULL AND embedding_model = %s)"
        " TO STDOUT WITH (FORMAT BINARY)", (TENANT, namespace, model),
    ) as copy:
        for _ in copy:
            rows += 1
    copy_s = time.perf_counter() - start
    conn.commit()
    n = conn.execute("SELECT count(*) FROM memory_nodes WHERE tenant_id = %s AND namespace = %s",
                     (TENANT, namespace)).fetchone()[0]
    rng = np.random.default_rng(0)
    focus = scale_data.unit_vectors(rng, k)
    block = scale_data.unit_vectors(rng, STREAM_BLOCK_ROWS)
    start = time.perf_counter()
    for _ in range(n // STREAM_BLOCK_ROWS):
        focus @ block.T
    product_s = (time.perf_counter() - start) * n / (n // STREAM_BLOCK_ROWS * STREAM_BLOCK_ROWS)
    return copy_s, product_s


def reference(conn, namespace: str, model: str) -> dict:
    """Per step: (the streamed search's id pairs, the in-memory search's, seconds and peak MiB of
    the in-memory one), from the same committed state."""
    from curation_pipeline.core.scope import Scope
    from curation_pipeline.core.steps.consolidate import group_of_row
    from curation_pipeline.core.steps.similarity import find_similar_pairs
    from curation_pipeline.service.similar_pairs import search_pairs
    from curation_pipeline.store import candidates, passes

    out = {}
    for step, params, same_type, threshold in (
        ("consolidate_duplicates", "consolidate", True, 0.92),
        ("associate_concepts", "associate", False, 0.80),
    ):
        scope = Scope("reference", TENANT, namespace, step)
        with conn.transaction():
            state = conn.execute(f"SELECT {params}_params FROM namespace_activity WHERE tenant_id = %s"
                                 " AND namespace = %s", (TENANT, namespace)).fetchone()[0]
            start = passes.begin_pass(conn, scope, params, state, max_changed=10**9)  # every changed node
            streamed = search_pairs(conn, scope, start, model=model, threshold=threshold,
                                    in_database_max_changed=0, same_memory_type=same_type)
            before = scale_data.own_peak_rss_mib()
            began = time.perf_counter()
            nodes, vectors = candidates.consolidation_candidates(conn, scope, model)
            groups = group_of_row(nodes) if same_type else np.zeros(nodes.height, dtype=np.int64)
            focus = nodes["id"].is_in(list(start.changed)).to_numpy()
            memory = find_similar_pairs(vectors, groups, threshold=threshold, focus=focus)
            in_memory_s = time.perf_counter() - began
            del vectors
        peak = scale_data.own_peak_rss_mib()
        ids = nodes["id"]
        memory_pairs = {tuple(sorted(p)) for p in zip(ids.gather(memory["i"]), ids.gather(memory["j"]))}
        s_ids = streamed.nodes["id"]
        streamed_pairs = {tuple(sorted(p)) for p in zip(s_ids.gather(streamed.pairs["i"]),
                                                        s_ids.gather(streamed.pairs["j"]))}
        out[step] = (streamed_pairs, memory_pairs, in_memory_s, max(peak - before, 0))
    return out


def timed_searches(conn, namespace: str, model: str) -> dict:
    """Seconds of steps 2 and 6b's searches as the steps run them (the pass they would start)."""
    from curation_pipeline.core.scope import Scope
    from curation_pipeline.service.similar_pairs import search_pairs
    from curation_pipeline.store import passes

    seconds = {}
    for step, prefix, same_type, threshold in (
        ("consolidate_duplicates", "consolidate", True, 0.92), ("associate_concepts", "associate", False, 0.80),
    ):
        scope = Scope("bench", TENANT, namespace, step)
        with conn.transaction():
            params = conn.execute(f"SELECT {prefix}_params FROM namespace_activity WHERE tenant_id = %s"
                                  " AND namespace = %s", (TENANT, namespace)).fetchone()[0]
            began = time.perf_counter()
            search_pairs(conn, scope, passes.begin_pass(conn, scope, prefix, params, max_changed=10**9), model=model,
                         threshold=threshold, in_database_max_changed=0, same_memory_type=same_type)
            seconds[step] = time.perf_counter() - began
    return seconds


def in_run_process(url: str, namespace: str, k: int, model: str, repeats: int) -> None:
    """In a fresh process that has loaded the job (a run process): the floor and both searches,
    taking turns `repeats` times (medians: they see the same load of a shared machine), then one
    real cycle. Prints one JSON line."""
    import dagster as dg

    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.store.database import open_connection
    defs = load_defs()

    samples: dict[str, list[float]] = {}
    with open_connection(url) as conn:
        for _ in range(repeats):
            copy_s, product_s = floor(conn, namespace, k, model)
            for name, value in (("copy", copy_s), ("product", product_s), *timed_searches(conn, namespace, model).items()):
                samples.setdefault(name, []).append(value)
    key = f"{TENANT}:{namespace}"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("namespaces", [key])
        began = time.perf_counter()
        result = defs.resolve_job_def("curate_namespace").execute_in_process(
            partition_key=key, instance=instance, run_config=scale_data.QUIET)
        total = time.perf_counter() - began
        steps = {s.step_key.removeprefix("memory_namespace."): s.end_time - s.start_time for s in instance.get_run_step_stats(result.run_id)}
        meta = {e.step_key.removeprefix("memory_namespace."): {name: value.value for name, value in e.event_specific_data.metadata.items()
                             if isinstance(value.value, (int, float, str))}
                for e in result.all_events if e.is_successful_output}
    print(json.dumps({"medians": {name: statistics.median(values) for name, values in samples.items()},
                      "total": total, "steps": steps, "meta": meta}))


CHILD = """
import sys
sys.path.insert(0, {here!r})
import streamed_search_cost
streamed_search_cost.in_run_process({url!r}, {namespace!r}, {k!r}, {model!r}, {repeats!r})
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 nodes")
    parser.add_argument("--nodes", type=int)
    parser.add_argument("--changed", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = args.nodes or (100_000 if args.quick else 1_000_000)
    k = args.changed

    os.environ.update(scale_data.SEMANTIC_ENV)
    url = scale_data.fresh_store()
    import dagster as dg

    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.store.database import open_connection
    defs = load_defs()

    model = scale_data.SEMANTIC_MODEL
    job = defs.resolve_job_def("curate_namespace")
    rng = np.random.default_rng(5)
    print(f"# streamed incremental search ({os.cpu_count()} cores, numpy {np.__version__}): "
          f"{n:,} nodes, {k:,} changed")
    with open_connection(url) as conn:
        # A small namespace's real full passes give the state a complete pass leaves.
        scale_data.seed_namespace(conn, TENANT, "state", 200, model=model,
                                  vectors=lambda size: scale_data.unit_vectors(rng, size))
        with dg.instance_for_test() as instance:
            instance.add_dynamic_partitions("namespaces", [f"{TENANT}:state"])
            assert job.execute_in_process(partition_key=f"{TENANT}:state", instance=instance,
                                          run_config=scale_data.QUIET).success
        namespace = f"big-{n}"
        began = time.perf_counter()
        scale_data.seed_namespace(conn, TENANT, namespace, n, model=model,
                                  vectors=lambda size: scale_data.unit_vectors(rng, size))
        scale_data.analyze(conn)
        scale_data.mark_graph_synced(conn, TENANT, namespace)
        scale_data.copy_pass_state(conn, TENANT, "state", namespace)
        print(f"seeded in {time.perf_counter() - began:.0f} s")
        change_nodes(conn, namespace, k, rng)

        refs = reference(conn, namespace, model)
        peak_mib, out = scale_data.in_child(CHILD.format(
            here=os.path.dirname(os.path.abspath(__file__)), url=url, namespace=namespace, k=k, model=model,
            repeats=args.repeats))
        run = json.loads(out.strip().splitlines()[-1])

    medians = run["medians"]
    floor_s = medians["copy"] + medians["product"]
    print(f"\n## {k:,} changed nodes in a namespace of {n:,} (in a fresh run process; medians of "
          f"{args.repeats}, floor and searches taking turns)\n")
    print("| step | pass | search (s) | floor: COPY + k x N product (s) | ratio | the step in a real cycle (s) "
          "| nodes compared | pairs | same pairs as the in-memory search | in-memory search incl. load (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for step in ("consolidate_duplicates", "associate_concepts"):
        streamed, memory, in_memory_s, _ = refs[step]
        meta = run["meta"].get(step, {})
        same = "yes" if streamed == memory else f"no: {len(streamed ^ memory)} differ"
        print(f"| {step} | {meta.get('pass')} | {medians[step]:.2f} | {medians['copy']:.2f} + "
              f"{medians['product']:.2f} = {floor_s:.2f} | {medians[step] / floor_s:.2f}x "
              f"| {run['steps'][step]:.2f} | {meta.get('nodes_compared', 0):,} | {len(streamed):,} | {same} "
              f"| {in_memory_s:.2f} |")
    print(f"\nwhole cycle {run['total']:.2f} s; peak RSS of the run process {peak_mib:.0f} MiB "
          f"(target < 1024); the in-memory search of the reference needed "
          f"{max(r[3] for r in refs.values()):.0f} MiB more in its process")


if __name__ == "__main__":
    main()

"""What CURATOR_LLM_CONCURRENCY buys: steps 2 and 3 against an LLM that takes 1 s per answer.

    python benchmarks/llm_concurrency.py                  # concurrency 1, 4 and 8 (about 2 minutes)
    python benchmarks/llm_concurrency.py --levels 8 16    # other levels

Seeds one namespace per level with 20 duplicate pairs and 30 verbose nodes in a fresh embedded
Postgres (a temporary CURATION_HOME), points the LLM path at our stub server
(curation_pipeline_tests/support/llm_stub.py) answering every request after exactly 1 s, runs
steps 2 and 3 through the real job and prints each step's wall time (Dagster's step stats: load,
LLM pass and apply) next to the ideal, ceil(calls / concurrency) x 1 s. Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import scale_data

from curation_pipeline.defs.job import step_run_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the stub lives with the tests

LATENCY_SECS = 1.0
MERGES, SUMMARIES = 20, 30
DIM = 384
STEPS = ("consolidate_duplicates", "summarize_verbose")
_FILLER = ("The meeting covered many general topics in a long and friendly conversation, and everyone "
           "agreed that the team should keep talking about it at a later date. ") * 4


def _rows(namespace: str, model: str, rng: np.random.Generator) -> list[dict]:
    """20 planted near-duplicate pairs (cosine ~0.99) and 30 verbose nodes of another type."""
    now = datetime.now(UTC)

    def row(text: str, vector: np.ndarray, memory_type: str, **columns) -> dict:
        return {"id": str(uuid.uuid4()), "tenant_id": "bench", "namespace": namespace,
                "memory_type": memory_type, "pointer_summary": text, "embedding": vector.astype(np.float32),
                "embedding_model": model, "base_utility": 0.5, "heat": 0.0, "pinned": False,
                "recall_count": 5, "last_recalled_at": now - timedelta(days=1), "epoch": 0,
                "confidence": "default", "archived_at": None, "merged_into": None,
                "created_at": now - timedelta(days=2), "updated_at": None, **columns}

    rows = []
    for i in range(MERGES):
        vector = rng.normal(size=DIM)
        twin = vector + rng.normal(scale=0.05, size=DIM)
        keeper = f"Customer {i} prefers email over phone calls. The account was opened on 2024-01-{i + 1:02d}."
        rows += [row(keeper, vector / np.linalg.norm(vector), "semantic", base_utility=0.9),
                 row(f"{keeper} Invoices go to billing{i}@acme.example.", twin / np.linalg.norm(twin), "semantic")]
    for i in range(SUMMARIES):
        vector = rng.normal(size=DIM)
        text = f"The review number {i} with Globex took place on 2024-06-{i % 28 + 1:02d}. {_FILLER}Ticket OPS-{4000 + i}."
        rows.append(row(text, vector / np.linalg.norm(vector), "episodic", recall_count=0))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 8], help="concurrency levels")
    args = parser.parse_args()

    scale_data.fresh_home()

    import dagster as dg

    from curation_pipeline.clients.embedders.lexical import LexicalEmbedder
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.core.partition_keys import partition_key
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.job import JOB_NAME
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
    from curation_pipeline.store.database import ensure_database, open_connection
    from curation_pipeline.store.nodes_io import insert_nodes
    from curation_pipeline_tests.support.llm_stub import Answer, StubLLMServer, faithful
    defs = load_defs()

    url = ensure_database(load_settings())
    model = LexicalEmbedder(DIM).name
    stub = StubLLMServer(lambda body, number: Answer(faithful(body).text, delay_secs=LATENCY_SECS))
    os.environ.update(CURATOR_LLM_ENABLED="true", CURATOR_LLM_BASE_URL=stub.url, CURATOR_LLM_MODEL="stub-model",
                      CURATOR_LLM_API="chat", CURATOR_LLM_TIMEOUT_SECS="30", CURATOR_LLM_MAX_CALLS="100")
    run_config = step_run_config({"consolidate_duplicates": {"similarity_threshold": 0.9,
                                                                "max_archive_fraction": 0.5}})
    rng = np.random.default_rng(7)
    print(f"# LLM concurrency: {MERGES} merges and {SUMMARIES} summaries, {LATENCY_SECS:g} s per answer "
          f"({os.cpu_count()} cores)")
    print("| concurrency | step | LLM calls | wall time | ideal | ratio |")
    print("|---|---|---|---|---|---|")
    try:
        with dg.DagsterInstance.ephemeral() as instance:
            for level in args.levels:
                namespace = f"concurrency-{level}"  # a fresh namespace: the answer cache is per namespace
                with open_connection(url) as conn, conn.transaction():
                    insert_nodes(conn, _rows(namespace, model, rng))
                os.environ["CURATOR_LLM_CONCURRENCY"] = str(level)
                key = partition_key("bench", namespace)
                instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, [key])
                result = defs.resolve_job_def(JOB_NAME).execute_in_process(
                    partition_key=key, instance=instance, run_config=run_config, op_selection=list(STEPS))
                stats = {stat.step_key.removeprefix("memory_namespace."): stat for stat in instance.get_run_step_stats(result.run_id)}
                counts = _cycle_steps(url, result.run_id)
                for step in STEPS:
                    calls = counts[step]["llm_requests"]
                    wall = stats[step].end_time - stats[step].start_time
                    ideal = math.ceil(calls / level) * LATENCY_SECS
                    print(f"| {level} | {step} | {calls} | {wall:.1f} s | {ideal:.0f} s | "
                          f"{wall / ideal if ideal else float('nan'):.2f}x |")
    finally:
        stub.close()


def _cycle_steps(url: str, run_id: str) -> dict[str, dict]:
    """Each step's counts as the cycle's activity row holds them."""
    from curation_pipeline.store.database import open_connection

    with open_connection(url) as conn:
        [metadata] = conn.execute("SELECT metadata FROM activity_log WHERE run_id = %s AND action = 'curation_cycle'",
                                  (run_id,)).fetchone()
    return metadata["steps"]


if __name__ == "__main__":
    main()

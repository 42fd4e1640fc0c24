"""What `curation-pipeline import` costs: rows per second of each pass, and peak memory.

    python benchmarks/import_jsonl.py            # 200,000 lines of 384-dimension vectors
    python benchmarks/import_jsonl.py --quick    # 20,000 lines
    python benchmarks/import_jsonl.py --lines N

Writes its own JSONL file (one line in ten archived into an active node of the file) and imports
it into a fresh embedded Postgres (a temporary CURATION_HOME). Prints figures; asserts nothing.
The peak resident memory is the process's, embedded Postgres excluded: it stays far below the
file's size, since the import streams the file twice instead of holding it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np

DIM = 384


def write_file(path: Path, lines: int, rng: np.random.Generator) -> None:
    keepers: list[str] = []
    with path.open("w", encoding="utf-8") as out:
        for start in range(0, lines, 10_000):
            vectors = rng.normal(size=(min(10_000, lines - start), DIM)).astype(np.float32)
            for offset, vector in enumerate(vectors):
                number = start + offset
                row = {"id": str(uuid.uuid4()), "tenant_id": f"tenant-{number % 3}", "namespace": "bench",
                       "pointer_summary": f"Memory number {number} about the customer's order.",
                       "embedding": [round(float(component), 6) for component in vector],
                       "embedding_model": f"lexical-ngram-v1/{DIM}"}
                if number % 10 == 9 and keepers:
                    keeper = keepers[-1]
                    row |= {"tenant_id": keeper[1], "archived_at": "2025-06-01T00:00:00Z", "merged_into": keeper[0]}
                else:
                    keepers.append((row["id"], row["tenant_id"]))
                    keepers = keepers[-3:]
                out.write(json.dumps(row) + "\n")


class Phase:
    def __init__(self, label: str) -> None:
        self.label, self.rows, self.started = label, 0, time.perf_counter()
        self.seconds = 0.0

    def advance(self, count: int = 1) -> None:
        self.rows += count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--lines", type=int)
    args = parser.parse_args()
    lines = args.lines or (20_000 if args.quick else 200_000)

    with tempfile.TemporaryDirectory(prefix="curation-import-bench-") as home:
        os.environ["CURATION_HOME"] = home
        os.environ.pop("DATABASE_URL", None)
        from curation_pipeline.config.settings import load_settings
        from curation_pipeline.core.partition_keys import validate_name
        from curation_pipeline.service.node_import import import_jsonl_file
        from curation_pipeline.store.database import ensure_database, open_connection

        path = Path(home) / "nodes.jsonl"
        write_file(path, lines, np.random.default_rng(7))
        size_mb = path.stat().st_size / 1e6
        settings = load_settings()
        url = ensure_database(settings)
        phases: list[Phase] = []

        @contextmanager
        def progress(label: str, _total: int | None):
            phase = Phase(label)
            phases.append(phase)
            yield phase
            phase.seconds = time.perf_counter() - phase.started

        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with open_connection(url) as conn:
            report = import_jsonl_file(conn, path, dimension=settings.embedding_dim,
                                       validate_name=validate_name, progress=progress)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"import of {lines:,} lines ({size_mb:,.0f} MB, {DIM}-dimension vectors): "
          f"{report.imported:,} rows written, {report.problems.count} problem(s)")
    print(f"{'pass':<28}{'rows':>12}{'seconds':>10}{'rows/s':>12}")
    for phase in phases:
        rate = phase.rows / phase.seconds if phase.seconds else 0.0
        print(f"{phase.label:<28}{phase.rows:>12,}{phase.seconds:>10.1f}{rate:>12,.0f}")
    total = sum(phase.seconds for phase in phases)
    print(f"{'both':<28}{report.imported:>12,}{total:>10.1f}{report.imported / total:>12,.0f}")
    print(f"peak resident memory of this process: {peak:,.0f} MB (before the import: {before:,.0f} MB)")


if __name__ == "__main__":
    main()

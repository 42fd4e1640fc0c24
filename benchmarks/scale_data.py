"""What the benchmarks share: a fresh store, fast seeding, vectors, medians, peak RSS.

Not a benchmark itself. Every benchmark that needs a store imports it (benchmarks/ is not a package: each runs as a script from here).

Seeding a million nodes row by row through Python objects takes minutes; `seed_namespace`
writes PostgreSQL's binary COPY format for a whole block of rows at once from one numpy
structured array (every column has a fixed width here), so a million 384-d nodes load in well
under a minute.
"""

from __future__ import annotations

import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np

DIM = 384
# The default embedder's name: the job compares (and keeps) only vectors of the configured model.
LEXICAL_MODEL = f"lexical-ngram-v1/{DIM}"
# A semantic embedder's name (step 6b runs only for one) that is never called: nothing in these
# namespaces is missing a vector. The address is unreachable on purpose.
SEMANTIC_ENV = {
    "CURATION_EMBEDDER": "openai", "CURATION_EMBEDDING_MODEL": "bench-model",
    "CURATION_EMBEDDER_BASE_URL": "http://127.0.0.1:9/v1",
}
SEMANTIC_MODEL = f"openai:bench-model/{DIM}"
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_SEED_BLOCK = 50_000


def fresh_home() -> str:
    """A temporary CURATION_HOME (and DAGSTER_HOME) for this benchmark process, removed when the
    process exits: a million-node store takes gigabytes of disk."""
    home = tempfile.mkdtemp(prefix="curation-bench-")
    # Registered before the embedded server starts: atexit runs handlers last in, first out, so
    # pgserver's own handler stops the server before its data directory is removed.
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    os.environ["CURATION_HOME"] = home
    os.environ["DAGSTER_HOME"] = os.path.join(home, "dagster_home")
    os.environ.pop("DATABASE_URL", None)
    # The vectors made here are the lexical model's (LEXICAL_MODEL) unless a benchmark chose
    # another embedder (SEMANTIC_ENV, --embedder): the job must use the data's model, or it would
    # take the vectors for another model's and re-embed them all.
    os.environ.setdefault("CURATION_EMBEDDER", "lexical")
    return home


def fresh_store() -> str:
    """A fresh embedded Postgres in a temporary CURATION_HOME (see fresh_home); its URL."""
    fresh_home()
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.store.database import ensure_database

    return ensure_database(load_settings())


def median_time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """n random unit vectors (two of them have a cosine near 0: no pairs among them)."""
    vectors = rng.standard_normal(size=(n, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def grouped_duplicates(rng: np.random.Generator, types: int, duplicate_share: float = 0.02):
    """A `vectors` callback for seed_namespace: unit vectors, a share of them near-duplicates
    (cosine ~0.97) of another row of the same block and memory type."""

    def make(n: int) -> tuple[np.ndarray, np.ndarray]:
        vectors = rng.standard_normal(size=(n, DIM), dtype=np.float32)
        kinds = rng.integers(0, types, n)
        copies = rng.choice(n, size=int(n * duplicate_share), replace=False)
        sources = rng.choice(n, size=copies.size)
        vectors[copies] = vectors[sources] + rng.normal(scale=0.25, size=(copies.size, DIM)).astype(np.float32)
        kinds[copies] = kinds[sources]
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors, kinds

    return make


def _text_field(width: int) -> list[tuple[str, str]]:
    return [("len", ">i4"), ("data", f"S{width}")]


def seed_namespace(
    conn, tenant: str, namespace: str, n: int, *, model: str = LEXICAL_MODEL, types: int = 20,
    vectors: Callable[[int], np.ndarray | tuple[np.ndarray, np.ndarray]], recall_count: int = 3,
    activity_row: bool = True,
) -> None:
    """Insert n active nodes (memory types type-00.., a short text, a vector of `model`,
    recalled now) with binary COPY, in blocks of `vectors(block_size)` rows: a matrix, or a
    matrix and each row's memory type number (else types are drawn at random). With
    `activity_row` false the namespace gets no namespace_activity row, as when an agent's own
    SQL writes the rows (then the pipeline creates the row, without an epoch)."""
    tenant_b, namespace_b, model_b = tenant.encode(), namespace.encode(), model.encode()
    now_us = int((conn.execute("SELECT now()").fetchone()[0] - _PG_EPOCH).total_seconds() * 1_000_000)
    row = np.dtype([
        ("fields", ">i2"),
        ("id_len", ">i4"), ("id", "S16"),
        ("tenant", _text_field(len(tenant_b))), ("namespace", _text_field(len(namespace_b))),
        ("type", _text_field(7)), ("text", _text_field(16)),
        ("vec_len", ">i4"), ("vec_dim", ">i2"), ("vec_unused", ">i2"), ("vec", ">f4", (DIM,)),
        ("model", _text_field(len(model_b))),
        ("recall_len", ">i4"), ("recall", ">i4"),
        ("recalled_len", ">i4"), ("recalled", ">i8"),
        ("epoch_len", ">i4"), ("epoch", ">i8"),
    ])
    rng = np.random.default_rng(abs(hash((tenant, namespace))) % 2**32)
    columns = ("id, tenant_id, namespace, memory_type, pointer_summary, embedding, embedding_model,"
               " recall_count, last_recalled_at, epoch")
    with conn.cursor().copy(f"COPY memory_nodes ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.write(b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big"))
        for start in range(0, n, _SEED_BLOCK):
            size = min(_SEED_BLOCK, n - start)
            block = np.zeros(size, dtype=row)
            block["fields"] = 10
            ids = rng.bytes(16 * size)
            block["id_len"], block["id"] = 16, np.frombuffer(ids, dtype="S16")
            for name, value in (("tenant", tenant_b), ("namespace", namespace_b), ("model", model_b)):
                block[name]["len"], block[name]["data"] = len(value), value
            made = vectors(size)
            made, kinds = made if isinstance(made, tuple) else (made, rng.integers(0, types, size))
            block["type"]["len"] = 7
            block["type"]["data"] = np.char.add(b"type-", np.char.zfill(kinds.astype("S2"), 2))
            block["text"]["len"] = 16
            block["text"]["data"] = [b"Memory %s." % uuid.UUID(bytes=ids[16 * k: 16 * k + 16]).hex[:8].encode()
                                     for k in range(size)]
            block["vec_len"], block["vec_dim"], block["vec"] = 4 + 4 * DIM, DIM, made
            block["recall_len"], block["recall"] = 4, recall_count
            block["recalled_len"], block["recalled"] = 8, now_us
            block["epoch_len"], block["epoch"] = 8, 0
            copy.write(block.tobytes())
        copy.write((-1).to_bytes(2, "big", signed=True))
    if activity_row:
        conn.execute(
            "INSERT INTO namespace_activity (tenant_id, namespace, current_epoch) VALUES (%s, %s, 0)"
            " ON CONFLICT DO NOTHING", (tenant, namespace),
        )
    conn.commit()


def analyze(conn) -> None:
    """What autovacuum does soon after a bulk load (statistics and the visibility map)."""
    autocommit = conn.autocommit
    conn.commit()
    conn.autocommit = True
    conn.execute("VACUUM ANALYZE memory_nodes")
    conn.autocommit = autocommit


def mark_graph_synced(conn, tenant: str, namespace: str) -> None:
    """Bring the namespace's graph up to date the way step 6 would after enough cycles (its
    vertices, and its cursor at the present), in one statement instead of 100 nodes a cycle."""
    conn.execute(
        """
        INSERT INTO graph_vertices (node_id, tenant_id, namespace, heat, pinned, summary, archived)
        SELECT id, tenant_id, namespace, heat, pinned, pointer_summary, archived_at IS NOT NULL
        FROM memory_nodes WHERE tenant_id = %(t)s AND namespace = %(n)s
        ON CONFLICT DO NOTHING
        """,
        {"t": tenant, "n": namespace},
    )
    conn.execute(
        "INSERT INTO namespace_activity (tenant_id, namespace, graph_sync_txid)"
        " VALUES (%s, %s, pg_snapshot_xmax(pg_current_snapshot()))"
        " ON CONFLICT (tenant_id, namespace) DO UPDATE SET graph_sync_txid = EXCLUDED.graph_sync_txid,"
        " graph_sync_node_id = NULL, graph_sync_pending = '{}'",
        (tenant, namespace),
    )
    conn.commit()


def copy_pass_state(conn, tenant: str, source: str, target: str) -> None:
    """Steps 2 and 6b's state after a complete pass, taken from `source` (a namespace that had
    real full passes) and positioned at the present: the state a complete full pass of `target`
    leaves, without spending minutes on one."""
    conn.execute(
        """
        UPDATE namespace_activity t SET
            consolidate_txid = pg_snapshot_xmax(pg_current_snapshot()), consolidate_pending = '{}',
            consolidate_complete = s.consolidate_complete, consolidate_params = s.consolidate_params,
            associate_txid = pg_snapshot_xmax(pg_current_snapshot()), associate_pending = '{}',
            associate_complete = s.associate_complete, associate_params = s.associate_params
        FROM namespace_activity s
        WHERE s.tenant_id = %(t)s AND s.namespace = %(source)s AND t.tenant_id = %(t)s AND t.namespace = %(target)s
        """,
        {"t": tenant, "source": source, "target": target},
    )
    conn.commit()


def own_peak_rss_mib() -> float:
    """This process's peak RSS so far (VmHWM), MiB."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def in_child(code: str, env: dict | None = None) -> tuple[float, str]:
    """Run `code` in a fresh Python process; (its own peak RSS in MiB, its stdout).

    The peak is the process's VmHWM: getrusage's ru_maxrss would carry over the RSS its parent
    had when it forked (Linux keeps the high-water mark across execve).
    """
    probe = ("\nfor line in open('/proc/self/status'):\n"
             "    if line.startswith('VmHWM:'):\n        print('peak-rss-kib', line.split()[1])\n")
    done = subprocess.run([sys.executable, "-c", code + probe], check=False, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if done.returncode:
        raise RuntimeError(f"child failed:\n{done.stderr[-4000:]}")
    *lines, last = done.stdout.rstrip("\n").split("\n")
    return int(last.split()[1]) / 1024, "\n".join(lines)

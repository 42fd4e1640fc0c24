"""Load the demo corpus (demo/corpus.py) into the memory store, embedded by the configured embedder."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import psycopg

from curation_pipeline.clients.embedders.factory import make_embedder
from curation_pipeline.config.embedder import load_embedder_settings
from curation_pipeline.config.settings import Settings
from curation_pipeline.core.progress_hooks import ProgressFactory, no_progress
from curation_pipeline.demo.corpus import generate_seed_corpus
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store.nodes_io import insert_nodes, upsert_namespace_activity

_EMBED_BATCH = 64


def seed_store(
    settings: Settings, *, now: datetime | None = None, seed: int = 7,
    progress: ProgressFactory = no_progress,
) -> int:
    """Insert the demo corpus (embedding the nodes meant to have vectors); 0 if already there.

    ``progress`` counts the rows embedded, then the rows written.
    """
    now = now or datetime.now(UTC)
    nodes, namespaces = generate_seed_corpus(now=now, seed=seed)
    rows = []
    for index, node in enumerate(nodes):
        row = {key: value for key, value in node.items() if not key.startswith("_")}
        # Stable ids make seeding twice detectable instead of doubling the corpus.
        row.setdefault("id", str(uuid.uuid5(uuid.NAMESPACE_URL, f"curation-pipeline/seed/{seed}/{index}")))
        rows.append(row)
    with open_connection(ensure_database(settings)) as conn:
        with conn.transaction():
            if _already_seeded(conn, rows):  # before embedding: seeding twice costs nothing
                return 0
        # No transaction is open while the embedder works (it may be a remote service).
        embedder = make_embedder(load_embedder_settings().with_changes(dimension=settings.embedding_dim))
        to_embed = [row for row, node in zip(rows, nodes) if node.get("_embed")]
        with progress("seed: embedding", len(to_embed)) as bar:
            for start in range(0, len(to_embed), _EMBED_BATCH):
                batch = to_embed[start:start + _EMBED_BATCH]
                vectors = embedder.embed([row["pointer_summary"] for row in batch])
                for row, vector in zip(batch, vectors):
                    row["embedding"], row["embedding_model"] = vector, embedder.name
                bar.advance(len(batch))
        with conn.transaction(), progress("seed: writing", len(rows)) as bar:
            if _already_seeded(conn, rows):  # seeded by someone else meanwhile
                return 0
            count = insert_nodes(conn, rows, now=now, on_rows=bar.advance)
            upsert_namespace_activity(conn, namespaces)
    return count


def _already_seeded(conn: psycopg.Connection, rows: list[dict]) -> bool:
    return conn.execute(
        "SELECT EXISTS (SELECT FROM memory_nodes WHERE id = %s::uuid)", (str(rows[0]["id"]),)
    ).fetchone()[0]

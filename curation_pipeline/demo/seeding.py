"""Load the demo corpus (demo/corpus.py) into the memory store, embedded by the configured embedder."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

from curation_pipeline.clients.embedders.factory import make_embedder
from curation_pipeline.config.embedder import load_embedder_settings
from curation_pipeline.config.settings import Settings
from curation_pipeline.demo.corpus import generate_seed_corpus
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store.nodes_io import insert_nodes, upsert_namespace_activity


def seed_store(settings: Settings, *, now: datetime | None = None, seed: int = 7) -> int:
    """Insert the demo corpus (embedding the nodes meant to have vectors); 0 if already there."""
    now = now or datetime.now(UTC)
    nodes, namespaces = generate_seed_corpus(now=now, seed=seed)
    embedder = make_embedder(replace(load_embedder_settings(), dimension=settings.embedding_dim))
    rows = []
    for index, node in enumerate(nodes):
        row = {key: value for key, value in node.items() if not key.startswith("_")}
        # Stable ids make seeding twice detectable instead of doubling the corpus.
        row.setdefault("id", str(uuid.uuid5(uuid.NAMESPACE_URL, f"curation-pipeline/seed/{seed}/{index}")))
        rows.append(row)
    to_embed = [row for row, node in zip(rows, nodes) if node.get("_embed")]
    vectors = embedder.embed([row["pointer_summary"] for row in to_embed])
    for row, vector in zip(to_embed, vectors):
        row["embedding"], row["embedding_model"] = vector, embedder.name
    with open_connection(ensure_database(settings)) as conn, conn.transaction():
        already = conn.execute(
            "SELECT count(*) FROM memory_nodes WHERE id = %s::uuid", (str(rows[0]["id"]),)
        ).fetchone()[0]
        if already:
            return 0
        count = insert_nodes(conn, rows, now=now)
        upsert_namespace_activity(conn, namespaces)
    return count

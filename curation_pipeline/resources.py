"""Dagster resources: the memory store and the embedder, configured from settings by default."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import dagster as dg
import psycopg

from curation_pipeline.embeddings import Embedder, make_embedder
from curation_pipeline.settings import Settings, load_settings
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store.locking import lock_namespace
from curation_pipeline.store.revisions import Scope


class MemoryStore(dg.ConfigurableResource):
    """The Postgres + pgvector memory store (DATABASE_URL, else the embedded server)."""

    database_url: str | None = None
    curation_home: str | None = None
    lock_timeout_s: int = 120

    def settings(self) -> Settings:
        settings = load_settings()
        if self.database_url:
            settings = replace(settings, database_url=self.database_url)
        if self.curation_home:
            settings = replace(settings, curation_home=Path(self.curation_home))
        return settings

    def url(self) -> str:
        return ensure_database(self.settings())

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with open_connection(self.url()) as conn:
            yield conn

    @contextmanager
    def namespace_transaction(self, scope: Scope) -> Iterator[psycopg.Connection]:
        """One transaction holding the namespace's advisory lock: one curation at a time."""
        with self.connection() as conn, conn.transaction():
            lock_namespace(conn, scope.tenant_id, scope.namespace, self.lock_timeout_s)
            yield conn


class EmbedderResource(dg.ConfigurableResource):
    """Which embedder step 4 uses; `dimension` must match the store's vector column."""

    provider: str = load_settings().embedder
    dimension: int = load_settings().embedding_dim

    def get(self) -> Embedder:
        return make_embedder(self.provider, self.dimension)

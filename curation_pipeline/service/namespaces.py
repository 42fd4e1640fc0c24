"""Which namespaces the store holds, as partition keys (registering them in Dagster:
`defs/partitions.py`)."""

from __future__ import annotations

from curation_pipeline.config.settings import Settings
from curation_pipeline.core.partition_keys import InvalidNameError, partition_key
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store.triggers import discover_namespaces


def discover_partition_keys(settings: Settings) -> tuple[list[str], list[str]]:
    """Keys of every namespace in the store, and one message per name that can't be a key.

    Also gives each namespace found only in memory_nodes its namespace_activity row, so the
    schedule and sensors (which read that table alone) see it (store/triggers.py).
    """
    with open_connection(ensure_database(settings)) as conn, conn.transaction():
        namespaces = discover_namespaces(conn)
    keys, problems = [], []
    for tenant_id, namespace in namespaces:
        try:
            keys.append(partition_key(tenant_id, namespace))
        except InvalidNameError as error:
            problems.append(f"skipping {tenant_id!r}:{namespace!r}: {error}")
    return keys, problems

"""Which namespaces exist, as Dagster partitions: discovery and registration.

Kept apart from runner.py (which launches runs through dagster internals) so that the schedule
and sensors, loaded by every run process, don't import the launcher.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from curation_pipeline.partitions import PARTITIONS_DEF_NAME, InvalidNameError, partition_key
from curation_pipeline.settings import Settings
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
            problems.append(f"skipping {tenant_id!r}/{namespace!r}: {error}")
    return keys, problems


def register_partitions(instance: dg.DagsterInstance, keys: Sequence[str]) -> list[str]:
    """Add the keys Dagster doesn't know yet; returns the new ones."""
    known = set(instance.get_dynamic_partitions(PARTITIONS_DEF_NAME))
    new = [key for key in dict.fromkeys(keys) if key not in known]
    if new:
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, new)
    return new

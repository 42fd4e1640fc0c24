"""The job's partitions: one dynamic Dagster partition per tenant/namespace, and registering them.

Keys are made and read by `core.partition_keys`. The UI cannot add dynamic partitions for an op
job, so the discovery sensor, the schedule, the idle sensor and the CLI register the namespaces
they find (Dagster refuses a run request for an unknown partition).
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

PARTITIONS_DEF_NAME = "namespaces"
PARTITION_TAG = "dagster/partition"  # the run tag Dagster puts the partition key in
namespace_partitions = dg.DynamicPartitionsDefinition(name=PARTITIONS_DEF_NAME)


def register_partitions(instance: dg.DagsterInstance, keys: Sequence[str]) -> list[str]:
    """Add the keys Dagster doesn't know yet; returns the new ones."""
    known = set(instance.get_dynamic_partitions(PARTITIONS_DEF_NAME))
    new = [key for key in dict.fromkeys(keys) if key not in known]
    if new:
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, new)
    return new


def registered_partitions(instance: dg.DagsterInstance) -> set[str]:
    return set(instance.get_dynamic_partitions(PARTITIONS_DEF_NAME))


def remove_partition(instance: dg.DagsterInstance, key: str) -> bool:
    """Retire a namespace's partition (its runs stay in Dagster's history); False if it had none."""
    if not instance.has_dynamic_partition(PARTITIONS_DEF_NAME, key):
        return False
    instance.delete_dynamic_partition(PARTITIONS_DEF_NAME, key)
    return True

"""Which namespaces the store holds, as partition keys (registering them in Dagster:
`defs/partitions.py`); which requested ones are unknown; retiring one (`namespaces remove`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from curation_pipeline.config.settings import Settings
from curation_pipeline.core.known_namespaces import (
    UnknownNamespaceError,
    unknown_for_removal,
    unknown_keys,
    unknown_namespace_message,
)
from curation_pipeline.core.partition_keys import InvalidNameError, parse_partition_key, partition_key
from curation_pipeline.store import namespace_registry
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store.locking import namespace_lease_now
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


def check_requested(settings: Settings, keys: Sequence[str], registered: Callable[[], Collection[str]], *,
                    create: bool) -> list[str]:
    """Refuse (UnknownNamespaceError) the keys that name no known namespace, unless `create`,
    which makes them namespaces (and brings back removed ones); returns the keys created.

    Known: discovered in the store (memory or made by the operator) or already a Dagster
    partition (`registered()`, asked only when the store does not know a key: it opens Dagster).
    A key must first be a valid key (InvalidNameError).
    """
    names = {key: parse_partition_key(key) for key in keys}
    discovered, _ = discover_partition_keys(settings)
    if not unknown_keys(list(names), set(discovered)):
        return []
    known = set(discovered) | set(registered())
    if not (unknown := unknown_keys(list(names), known)):
        return []
    with open_connection(ensure_database(settings)) as conn, conn.transaction():
        if create:
            namespace_registry.revive(conn, [names[key] for key in unknown])
            return unknown
        retired = {partition_key(*name) for name in namespace_registry.retired_namespaces(conn)}
    raise UnknownNamespaceError(unknown_namespace_message(unknown, known, retired))


def check_readable(settings: Settings, key: str, registered: Callable[[], Collection[str]]) -> None:
    """Refuse (UnknownNamespaceError, listing the known ones) a key that names nothing to read:
    no namespace in the store, no partition in Dagster (`registered()`, asked only then) and no
    run recorded for it. `health` and `runs` ask this, as `run` refuses a typo, rather than
    answer "nothing recorded yet" for a misspelt namespace."""
    tenant_id, namespace = parse_partition_key(key)
    discovered, _ = discover_partition_keys(settings)
    if key in discovered:
        return
    with open_connection(ensure_database(settings)) as conn:
        if namespace_registry.has_activity(conn, tenant_id, namespace):
            return  # curated once, since retired or emptied: its records are still worth reading
    known = set(discovered) | set(registered())
    if key not in known:
        raise UnknownNamespaceError(unknown_namespace_message([key], known, to_curate=False))


@dataclass(frozen=True)
class Retired:
    kept: int  # memory nodes the namespace keeps (all of them)
    already: bool  # it was removed before: nothing more was done


def retire_namespace(settings: Settings, key: str, registered: Collection[str], *,
                     remove_partition: Callable[[], object]) -> Retired:
    """Mark the namespace retired in the store (its memory untouched) and, still holding its
    lease, call `remove_partition` (the caller's Dagster side). A run of the namespace holds the
    lease from its first step to its last: then nothing is done and NamespaceBusyError names the
    run (removing the partition under a running cycle failed its step 7, and its writes brought
    the namespace back). A namespace removed before is said to be, not called unknown."""
    tenant_id, namespace = parse_partition_key(key)
    discovered, _ = discover_partition_keys(settings)
    url = ensure_database(settings)
    if (reason := unknown_for_removal(key, set(discovered) | set(registered))) is not None:
        with open_connection(url) as conn:
            if (tenant_id, namespace) not in set(namespace_registry.retired_namespaces(conn)):
                raise UnknownNamespaceError(reason)
            return Retired(namespace_registry.count_nodes(conn, tenant_id, namespace), already=True)
    with namespace_lease_now(url, tenant_id, namespace, holder="namespaces remove"):
        with open_connection(url) as conn, conn.transaction():
            namespace_registry.retire(conn, tenant_id, namespace)
            kept = namespace_registry.count_nodes(conn, tenant_id, namespace)
        remove_partition()
    return Retired(kept, already=False)

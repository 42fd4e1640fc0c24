"""What the command line reads back from the store: the nodes to export, the recorded cycles
with their health, a run's cycle row, the recent runs, and the per-namespace switch."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from curation_pipeline.config.settings import Settings
from curation_pipeline.core.partition_keys import parse_partition_key, partition_key
from curation_pipeline.service.memory_store import connect
from curation_pipeline.store import activity, graph, graph_age, health, history, nodes_io, triggers

CURATION_ACTION, PREVIEW_ACTION, UNDO_ACTION = activity.ACTION, activity.PREVIEW_ACTION, "curation_undo"


@contextmanager
def nodes_to_export(settings: Settings, *, tenant_id: str | None, namespace: str | None
                    ) -> Iterator[tuple[int, Iterator[dict]]]:
    """(how many, the rows) of the nodes an export writes, read in one connection."""
    with connect(settings) as conn:
        total = nodes_io.count_nodes(conn, tenant_id=tenant_id, namespace=namespace)
        yield total, nodes_io.iter_nodes(conn, tenant_id=tenant_id, namespace=namespace)


def recorded_cycles(settings: Settings, *, tenant_id: str | None, namespace: str | None,
                    last: int) -> list[dict]:
    with connect(settings) as conn:
        return health.recorded_cycles(conn, tenant_id=tenant_id, namespace=namespace, last=last)


def cycle_of_run(settings: Settings, key: str, run_id: str, *, preview: bool) -> dict | None:
    """The cycle row (or, for a preview, the preview row) the run left for its namespace."""
    tenant_id, namespace = parse_partition_key(key)
    read = activity.preview_metadata if preview else activity.cycle_metadata
    with connect(settings) as conn:
        return read(conn, run_id, tenant_id, namespace)


def recent_runs(settings: Settings, *, tenant_id: str | None, namespace: str | None, limit: int) -> list[dict]:
    with connect(settings) as conn:
        return activity.recent_runs(conn, tenant_id=tenant_id, namespace=namespace, limit=limit)


def set_curation_enabled(settings: Settings, key: str, *, enabled: bool) -> None:
    """The per-namespace off switch: the triggers request no runs for a disabled namespace."""
    tenant_id, namespace = parse_partition_key(key)
    with connect(settings) as conn, conn.transaction():
        triggers.set_curation_enabled(conn, tenant_id, namespace, enabled)


def disabled_keys(settings: Settings) -> set[str]:
    """Partition keys of the namespaces whose curation is switched off (`namespaces disable`)."""
    with connect(settings) as conn:
        return {partition_key(t, n) for t, n in triggers.disabled_namespaces(conn)}


class NoSuchNodeError(LookupError):
    """No memory node has that id."""


def graph_neighbourhood(settings: Settings, node_id: str):
    """The node's neighbourhood in the graph, read where the configured backend keeps it (both
    hold the same graph); None if step 6 has not synced it yet. NoSuchNodeError for an unknown id."""
    with connect(settings) as conn:
        if not history.node_exists(conn, node_id):
            raise NoSuchNodeError(f"no memory node {node_id}")
        backend = graph_age.choose_backend(conn, settings.graph_backend)
        return (graph_age.age_neighbourhood if backend == "age" else graph.neighbourhood)(conn, node_id)

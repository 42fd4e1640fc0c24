"""The activity log's `curation_cycle` row and the namespace's curation bookkeeping.

There is one cycle row per (run, namespace). Each step merges its counts into it in the same
transaction as its changes, so the row always tells exactly what was committed; a failed step
records its error (status `partial`); step 7 closes the row. A row whose run never reached step 7
therefore still shows what happened, which is what an operator needs after a failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import psycopg

from curation_pipeline.core.scope import Scope
from curation_pipeline.store.revisions import run_changes, run_edges, run_signals

ACTION = "curation_cycle"


def _upsert_cycle(
    conn: psycopg.Connection, scope: Scope, patch_sql: str, params: Mapping, run_info: Mapping | None,
    *, only_if: str = "true",
) -> None:
    """Create the cycle row if this is the run's first word on it, then apply `patch_sql`."""
    conn.execute(
        f"""
        INSERT INTO activity_log (tenant_id, namespace, action, run_id, metadata)
        VALUES (%(t)s, %(n)s, '{ACTION}', %(run_id)s,
                jsonb_build_object('tenant_id', %(t)s::text, 'namespace', %(n)s::text,
                                   'run_id', %(run_id)s::text,
                                   'status', 'running', 'steps', '{{}}'::jsonb,
                                   'failed_steps', '[]'::jsonb, 'errors', '{{}}'::jsonb,
                                   'started_at', now()) || %(base)s::jsonb)
        ON CONFLICT (run_id, tenant_id, namespace) WHERE action = '{ACTION}' DO NOTHING
        """,
        {"t": scope.tenant_id, "n": scope.namespace, "run_id": scope.run_id,
         "base": json.dumps(dict(run_info or {}))},
    )
    conn.execute(
        f"UPDATE activity_log SET {patch_sql}, updated_at = now()"
        f" WHERE action = '{ACTION}' AND run_id = %(run_id)s"
        f" AND tenant_id = %(t)s AND namespace = %(n)s AND {only_if}",
        {"t": scope.tenant_id, "n": scope.namespace, "run_id": scope.run_id, **params},
    )


def record_step_result(
    conn: psycopg.Connection, scope: Scope, counts: Mapping, run_info: Mapping | None = None
) -> None:
    """Merge one step's counts into the cycle row (call inside the step's transaction)."""
    _upsert_cycle(
        conn, scope,
        "metadata = jsonb_set(metadata, ARRAY['steps', %(step)s], %(counts)s::jsonb)",
        {"step": scope.step, "counts": json.dumps({"status": "succeeded", **counts}, default=str)},
        run_info,
    )


def record_step_failure(
    conn: psycopg.Connection, scope: Scope, error: str, run_info: Mapping | None = None
) -> None:
    """Mark the cycle `partial` and record which step failed and why."""
    _upsert_cycle(
        conn, scope,
        """metadata = jsonb_set(metadata, ARRAY['steps', %(step)s], %(entry)s::jsonb)
                   || jsonb_build_object(
                        'status', 'partial',
                        'failed_steps', (metadata->'failed_steps') || to_jsonb(%(step)s::text),
                        'errors', (metadata->'errors') || jsonb_build_object(%(step)s::text, %(error)s::text),
                        'duration_s', extract(epoch FROM now() - (metadata->>'started_at')::timestamptz))""",
        {"step": scope.step, "entry": json.dumps({"status": "failed", "error": error}), "error": error},
        run_info,
    )


def record_interruption(
    conn: psycopg.Connection, scope: Scope, step: str | None, error: str, run_info: Mapping | None = None
) -> None:
    """A run canceled (interrupted) before its cycle closed: mark the cycle `partial`, with the
    step in progress (if any) failed. A row already closed (or failed) is left as it is."""
    _upsert_cycle(
        conn, scope,
        """metadata = metadata || jsonb_build_object(
               'status', 'partial', 'interrupted', true,
               'failed_steps', (metadata->'failed_steps')
                               || CASE WHEN %(step)s::text IS NULL THEN '[]'::jsonb ELSE to_jsonb(%(step)s::text) END,
               'errors', (metadata->'errors') || jsonb_build_object(coalesce(%(step)s::text, 'run'), %(error)s::text),
               'duration_s', extract(epoch FROM now() - (metadata->>'started_at')::timestamptz))
           || CASE WHEN %(step)s::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(
               'steps', jsonb_set(metadata->'steps', ARRAY[%(step)s::text], %(entry)s::jsonb)) END""",
        {"step": step, "error": error, "entry": json.dumps({"status": "failed", "error": error})},
        run_info, only_if="metadata->>'status' = 'running'",
    )


def close_cycle(conn: psycopg.Connection, scope: Scope, run_info: Mapping | None = None) -> dict:
    """Step 7: final status and duration; returns the row's metadata.

    Only a cycle without failed steps marks the namespace curated, so the triggers treat a failed
    run as not having curated anything.
    """
    _upsert_cycle(
        conn, scope,
        """metadata = metadata || jsonb_build_object(
               'status', CASE WHEN jsonb_array_length(metadata->'failed_steps') = 0
                              THEN 'success' ELSE 'partial' END,
               'finished_at', now(),
               'duration_s', extract(epoch FROM now() - (metadata->>'started_at')::timestamptz))""",
        {},
        run_info,
    )
    metadata = cycle_metadata(conn, scope.run_id, scope.tenant_id, scope.namespace)
    if metadata["status"] == "success":
        conn.execute(
            """
            INSERT INTO namespace_activity (tenant_id, namespace, last_curated_at, last_curation_run_id)
            VALUES (%s, %s, now(), %s)
            ON CONFLICT (tenant_id, namespace) DO UPDATE
                SET last_curated_at = EXCLUDED.last_curated_at,
                    last_curation_run_id = EXCLUDED.last_curation_run_id
            """,
            (scope.tenant_id, scope.namespace, scope.run_id),
        )
    return metadata


def cycle_rows(conn: psycopg.Connection, root_run_id: str, tenant_id: str, namespace: str) -> list[dict]:
    """The cycle rows of a root run and of its re-executions, oldest first."""
    rows = conn.execute(
        f"SELECT metadata FROM activity_log WHERE action = '{ACTION}' AND tenant_id = %(t)s"
        " AND namespace = %(n)s AND (run_id = %(root)s OR metadata->>'root_run_id' = %(root)s)"
        " ORDER BY id",
        {"t": tenant_id, "n": namespace, "root": root_run_id},
    ).fetchall()
    return [row[0] for row in rows]


def record_health(conn: psycopg.Connection, scope: Scope, *, health: Mapping, checks: list[Mapping],
                  cycle: Mapping, snapshot: Mapping) -> None:
    """Keep the cycle's health record, its checks, the runs that made it and the store snapshot
    its numbers came from (the next cycle may reuse it) in its closing row."""
    _upsert_cycle(
        conn, scope,
        "metadata = metadata || jsonb_build_object('health', %(health)s::jsonb,"
        " 'checks', %(checks)s::jsonb, 'cycle', %(cycle)s::jsonb, 'snapshot', %(snapshot)s::jsonb)",
        {"health": json.dumps(dict(health)), "checks": json.dumps(checks),
         "cycle": json.dumps(dict(cycle)), "snapshot": json.dumps(dict(snapshot))},
        None,
    )


def cycle_metadata(conn: psycopg.Connection, run_id: str, tenant_id: str, namespace: str) -> dict | None:
    row = conn.execute(
        f"SELECT metadata FROM activity_log WHERE action = '{ACTION}' AND run_id = %s"
        " AND tenant_id = %s AND namespace = %s",
        (run_id, tenant_id, namespace),
    ).fetchone()
    return row[0] if row else None


PREVIEW_ACTION = "curation_preview"


def collect_preview(conn: psycopg.Connection, run_id: str, tenant_id: str, namespace: str) -> dict:
    """Everything a dry run did, read inside its transaction just before it is rolled back."""
    metadata = cycle_metadata(conn, run_id, tenant_id, namespace) or {
        "tenant_id": tenant_id, "namespace": namespace, "run_id": run_id, "steps": {},
        "failed_steps": [], "errors": {},
    }
    return {**metadata, "preview": True, "changes": run_changes(conn, run_id),
            "signals": run_signals(conn, run_id), "edges": run_edges(conn, run_id)}


def record_preview(conn: psycopg.Connection, preview: dict) -> None:
    """The one row a dry run leaves behind (committed after its changes were rolled back)."""
    conn.execute(
        "INSERT INTO activity_log (tenant_id, namespace, action, run_id, metadata)"
        " VALUES (%s, %s, %s, %s, %s::jsonb)",
        (preview["tenant_id"], preview["namespace"], PREVIEW_ACTION, preview["run_id"],
         json.dumps(preview, default=str)),
    )


def preview_metadata(conn: psycopg.Connection, run_id: str, tenant_id: str, namespace: str) -> dict | None:
    row = conn.execute(
        "SELECT metadata FROM activity_log WHERE action = %s AND run_id = %s"
        " AND tenant_id = %s AND namespace = %s",
        (PREVIEW_ACTION, run_id, tenant_id, namespace),
    ).fetchone()
    return row[0] if row else None


RUN_ACTIONS = (ACTION, PREVIEW_ACTION, "curation_undo")


def recent_runs(conn: psycopg.Connection, *, tenant_id: str | None = None, namespace: str | None = None,
                limit: int = 20) -> list[dict]:
    """The latest curation, preview and undo rows (one per run and namespace), newest first."""
    rows = conn.execute(
        """
        SELECT action, run_id, tenant_id, namespace, metadata, created_at,
               coalesce((metadata->>'started_at')::timestamptz, created_at) AS started
        FROM activity_log
        WHERE action = ANY(%(actions)s)
          AND (%(t)s::text IS NULL OR tenant_id = %(t)s) AND (%(n)s::text IS NULL OR namespace = %(n)s)
        ORDER BY started DESC, id DESC LIMIT %(limit)s
        """,
        {"actions": list(RUN_ACTIONS), "t": tenant_id, "n": namespace, "limit": limit},
    ).fetchall()
    return [
        {"action": action, "run_id": run_id, "tenant_id": t, "namespace": n, "metadata": metadata,
         "started_at": started}
        for action, run_id, t, n, metadata, _, started in rows
    ]

"""Faults in the middle of a curation step, injected by the database itself.

`install_step_pause(conn)` adds a trigger on node_revisions and graph_revisions: while a step is
*armed* (a row in soak_step_faults), the step's first revision insert waits there, inside the
step's open write transaction, until someone disarms it. A `MidStepFault` arms some steps for one
run and, from its own connection on another thread, waits for the first of them to pause (the
first armed step that writes), then disarms them all and acts:

- `kill_step`: pg_terminate_backend the step's connection (its transaction must roll back whole);
- `kill_lease`: pg_terminate_backend the connection holding the run's namespace lease, then let the
  step go on (every later write transaction of the run must fail on its fencing check);
- `agent_write`: run an agent's write while the step holds its transaction open, then let it go on.

Nothing is timed: the waiting sides poll for a state, never for a duration.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

import psycopg

from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.support.lease_faults import kill_lease_connection

# Steps that write revisions, hence can be paused (6b writes none with the lexical embedder).
PAUSABLE_STEPS = ("consolidate_duplicates", "summarize_verbose", "revectorize",
                  "mark_stale_confidence", "sync_graph")

_INSTALL = """
CREATE TABLE IF NOT EXISTS soak_step_faults (step text PRIMARY KEY, armed boolean NOT NULL);
CREATE OR REPLACE FUNCTION soak_step_pause() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Each loop statement sees what other sessions committed (READ COMMITTED), so disarming
    -- from another connection releases the wait.
    IF EXISTS (SELECT 1 FROM soak_step_faults WHERE step = NEW.step AND armed) THEN
        -- Tells the watcher which step paused (reported in pg_stat_activity; transaction-local).
        PERFORM set_config('application_name', 'soak paused in ' || NEW.step, true);
        WHILE EXISTS (SELECT 1 FROM soak_step_faults WHERE step = NEW.step AND armed) LOOP
            PERFORM pg_sleep(0.01);
        END LOOP;
    END IF;
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER soak_step_pause AFTER INSERT ON node_revisions
    FOR EACH ROW EXECUTE FUNCTION soak_step_pause();
CREATE OR REPLACE TRIGGER soak_step_pause AFTER INSERT ON graph_revisions
    FOR EACH ROW EXECUTE FUNCTION soak_step_pause();
"""

_UNINSTALL = """
DROP TRIGGER IF EXISTS soak_step_pause ON node_revisions;
DROP TRIGGER IF EXISTS soak_step_pause ON graph_revisions;
DROP FUNCTION IF EXISTS soak_step_pause();
DROP TABLE IF EXISTS soak_step_faults;
"""


def install_step_pause(conn: psycopg.Connection) -> None:
    conn.execute(_INSTALL)


def uninstall_step_pause(conn: psycopg.Connection) -> None:
    conn.execute(_UNINSTALL)


@dataclass
class FaultOutcome:
    fired: bool = False  # an armed step reached its pause (it wrote something)
    step: str | None = None  # which one
    marks: dict[str, int] = field(default_factory=dict)  # highest revision ids when the fault hit
    error: Exception | None = None


class MidStepFault:
    """Arm `steps` for the duration of a `with` block (one run); `kind` says what happens when
    the first of them pauses. `agent_write(conn)` is called for kind `agent_write`."""

    def __init__(self, url: str, steps: tuple[str, ...], kind: str, tenant_id: str, namespace: str,
                 agent_write: Callable[[psycopg.Connection], None] | None = None) -> None:
        assert kind in ("kill_step", "kill_lease", "agent_write"), kind
        assert set(steps) <= set(PAUSABLE_STEPS), steps
        self.url, self.steps, self.kind = url, tuple(steps), kind
        self.tenant_id, self.namespace = tenant_id, namespace
        self.agent_write = agent_write
        self.outcome = FaultOutcome()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Self:
        with open_connection(self.url, autocommit=True) as conn:
            for step in self.steps:
                conn.execute(
                    "INSERT INTO soak_step_faults VALUES (%s, true) ON CONFLICT (step) DO UPDATE SET armed = true",
                    (step,),
                )
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if self.outcome.error is not None and exc[0] is None:
            raise self.outcome.error

    def _watch(self) -> None:
        try:
            with open_connection(self.url, autocommit=True) as conn:
                # A safety net, not a timing: a write stuck behind the paused step fails the
                # soak instead of hanging it.
                conn.execute("SET lock_timeout = '60s'")
                paused = self._wait_for_pause(conn)
                if paused is None:
                    return
                pid, self.outcome.step = paused
                self.outcome.fired = True
                self.outcome.marks = dict(zip(
                    ("node_revisions", "graph_revisions", "training_signals"),
                    conn.execute(
                        "SELECT (SELECT coalesce(max(id), 0) FROM node_revisions),"
                        " (SELECT coalesce(max(id), 0) FROM graph_revisions),"
                        " (SELECT coalesce(max(id), 0) FROM training_signals)"
                    ).fetchone(),
                ))
                if self.kind == "kill_step":
                    assert conn.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone()[0]
                elif self.kind == "kill_lease":
                    kill_lease_connection(conn, self.tenant_id, self.namespace)
                else:
                    self.agent_write(conn)
        except Exception as error:  # noqa: BLE001 - any failure here is re-raised by __exit__ on the test thread
            self.outcome.error = error
        finally:
            self._disarm()  # whatever happened, the paused step must not wait forever

    def _disarm(self) -> None:
        with open_connection(self.url, autocommit=True) as conn:
            conn.execute("UPDATE soak_step_faults SET armed = false")

    def _wait_for_pause(self, conn: psycopg.Connection) -> tuple[int, str] | None:
        """(pid, step) of the backend paused in the trigger, or None once the run is over."""
        prefix = "soak paused in "
        while not self._stop.is_set():
            row = conn.execute(
                "SELECT pid, application_name FROM pg_stat_activity WHERE application_name LIKE %s"
                " AND pid <> pg_backend_pid() AND datname = current_database() LIMIT 1",
                (prefix + "%",),
            ).fetchone()
            if row is not None:
                return row[0], row[1][len(prefix):]
            self._stop.wait(0.01)
        return None

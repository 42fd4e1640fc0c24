"""What goes wrong in a Celery fleet, and what holds: a worker killed with kill -9 in the middle
of a step, and a broker that goes away and comes back. The real daemon (its run monitoring and
run queue), real workers, the embedded broker and the embedded Postgres; every wait bounded.

Run monitoring polls every 3 s here instead of the shipped 30 s (this fleet's own dagster.yaml),
so that the documented bound, a dead worker's run failed within MISSES_TO_FAIL polls, is
checked in seconds.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import dagster as dg
import pytest

from curation_pipeline.cli.launcher import code_location_workspace, launch_partition_runs
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.core.trigger_policy import plan_scheduled_runs
from curation_pipeline.defs.partitions import register_partitions
from curation_pipeline.defs.trigger_runs import namespaces_with_unfinished_runs
from curation_pipeline.instance.celery_launcher import MISSES_TO_FAIL
from curation_pipeline.instance.embedded_broker import start_embedded_broker, stop_embedded_broker
from curation_pipeline.store.database import open_connection
from curation_pipeline.store.triggers import load_candidates
from curation_pipeline_tests.conftest import cycle_row, insert, node
from curation_pipeline_tests.support.celery_fleet import (
    answering_workers,
    celery_fleet,
    finished,
    kill_tree,
    stop,
)
from curation_pipeline_tests.support.lease_faults import lease_holder_pid

pytestmark = pytest.mark.slow

POLL_S = 3
NO_RETRY = {"dagster/max_retries": "0"}  # the daemon must not retry the run we look at


def _namespace(db, prefix: str) -> str:
    namespace = f"{prefix}-{uuid.uuid4().hex[:6]}"
    insert(db, node(namespace=namespace, text=f"Customer {namespace} prefers email over phone calls.", base_utility=0.9),
           node(namespace=namespace, text=f"Customer {namespace} prefers email to phone calls."))
    return namespace


def _launch(keys: list[str], *, queued: bool) -> list[str]:
    with dg.DagsterInstance.get() as instance:
        register_partitions(instance, keys)
        with code_location_workspace(instance) as workspace:
            return [run_id for key in keys
                    for run_id in launch_partition_runs(instance, workspace, [key], queued=queued, tags=NO_RETRY)]


def _node_rows(db, namespace: str) -> list[tuple]:
    return db.execute("SELECT id, pointer_summary, archived_at, merged_into, embedding IS NULL FROM memory_nodes"
                      " WHERE namespace = %s ORDER BY id", (namespace,)).fetchall()


def _starts(instance: dg.DagsterInstance, run_id: str) -> int:
    return len(instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_START))


def test_a_worker_killed_mid_step_leaves_nothing_half_written_and_its_run_fails_in_time(tmp_path, database_url, db):
    with celery_fleet(tmp_path, database_url) as fleet:
        fleet.set_instance(poll_interval_seconds=POLL_S)
        fleet.start_daemon()
        worker = fleet.start_worker(fleet.local_env(), "worker")
        fleet.wait_for(answering_workers(1), "the worker answering")
        namespace = _namespace(db, "killed")
        before = _node_rows(db, namespace)
        with open_connection(database_url) as holder, dg.DagsterInstance.get() as instance:
            # Every step that writes waits for these rows: the run is in the middle of a step,
            # its transaction open, when its worker dies.
            holder.execute("SELECT id FROM memory_nodes WHERE namespace = %s FOR UPDATE", (namespace,))
            [run_id] = _launch([partition_key("acme", namespace)], queued=False)
            fleet.wait_for(lambda: lease_holder_pid(db, "acme", namespace), "the run never took its lease")
            fleet.wait_for(lambda: instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.STARTED, "not started")
            killed_at = time.monotonic()
            kill_tree(worker)  # the worker and its pool: nothing is left to report the run's end

            run = fleet.wait_for(lambda: finished(instance, [run_id]), "the daemon never failed the dead run")[0]
            detected_s = time.monotonic() - killed_at
            holder.rollback()
            fleet.wait_for(lambda: lease_holder_pid(db, "acme", namespace) is None, "the lease stayed held")
            in_flight = namespaces_with_unfinished_runs(instance)
            message = instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_FAILURE)[-1].message

    assert run.status == dg.DagsterRunStatus.FAILURE
    assert "worker died" in message, message
    # Within MISSES_TO_FAIL polls of the monitoring (plus one poll for its phase, and the time
    # the workers get to answer).
    assert detected_s <= (MISSES_TO_FAIL + 1) * POLL_S + 10, detected_s
    # Nothing half-written: the step's transaction died with its worker.
    assert _node_rows(db, namespace) == before
    assert db.execute("SELECT count(*) FROM node_revisions WHERE run_id = %s", (run_id,)).fetchone()[0] == 0
    assert (cycle_row(db, run_id) or {}).get("status") != "success"
    # The namespace stays due for the next tick, and no run of it holds its place in the queue.
    assert ("acme", namespace) not in in_flight
    planned = plan_scheduled_runs(load_candidates(db), now=datetime.now(UTC), ceiling_secs=0, in_flight=in_flight)
    assert ("acme", namespace) in {run.state.name for run in planned}


def test_a_broker_that_goes_away_and_comes_back_loses_no_run_and_runs_none_twice(tmp_path, database_url, db):
    # A broker of the test's own (CURATION_BROKER_URL): the embedded one would be started again
    # by the first process of the fleet that needs it.
    with celery_fleet(tmp_path, database_url, embedded_broker=False) as fleet:
        broker = fleet.broker_dir
        fleet.set_instance(poll_interval_seconds=POLL_S)
        fleet.start_daemon()
        worker = fleet.start_worker(fleet.local_env(), "worker-1")
        fleet.wait_for(answering_workers(1), "the worker answering")
        with dg.DagsterInstance.get() as instance:
            # 1. Down when the daemon dequeues: the runs go back to the queue, nothing is sent.
            stop_embedded_broker(broker)
            queued = _launch([partition_key("acme", _namespace(db, "queued")) for _ in range(3)], queued=True)

            def requeued():
                events = [e for run_id in queued for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
                          if "re-submitting the run into the queue" in e.message]
                return events and all(run.status == dg.DagsterRunStatus.QUEUED
                                      for run in instance.get_runs(dg.RunsFilter(run_ids=queued)))

            fleet.wait_for(requeued, "the runs never went back to the queue")
            start_embedded_broker(broker)  # back: the queue sends them on its next try
            runs = fleet.wait_for(lambda: finished(instance, queued), "the requeued runs never finished")
            assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}, fleet.log_tail()

            # 2. Down while runs wait in it for a worker: its append-only file keeps them.
            stop(worker)
            waiting = _launch([partition_key("acme", _namespace(db, "waiting")) for _ in range(2)], queued=False)
            stop_embedded_broker(broker)
            start_embedded_broker(broker)
            fleet.start_worker(fleet.local_env(), "worker-2")
            runs = fleet.wait_for(lambda: finished(instance, waiting), "the waiting runs never finished")
            assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}, fleet.log_tail()

            # 3. Down while a run is in its steps: the run needs only Postgres, and ends well.
            namespace = _namespace(db, "inflight")
            with open_connection(database_url) as holder:
                holder.execute("SELECT id FROM memory_nodes WHERE namespace = %s FOR UPDATE", (namespace,))
                [in_flight] = _launch([partition_key("acme", namespace)], queued=False)
                fleet.wait_for(lambda: lease_holder_pid(db, "acme", namespace), "the run never took its lease")
                stop_embedded_broker(broker)
                time.sleep(2 * POLL_S)  # monitoring meanwhile cannot read the task: it decides nothing
                holder.rollback()
            [run] = fleet.wait_for(lambda: finished(instance, [in_flight]), "the in-flight run never finished")
            start_embedded_broker(broker)
            assert run.status == dg.DagsterRunStatus.SUCCESS, fleet.log_tail()

            every = queued + waiting + [in_flight]
            assert [_starts(instance, run_id) for run_id in every] == [1] * len(every)  # none ran twice
    for run_id in every:
        cycle = cycle_row(db, run_id)
        assert cycle["status"] == "success" and cycle["steps"]["consolidate_duplicates"]["pairs_merged"] == 1

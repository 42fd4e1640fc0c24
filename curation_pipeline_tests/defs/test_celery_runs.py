"""Runs on Celery workers (CURATION_RUN_LAUNCHER=celery), end to end: the embedded broker, the
real daemon, two real `curation-pipeline worker` processes (one of them "on another machine":
its own CURATION_HOME, only the three URLs in common) and the real job on the embedded Postgres.

One fleet serves the module's tests (a daemon and two workers take ~20 s to start on 2 cores).
Each test's namespaces are its own; those the triggers must leave alone are switched off for
them (manual and queued runs still run).
"""

from __future__ import annotations

import uuid

import dagster as dg
import pytest

from curation_pipeline.cli.launcher import code_location_workspace, launch_partition_runs
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.job import step_run_config
from curation_pipeline.defs.partitions import register_partitions
from curation_pipeline.store.database import open_connection
from curation_pipeline.store.triggers import set_curation_enabled
from curation_pipeline_tests.conftest import cycle_row, insert, node
from curation_pipeline_tests.support.celery_fleet import (
    answering_workers,
    celery_fleet,
    finished,
    pool_pids,
    run_pid,
    run_span,
)
from curation_pipeline_tests.support.lease_faults import lease_holder_pid

pytestmark = pytest.mark.slow

DUPLICATES = ("Customer {} prefers email over phone calls.", "Customer {} prefers email to phone calls.")
VERBOSE = "The onboarding call covered billing, seats and the rollout plan in detail. " * 12
SOLO_QUEUE = "solo"  # only the local worker listens there
QUEUE_TAG = "dagster-celery/queue"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, database_url):
    with celery_fleet(tmp_path_factory.mktemp("fleet"), database_url) as fleet:
        fleet.start_daemon(IDLE_THRESHOLD_SECS="3", CURATOR_SENSOR_INTERVAL_SECS="2", CURATOR_IDLE_FLOOR_SECS="0")
        local = fleet.start_worker(fleet.local_env(), "worker-local", "--queue", "dagster", "--queue", SOLO_QUEUE)
        remote = fleet.start_worker(fleet.remote_env("machine-b"), "worker-remote")
        fleet.wait_for(answering_workers(2), "two workers answering")
        fleet.workers = {"local": local, "remote": remote}
        yield fleet


def _namespace(db, prefix: str, *, triggers: bool) -> str:
    namespace = f"{prefix}-{uuid.uuid4().hex[:6]}"
    insert(db, node(namespace=namespace, text=DUPLICATES[0].format(namespace), base_utility=0.9),
           node(namespace=namespace, text=DUPLICATES[1].format(namespace)),
           node(namespace=namespace, text=VERBOSE, recall_count=0, embed=False))
    if not triggers:
        set_curation_enabled(db, "acme", namespace, False)
    return namespace


def _launch(keys: list[str], *, queued: bool, tags=None, run_config=None) -> list[str]:
    with dg.DagsterInstance.get() as instance:
        register_partitions(instance, keys)
        with code_location_workspace(instance) as workspace:
            return [run_id for key in keys for run_id in launch_partition_runs(
                instance, workspace, [key], queued=queued, tags=tags, run_config=run_config)]


def test_the_daemon_and_two_workers_curate_namespaces_that_went_idle(fleet, db):
    namespaces = [_namespace(db, "idle", triggers=True) for _ in range(6)]
    with dg.DagsterInstance.get() as instance:
        def sensor_runs():
            runs = instance.get_runs(dg.RunsFilter(tags={"dagster/sensor_name": "idle_namespace_sensor"}))
            done = [run for run in runs if run.is_finished and run.tags["curation/namespace"] in namespaces]
            return done if len(done) == len(namespaces) else []

        runs = fleet.wait_for(sensor_runs, "the idle sensor's runs never all finished")
        pids = {run.run_id: run_pid(instance, run.run_id) for run in runs}
    assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}, fleet.log_tail()
    for run in runs:
        cycle = cycle_row(db, run.run_id)
        assert cycle["status"] == "success" and cycle["steps"]["consolidate_duplicates"]["pairs_merged"] == 1
        assert cycle["steps"]["summarize_verbose"]["summarized"] == 1
    # Both workers ran some, each run in one of their warm pool processes.
    local, remote = pool_pids(fleet.workers["local"]), pool_pids(fleet.workers["remote"])
    assert set(pids.values()) <= local | remote
    assert set(pids.values()) & local and set(pids.values()) & remote
    # The other machine shared no file: it has no store, no broker of its own, only its Dagster home.
    assert sorted(path.name for path in (fleet.root / "machine-b").iterdir()) == ["dagster_home"]


def test_a_worker_builds_each_runs_resources_and_settings_anew(fleet, db):
    first, second = (_namespace(db, "leak", triggers=False) for _ in range(2))
    # Run 1 overrides its config in the launchpad: no merges, and an LLM that cannot be reached.
    overrides = {
        **step_run_config({"consolidate_duplicates": {"cap": 0}}),
        "resources": {"llm": {"config": {"enabled": True, "base_url": "http://127.0.0.1:9/v1"}}},
    }
    tags = {QUEUE_TAG: SOLO_QUEUE}  # one worker of concurrency 1: the same pool process
    [run_1] = _launch([partition_key("acme", first)], queued=True, tags=tags, run_config=overrides)
    with dg.DagsterInstance.get() as instance:
        fleet.wait_for(lambda: finished(instance, [run_1]), "run 1 never finished")
        [run_2] = _launch([partition_key("acme", second)], queued=True, tags=tags)
        [done_2] = fleet.wait_for(lambda: finished(instance, [run_2]), "run 2 never finished")
        assert run_pid(instance, run_1) == run_pid(instance, run_2) in pool_pids(fleet.workers["local"])
    cycle_1, cycle_2 = cycle_row(db, run_1), cycle_row(db, run_2)
    assert done_2.status == dg.DagsterRunStatus.SUCCESS, fleet.log_tail()
    assert cycle_1["steps"]["consolidate_duplicates"]["pairs_merged"] == 0
    assert cycle_1["health"]["llm_calls"] > 0  # it tried its LLM, and fell back offline
    # Run 2 in the same process: the job's own defaults, no LLM, nothing left of run 1.
    assert cycle_2["steps"]["consolidate_duplicates"]["pairs_merged"] == 1
    assert cycle_2["health"]["llm_calls"] == 0
    assert cycle_2["steps"]["summarize_verbose"]["summarized"] == 1


def test_runs_of_one_namespace_never_run_two_at_once(fleet, db, database_url):
    namespace = _namespace(db, "serial", triggers=False)
    key = partition_key("acme", namespace)
    others = [partition_key("acme", _namespace(db, "busy", triggers=False)) for _ in range(2)]
    # Through the run queue (its limit of one run per partition), with other work beside them.
    queued = _launch([key] * 6 + others, queued=True)
    with dg.DagsterInstance.get() as instance:
        runs = fleet.wait_for(lambda: finished(instance, queued), "the queued runs never all finished")
        assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}, fleet.log_tail()
        spans = sorted(run_span(instance, run_id) for run_id in queued[:6])
        assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:])), spans
        workers = {run_pid(instance, run_id) for run_id in queued}
    assert len(workers) > 1  # the fleet was busy on both workers meanwhile

    # Past the queue (launched directly, as `curation-pipeline run` does): the namespace's lease
    # holds. Run A blocks in its first write on rows held here; run B starts on the other worker
    # meanwhile, and waits for the lease until A has finished.
    insert(db, node(namespace=namespace, text=DUPLICATES[0].format("Lee Park"), base_utility=0.9),
           node(namespace=namespace, text=DUPLICATES[1].format("Lee Park")))  # work for run A
    with open_connection(database_url) as holder:
        holder.execute("SELECT id FROM memory_nodes WHERE namespace = %s FOR UPDATE", (namespace,))
        [run_a] = _launch([key], queued=False)
        with dg.DagsterInstance.get() as instance:
            fleet.wait_for(lambda: lease_holder_pid(db, "acme", namespace), "run A never took the lease")
            [run_b] = _launch([key], queued=False)
            fleet.wait_for(lambda: instance.get_run_by_id(run_b).status == dg.DagsterRunStatus.STARTED,
                           "run B never started")
        holder.rollback()
    with dg.DagsterInstance.get() as instance:
        runs = fleet.wait_for(lambda: finished(instance, [run_a, run_b]), "runs A and B never finished")
        assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}, fleet.log_tail()
        assert run_pid(instance, run_a) != run_pid(instance, run_b)  # two workers at once...
        windows = [_steps_window(instance, run_id) for run_id in (run_a, run_b)]
    assert windows[0][1] <= windows[1][0], windows  # ...and yet B's steps all came after A's
    assert cycle_row(db, run_a)["status"] == cycle_row(db, run_b)["status"] == "success"
    assert cycle_row(db, run_a)["steps"]["consolidate_duplicates"]["pairs_merged"] == 1
    assert cycle_row(db, run_b)["steps"]["consolidate_duplicates"]["pairs_merged"] == 0  # done by A


def _steps_window(instance: dg.DagsterInstance, run_id: str) -> tuple[float, float]:
    entries = instance.all_logs(run_id, of_type={dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS})
    return min(e.timestamp for e in entries), max(e.timestamp for e in entries)

"""`run` says what it is doing from its first second: a line before Dagster's
code server starts, one per run started, and a rate that reads sensibly at a namespace every
few seconds (not "(0.0/s)")."""

from __future__ import annotations

import io
import time
import uuid

import pytest

from curation_pipeline.cli.main import main
from curation_pipeline.cli.progress import Progress, rate_text
from curation_pipeline_tests.conftest import insert, node

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("done", "seconds", "unit", "text"),
    [
        (2500, 0.5, "row", "5,000.0/s"),
        (3, 2.0, "row", "1.5/s"),
        (1, 10.0, "namespace", "6.0/min"),
        (6, 50.0, "namespace", "7.2/min"),
        (1, 150.0, "namespace", "150 s per namespace"),
        (0, 30.0, "namespace", "none done yet"),
        (0, 0.0, "row", "none done yet"),
    ],
)
def test_a_rate_reads_in_the_unit_that_fits(done, seconds, unit, text):
    assert rate_text(done, seconds, unit) == text


def test_a_progress_line_never_says_zero_per_second():
    stream = io.StringIO()
    progress = Progress("curating", total=6, unit="namespace", stream=stream, every_secs=0)
    progress._started -= 20  # twenty seconds into the runs
    progress.advance()
    assert "0.0/s" not in stream.getvalue() and "/min" in stream.getvalue(), stream.getvalue()


def test_a_note_goes_to_the_same_stream():
    stream = io.StringIO()
    with Progress("curating", total=1, unit="namespace", stream=stream, every_secs=0) as progress:
        progress.note("started acme:x (run r1)")
    assert stream.getvalue().splitlines()[0] == "started acme:x (run r1)"


def test_run_says_it_is_starting_and_names_each_run_it_starts(db, dagster_home, capsys):
    namespace = f"progress-{uuid.uuid4().hex[:8]}"
    insert(db, node(namespace=namespace, text="Something the agent learned."))
    key = f"acme:{namespace}"
    assert main(["run", "--partition", key]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines[0].startswith("curating 1 namespace(s)"), lines
    [run_id] = [line.split()[-1] for line in captured.out.splitlines() if line.startswith(key)]
    started = lines.index(f"started {key} (run {run_id})")
    finished = next(i for i, line in enumerate(lines) if line.startswith("curating: 1/1 namespace(s)"))
    # The code server's start, the longest silence, ends with a line of its own.
    ready = next(i for i, line in enumerate(lines) if line.startswith("Dagster's code server is up ("))
    assert 0 < ready < started < finished
    assert "0.0/s" not in captured.err


def test_runs_of_one_job_share_one_execution_plan_so_each_launch_is_cheap(db, dagster_home):
    """The job's execution plan is asked of the code server once, not once per run (a call of
    seconds on a busy machine, which spaced the first runs 8-14 s apart)."""
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.cli.launcher import PartitionRunLauncher, code_location_workspace
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.defs.partitions import register_partitions

    keys = [f"acme:plan-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for key in keys:
        insert(db, node(namespace=key.split(":")[1], text="Something the agent learned."))
    prepare_dagster_home(load_settings())
    with dg.DagsterInstance.get() as instance:
        register_partitions(instance, keys)
        with code_location_workspace(instance) as workspace:
            launcher = PartitionRunLauncher(instance, workspace)
            asked = []
            location = launcher.location
            original = location.get_execution_plan
            location.get_execution_plan = lambda *a, **k: asked.append(1) or original(*a, **k)
            run_ids = [launcher.launch(key) for key in keys]
            location.get_execution_plan = original
            for run_id in run_ids:
                deadline = time.monotonic() + 180
                while instance.get_run_by_id(run_id).status not in (
                        dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE):
                    assert time.monotonic() < deadline
                    time.sleep(0.5)
                assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.SUCCESS
    assert asked == []  # both runs launched on the plan asked for when the launcher was made


def test_notes_from_several_threads_stay_whole_lines():
    import threading

    stream = io.StringIO()
    with Progress("curating", total=8, unit="namespace", stream=stream, every_secs=3600) as progress:
        threads = [threading.Thread(target=lambda n=n: [progress.note(f"started acme:n{n} (run r{n}-{i})")
                                                        for i in range(200)]) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    notes = [line for line in stream.getvalue().splitlines() if line.startswith("started")]
    assert len(notes) == 800 and all(line.count("started") == 1 and line.endswith(")") for line in notes)

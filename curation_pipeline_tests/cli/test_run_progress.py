"""`run` says what it is doing from its first second: a line before Dagster's
code server starts, one per run started, and a rate that reads sensibly at a namespace every
few seconds (not "(0.0/s)")."""

from __future__ import annotations

import io
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
    assert 0 < started < finished
    assert "0.0/s" not in captured.err

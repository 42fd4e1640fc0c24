"""Where the command line promises a one-line error, it never prints a traceback: hostile numbers
in a file, a directory given as the output file, absurd limits, a closed pipe; and Ctrl-C of
`run --all` stops it in an orderly way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid

import pytest

from curation_pipeline.cli.main import main
from curation_pipeline_tests.conftest import cycle_row, insert, node
from curation_pipeline_tests.support.cli_output import one_line_error

pytestmark = pytest.mark.slow

GOOD = {"tenant_id": "acme", "namespace": "support", "pointer_summary": "Dana prefers email."}


def test_an_integer_beyond_pythons_digit_limit_is_an_error_of_its_line(db, tmp_path, capsys):
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + '{"tenant_id": "acme", "namespace": "support", '
                    '"pointer_summary": "x", "recall_count": ' + "9" * 5000 + "}\n", encoding="utf-8")
    assert main(["import", str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert any(line.startswith(f"{path}:2: invalid JSON: ") and "digits" in line for line in err.splitlines()), err
    assert db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0] == 0


def test_export_to_a_directory_is_refused_before_anything_is_written(db, tmp_path, capsys):
    insert(db, node(text="Something to export."))
    assert main(["export", "-o", str(tmp_path)]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == f"error: cannot write {tmp_path}: it is a directory"
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


@pytest.mark.parametrize("argv", [["runs", "--limit", "99999999999999999999"],
                                  ["health", "--last", "99999999999999999999"]])
def test_an_absurd_limit_is_refused_by_the_argument_parser(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"argument {argv[1]}: must be at most" in err


def _env() -> dict:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def test_export_into_a_closed_pipe_ends_quietly(db):
    # Enough rows that the export outlives the reader: `export | head -1`.
    insert(db, *[node(text=f"Memory number {number} about the renewal.") for number in range(300)])
    command = [sys.executable, "-m", "curation_pipeline.cli.main", "export"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()) as export:
        first = export.stdout.readline()
        export.stdout.close()  # what `head -1` does after its line
        err = export.stderr.read().decode()
        code = export.wait(timeout=120)
    assert json.loads(first)["tenant_id"] == "acme"
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code == 128 + signal.SIGPIPE  # what a shell reports for a writer whose pipe closed


def test_a_partition_named_twice_is_one_namespace_in_the_progress(db, dagster_home, capsys):
    namespace = f"twice-{uuid.uuid4().hex[:8]}"
    insert(db, node(namespace=namespace, text="Something the agent learned."))
    assert main(["run", "--partition", f"acme:{namespace}", "--partition", f"acme:{namespace}"]) == 0
    err = capsys.readouterr().err
    assert "curating: 1/1 namespace(s)" in err and "/2 namespace(s)" not in err


def test_ctrl_c_of_run_all_stops_launching_lets_the_runs_in_flight_finish_and_prints_them(
        db, dagster_home, tmp_path):
    namespaces = [f"stop-{number}-{uuid.uuid4().hex[:6]}" for number in range(8)]
    for namespace in namespaces:
        insert(db, node(namespace=namespace, text="Something the agent learned.", embed=False))
    command = [sys.executable, "-m", "curation_pipeline.cli.main", "run", "--all"]
    # Its own process group, as a terminal's foreground job: Ctrl-C is SIGINT to the whole group.
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                          start_new_session=True, text=True) as cli:
        progress = []
        for line in cli.stderr:  # a plain line per finished run (stderr is a pipe)
            progress.append(line)
            if line.startswith("curating: 1/8"):
                os.killpg(cli.pid, signal.SIGINT)
                break
        rest_err = cli.stderr.read()
        out = cli.stdout.read()
        code = cli.wait(timeout=300)
    err = "".join(progress) + rest_err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == 130, (out, err)  # 128 + SIGINT: stopped by the operator
    assert "stopping: " in err
    # The table of every run that finished, with its run id; the rest were never launched.
    rows = [line.split() for line in out.splitlines() if line.startswith("acme:stop-")]
    assert 1 <= len(rows) < 8, out
    assert all(row[1] == "SUCCESS" and row[2] == "success" for row in rows), out
    for row in rows:  # every run that was launched finished its cycle, row and all
        assert cycle_row(db, row[-1])["status"] == "success"
    curated = {row[0] for row in rows}
    never_started = [f"acme:{ns}" for ns in namespaces if f"acme:{ns}" not in curated]
    assert f"not started: {len(never_started)} namespace(s)" in err
    assert db.execute(
        "SELECT count(*) FROM activity_log WHERE action = 'curation_cycle' AND namespace = ANY(%s)",
        ([key.split(":")[1] for key in never_started],),
    ).fetchone()[0] == 0


def test_a_second_ctrl_c_cancels_the_runs_in_flight_which_record_it(db, dagster_home):
    from curation_pipeline_tests.support.step_faults import install_step_pause, uninstall_step_pause

    namespace = f"cancel-{uuid.uuid4().hex[:8]}"
    old = node(namespace=namespace, text="Seen long ago.", last_recalled_at=None,
               created_at=node()["created_at"].replace(year=2020))
    insert(db, old)
    install_step_pause(db)
    db.execute("INSERT INTO soak_step_faults VALUES ('mark_stale_confidence', true)")
    command = [sys.executable, "-m", "curation_pipeline.cli.main", "run", "--partition", f"acme:{namespace}"]
    try:
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                              start_new_session=True, text=True) as cli:
            while db.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name ="
                             " 'soak paused in mark_stale_confidence'").fetchone()[0] == 0:
                assert cli.poll() is None, cli.stderr.read()
            os.killpg(cli.pid, signal.SIGINT)
            seen = []
            for line in cli.stderr:
                seen.append(line)
                if line.startswith("stopping: "):
                    os.killpg(cli.pid, signal.SIGINT)
                    break
            err = "".join(seen) + cli.stderr.read()
            out = cli.stdout.read()
            code = cli.wait(timeout=300)
    finally:
        db.execute("UPDATE soak_step_faults SET armed = false")
        uninstall_step_pause(db)
    assert "Traceback" not in err, err
    assert code == 130 and "canceling the 1 run(s) in flight" in err, (out, err)
    [row] = [line.split() for line in out.splitlines() if line.startswith(f"acme:{namespace}")]
    assert row[1] == "CANCELED"
    cycle = cycle_row(db, row[-1])
    assert cycle["status"] == "partial" and "mark_stale_confidence" in cycle["failed_steps"], cycle
    # The interrupted step's transaction rolled back: the node is as it was.
    assert db.execute("SELECT confidence FROM memory_nodes WHERE id = %s", (old["id"],)).fetchone()[0] == "default"

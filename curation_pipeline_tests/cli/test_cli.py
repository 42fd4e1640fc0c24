"""The command line: import (with every error reported, nothing half-imported), export, seed,
and bad input to `run`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from curation_pipeline.cli.main import main
from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.jsonl_rows import format_node_jsonl
from curation_pipeline.demo.corpus import build_seed_corpus
from curation_pipeline.demo.seeding import seed_store
from curation_pipeline_tests.conftest import node

pytestmark = pytest.mark.slow

GOOD = {"tenant_id": "acme", "namespace": "support", "pointer_summary": "Dana prefers email."}


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_import_reports_every_invalid_line_and_imports_nothing(db, tmp_path, capsys):
    lines = [
        json.dumps(GOOD),
        json.dumps({"namespace": "support", "pointer_summary": "no tenant"}),
        json.dumps({**GOOD, "embedding": [0.1, 0.2]}),
        '{"tenant_id": "acme", "namespace": "support", "pointer_summary": "x", "embedding": [NaN' + ", 0.0" * 383 + "]}",
        json.dumps({**GOOD, "confidence": "certain"}),
        json.dumps({**GOOD, "last_recalled_at": "yesterday"}),
        "{not json",
    ]
    code = main(["import", _write(tmp_path / "memories.jsonl", lines)])
    err = capsys.readouterr().err
    assert code == 1
    for line_number, reason in [(2, "tenant_id"), (3, "384"), (4, "NaN"), (5, "confidence"),
                                (6, "last_recalled_at"), (7, "invalid JSON")]:
        assert any(
            f"memories.jsonl:{line_number}:" in line and reason in line for line in err.splitlines()
        ), (line_number, reason, err)
    assert "nothing was imported" in err
    assert db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0] == 0


def test_import_skip_invalid_imports_only_the_valid_lines(db, tmp_path, capsys):
    path = _write(tmp_path / "m.jsonl", [json.dumps(GOOD), json.dumps({**GOOD, "pinned": "yes"})])
    assert main(["import", path, "--skip-invalid"]) == 0
    assert "imported 1 memory node(s)" in capsys.readouterr().out
    assert db.execute("SELECT tenant_id, namespace, pointer_summary FROM memory_nodes").fetchall() == [
        ("acme", "support", "Dana prefers email.")
    ]
    assert db.execute("SELECT current_epoch FROM namespace_activity").fetchone()[0] == 0


def test_import_refuses_ids_that_already_exist_and_keeps_the_store_unchanged(db, tmp_path, capsys):
    row = node(text="Original.")
    path = _write(tmp_path / "m.jsonl", [format_node_jsonl(row)])
    assert main(["import", path]) == 0
    clash = _write(tmp_path / "again.jsonl", [json.dumps(GOOD), format_node_jsonl({**row, "pointer_summary": "Changed."})])
    assert main(["import", clash]) == 1
    assert "again.jsonl:2: id: " + row["id"] + " already exists in the store" in capsys.readouterr().err
    assert db.execute("SELECT pointer_summary FROM memory_nodes").fetchall() == [("Original.",)]


def test_import_takes_a_merge_target_in_another_namespace_as_the_store_holds_it_and_says_so(db, tmp_path, capsys):
    # What an agent moving a keeper leaves behind: an export of that store must import.
    keeper = node(namespace="other", text="Keeper.")
    archived = node(text="Archived.", archived_at=keeper["created_at"], merged_into=keeper["id"])
    path = _write(tmp_path / "m.jsonl", [format_node_jsonl(keeper), format_node_jsonl(archived)])
    assert main(["import", path]) == 0
    assert any(line.endswith("m.jsonl:2: warning: merged_into: " + keeper["id"] + " (line 1) belongs to another"
                             " namespace (tenant 'acme', namespace 'other')") for line in capsys.readouterr().err.splitlines())
    assert db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0] == 2


def test_export_round_trips_every_node_including_archived_ones(db, tmp_path):
    keeper = node(text="Keeper text.")
    archived = node(text="Old text.", archived_at=keeper["created_at"], merged_into=keeper["id"])
    missing = node(text="No vector.", embed=False)
    source = _write(tmp_path / "in.jsonl", [format_node_jsonl(r) for r in (keeper, archived, missing)])
    assert main(["import", source]) == 0
    assert main(["export", "-o", str(tmp_path / "out.jsonl")]) == 0
    exported = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    by_id = {row["id"]: row for row in exported}
    assert set(by_id) == {keeper["id"], archived["id"], missing["id"]}
    assert by_id[archived["id"]]["merged_into"] == keeper["id"]
    assert by_id[missing["id"]]["embedding"] is None
    assert len(by_id[keeper["id"]]["embedding"]) == 384

    # The export imports into an empty store unchanged.
    db.execute("TRUNCATE memory_nodes, namespace_activity CASCADE")
    assert main(["import", str(tmp_path / "out.jsonl")]) == 0
    assert main(["export", "-o", str(tmp_path / "again.jsonl")]) == 0
    assert (tmp_path / "again.jsonl").read_text() == (tmp_path / "out.jsonl").read_text()


def test_seeding_twice_does_not_duplicate_the_corpus(db):
    first = seed_store(load_settings())
    assert first > 0 and seed_store(load_settings()) == 0
    assert db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0] == first


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--partition", "not-a-key"], "TENANT:NAMESPACE"),
        (["import", "/nonexistent/file.jsonl"], "cannot read"),
    ],
)
def test_bad_input_gets_a_clear_error(db, capsys, argv, message):
    assert main(argv) != 0
    assert message in capsys.readouterr().err


def test_a_bad_setting_is_named(capsys, monkeypatch):
    monkeypatch.setenv("CURATOR_CONSOLIDATE_CAP", "many")
    assert main(["seed"]) == 2
    assert "CURATOR_CONSOLIDATE_CAP" in capsys.readouterr().err


def test_demo_command_curates_every_seeded_namespace(tmp_path):
    """The README's first command, end to end, in a fresh CURATION_HOME, on the default embedder
    (all-MiniLM-L6-v2 on onnxruntime: the environment names none)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CURATION_HOME": str(tmp_path / "home")}
    completed = subprocess.run(
        [sys.executable, "-m", "curation_pipeline.cli.main", "demo"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    table = completed.stdout
    assert "seeded 530 memory node(s)" in table
    rows = [line.split() for line in table.splitlines() if line.startswith(("acme:", "globex:", "initech:"))]
    assert len(rows) == 6
    assert all(row[1] == "SUCCESS" and row[2] == "success" for row in rows)
    assert all(int(row[4]) > 0 for row in rows)  # every namespace merged something
    # The default is semantic, so step 6b links related memories (`-` with the lexical embedder).
    assert all(row[10].isdigit() for row in rows) and all(int(row[10]) > 0 for row in rows)

    exported = subprocess.run([sys.executable, "-m", "curation_pipeline.cli.main", "export"],
                              env=env, capture_output=True, text=True, timeout=300)
    assert exported.returncode == 0, exported.stderr[-3000:]
    nodes = [json.loads(line) for line in exported.stdout.splitlines() if line.strip()]
    assert {node["embedding_model"] for node in nodes if node["embedding"] is not None} == {
        "onnx:all-MiniLM-L6-v2-int8@8199be6f"}
    confidence = {(node["tenant_id"], node["namespace"], node["pointer_summary"]): node["confidence"] for node in nodes}
    corpus = build_seed_corpus(now=datetime.now(UTC))  # the texts do not depend on the time
    where = {node["id"]: (node["tenant_id"], node["namespace"], node["pointer_summary"]) for node in corpus.nodes}
    assert len(corpus.updates) == 13
    # Every planted update superseded (two per namespace, and one said as an event), and
    # nothing else: no background memory is another's new value.
    superseded = {key for key, level in confidence.items() if level == "superseded"}
    assert superseded == {where[older] for older, _ in corpus.updates}


def test_a_namespace_can_be_switched_off_and_on(db, capsys):
    assert main(["namespaces", "disable", "acme:support"]) == 0
    assert db.execute(
        "SELECT curation_enabled FROM namespace_activity WHERE tenant_id = 'acme' AND namespace = 'support'"
    ).fetchone()[0] is False
    capsys.readouterr()
    assert main(["namespaces", "list"]) == 0
    assert "acme:support  disabled" in capsys.readouterr().out.splitlines()
    assert main(["namespaces", "enable", "acme:support"]) == 0
    assert db.execute("SELECT curation_enabled FROM namespace_activity").fetchone()[0] is True
    capsys.readouterr()
    assert main(["namespaces", "list"]) == 0
    assert "acme:support  enabled" in capsys.readouterr().out.splitlines()
    assert main(["namespaces", "disable"]) == 2
    assert main(["namespaces", "disable", "no-colon"]) == 2


def test_importing_into_a_namespace_counts_as_activity(db, tmp_path):
    path = _write(tmp_path / "m.jsonl", [json.dumps(GOOD)])
    assert main(["import", path]) == 0
    db.execute("UPDATE namespace_activity SET last_interaction_at = now() - interval '1 day'")
    again = _write(tmp_path / "n.jsonl", [json.dumps({**GOOD, "pointer_summary": "Another memory."})])
    assert main(["import", again]) == 0
    age = db.execute("SELECT now() - last_interaction_at FROM namespace_activity").fetchone()[0]
    assert age.total_seconds() < 60


@pytest.mark.parametrize(("argv", "expected"), [
    (["namespaces", "--help"], ["list ", "every namespace's partition key and whether curation is enabled",
                                "sync ", "register every namespace", "enable ", "disable ", "remove ",
                                "its memory is kept"]),
    (["export", "--help"], ["--tenant T", "only this tenant's nodes (default: every tenant)", "--namespace N"]),
    (["ui", "--help"], ["--host HOST", "(default: 127.0.0.1", "--port PORT", "(default: 3000)"]),
    (["undo", "--help"], ["the start of one", "-v, --verbose"]),
])
def test_every_option_says_what_it_does_and_its_default(argv, expected, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # as argparse wraps it, on one line
    for words in expected:
        assert " ".join(words.split()) in text, words


def test_a_process_of_the_package_looks_up_its_runtime_dir_without_a_warning():
    """What the embedded Postgres does in every process (the CLI, the code server, each run):
    with XDG_RUNTIME_DIR unset, platformdirs would warn in each of them."""
    env = {name: value for name, value in os.environ.items() if name != "XDG_RUNTIME_DIR"}
    probe = "import curation_pipeline, platformdirs; platformdirs.user_runtime_path('python_PostgresServer')"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    bare = subprocess.run([sys.executable, "-c", probe.replace("curation_pipeline, ", "")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert "XDG_RUNTIME_DIR is not set" in bare.stderr  # what the package's filter silences


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["health"], ["namespaces", "list"]])
def test_no_command_warns_about_xdg_runtime_dir_where_it_is_unset(db, argv):
    """Containers, cron and CI have no XDG_RUNTIME_DIR: platformdirs' warning about it is noise
    (shown here even with every warning on, as PYTHONWARNINGS=default turns them on)."""
    env = {name: value for name, value in os.environ.items() if name != "XDG_RUNTIME_DIR"}
    env["PYTHONWARNINGS"] = "default"
    done = subprocess.run([sys.executable, "-m", "curation_pipeline.cli.main", *argv], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "XDG_RUNTIME_DIR" not in done.stderr and "Warning" not in done.stderr, done.stderr

"""Export writes only lines its own import accepts, by the import's own rule, and names every row
it cannot write (issue "Integrity, round three", points 9, 10 and the import's warning of point
15). Rows are written as an agent writes them: plain SQL, whatever the schema lets through."""

from __future__ import annotations

import json
import uuid

import pytest

from curation_pipeline.cli.main import main
from curation_pipeline_tests.cli.test_round_trip import TABLES, _agent_writes, _vector

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("columns", "reason"), [
    ({"tenant_id": " padded"}, "tenant_id: tenant ' padded' has leading or trailing whitespace"),
    ({"namespace": "bad\ntenant"}, "namespace: namespace 'bad\\ntenant' contains control character '\\n'"),
    ({"namespace": "n" * 250}, "namespace: namespace is 250 characters long; at most 200"),
    ({"embedding": _vector(0.0)}, "embedding: is all zeros in float32"),
])
def test_a_row_the_import_would_refuse_is_named_and_nothing_is_written(db, tmp_path, capsys, columns, reason):
    fine = _agent_writes(db, pointer_summary="Fine.")
    refused = _agent_writes(db, pointer_summary="Written by an agent.", **columns)
    target = tmp_path / "out.jsonl"
    assert main(["export", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"node {refused}: {reason}" in err, err
    assert fine not in err and "Traceback" not in err
    assert f"1 node(s) cannot be exported; {target} was not written" in err
    assert not target.exists()
    # The other namespaces still export, and import.
    if "tenant_id" not in columns and "namespace" not in columns:
        return
    assert main(["export", "-o", str(target), "--tenant", "acme", "--namespace", "support"]) == 0
    db.execute(f"TRUNCATE {TABLES} CASCADE")
    assert main(["import", str(target)]) == 0
    assert [row[0] for row in db.execute("SELECT id::text FROM memory_nodes")] == [fine]


def test_a_vector_without_a_model_comes_back_without_one(db, tmp_path, capsys):
    unnamed = _agent_writes(db, pointer_summary="A vector nobody named.", embedding=_vector(0.5, 0.1))
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    assert main(["export", "-o", str(first)]) == 0
    db.execute(f"TRUNCATE {TABLES} CASCADE")
    assert main(["import", str(first)]) == 0, capsys.readouterr().err
    assert db.execute("SELECT embedding IS NOT NULL, embedding_model FROM memory_nodes WHERE id = %s",
                      (unnamed,)).fetchone() == (True, None)
    assert main(["export", "-o", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")


def test_a_hand_written_vector_without_the_model_column_is_still_named_imported(db, tmp_path):
    path = tmp_path / "hand.jsonl"
    path.write_text(json.dumps({"tenant_id": "acme", "namespace": "support", "pointer_summary": "By hand.",
                                "embedding": [0.5] + [0.0] * 383}) + "\n")
    assert main(["import", str(path)]) == 0
    assert db.execute("SELECT embedding_model FROM memory_nodes").fetchone() == ("imported",)


def test_a_successor_in_another_namespace_is_called_a_supersession_not_a_merge_link(db, tmp_path, capsys):
    successor, older = str(uuid.uuid4()), str(uuid.uuid4())
    lines = [
        {"id": successor, "tenant_id": "acme", "namespace": "elsewhere", "pointer_summary": "Floor 5."},
        {"id": older, "tenant_id": "acme", "namespace": "support", "pointer_summary": "Floor 3.",
         "confidence": "superseded", "superseded_by": successor},
    ]
    path = tmp_path / "moved.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["import", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"{path}:2: warning: superseded_by:" in err
    assert "merge link" not in err
    assert "1 supersession(s) point at a successor in another namespace" in err

"""Export -> import -> export is the identity on everything the store holds that JSON Lines can
carry, however an agent wrote it; export names every row it cannot carry."""

from __future__ import annotations

import json
import uuid

import pytest

from curation_pipeline.cli.main import main

pytestmark = pytest.mark.slow

DIM = 384
TABLES = "memory_nodes, memory_access, namespace_activity, node_revisions, graph_vertices, graph_edges, graph_revisions"


def _vector(first: float, rest: float = 0.0) -> str:
    return "[" + ",".join([repr(first)] + [repr(rest)] * (DIM - 1)) + "]"


def _agent_writes(db, **columns) -> str:
    """A row as an agent writes it: plain SQL, whatever the schema lets through."""
    columns.setdefault("id", str(uuid.uuid4()))
    columns.setdefault("tenant_id", "acme")
    columns.setdefault("namespace", "support")
    columns.setdefault("pointer_summary", "A memory.")
    casts = {"embedding": "::vector", "created_at": "::timestamptz", "updated_at": "::timestamptz",
             "last_recalled_at": "::timestamptz", "archived_at": "::timestamptz"}
    names = list(columns)
    db.execute(
        f"INSERT INTO memory_nodes ({', '.join(names)}) VALUES ({', '.join('%s' + casts.get(n, '') for n in names)})",
        [columns[name] for name in names],
    )
    return columns["id"]


def _seed_every_edge_value(db) -> None:
    keeper = _agent_writes(
        db, pointer_summary="\t", memory_type="t" * 150, epoch=2**63 - 1, recall_count=2**31 - 1,
        embedding=_vector(1e19, 1e-20), embedding_model="", base_utility=1.7976931348623157e308,
        heat=-0.0, pinned=True, confidence="verified", created_at="0001-01-01 00:00:00+00",
        updated_at="9999-12-31 23:59:59.999999+00", last_recalled_at="2024-02-29 12:34:56.789012+00",
    )
    _agent_writes(db, pointer_summary="\u3000", epoch=-(2**63), memory_type="", archived_at="2024-01-01 00:00+00",
                  merged_into=keeper, base_utility=5e-324, heat=-1e-300)
    read = _agent_writes(db, pointer_summary="line\nbreak\r\n\u2028\u2029\x85 \x01 😀 \"quoted\" \\ back",
                         memory_type=" padded ", embedding_model="m" * 500, embedding=_vector(0.1, -0.25),
                         recall_count=4, last_recalled_at="2024-03-01 00:00+00")
    # Accesses recall() recorded (sql/016): export carries them in the node's recall columns,
    # the count capped at the column's largest value.
    db.execute("INSERT INTO memory_access VALUES (%s, 3, '2025-06-01 10:00+00'), (%s, 9, '2020-01-01 00:00+00')",
               (read, keeper))
    # A keeper an agent moved to another namespace, with the node merged into it left behind.
    moved = _agent_writes(db, namespace="other", pointer_summary="Moved keeper.")
    _agent_writes(db, pointer_summary="Merged into a moved keeper.", archived_at="2024-01-02 00:00+00",
                  merged_into=moved)
    # A chain through an archived keeper, a cycle, and an archived keeper merged into nothing.
    end = _agent_writes(db, pointer_summary="Chain end.")
    middle = _agent_writes(db, pointer_summary="Chain middle.", archived_at="2024-01-03 00:00+00", merged_into=end)
    _agent_writes(db, pointer_summary="Chain start.", archived_at="2024-01-03 00:00+00", merged_into=middle)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    _agent_writes(db, id=first, pointer_summary="Cycle one.", archived_at="2024-01-04 00:00+00")
    _agent_writes(db, id=second, pointer_summary="Cycle two.", archived_at="2024-01-04 00:00+00", merged_into=first)
    db.execute("UPDATE memory_nodes SET merged_into = %s WHERE id = %s", (second, first))
    lone = _agent_writes(db, pointer_summary="Archived alone.", archived_at="2024-01-05 00:00+00")
    _agent_writes(db, pointer_summary="Into an archived node.", archived_at="2024-01-05 00:00+00", merged_into=lone)
    # Names at the edge of the name rule, a model without a vector, the longest text we try.
    _agent_writes(db, tenant_id="東京", namespace="ns with space % and, comma", pointer_summary="x" * 200_000,
                  embedding_model="named-but-no-vector")
    _agent_writes(db, tenant_id="g" * 200, namespace="n" * 200, pointer_summary="Long names.")


def test_export_import_export_is_identical_on_every_edge_value_the_schema_allows(db, tmp_path, capsys):
    _seed_every_edge_value(db)
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    assert main(["export", "-o", str(first)]) == 0
    db.execute(f"TRUNCATE {TABLES} CASCADE")
    assert main(["import", str(first)]) == 0, capsys.readouterr().err
    imported = capsys.readouterr()
    assert "imported 14 memory node(s)" in imported.out
    # The links the curator would never make are imported as they are, and named.
    assert "4 merge link(s) do not end at an active node of their namespace" in imported.err
    assert main(["export", "-o", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")
    assert len(first.read_text(encoding="utf-8").splitlines()) == 14
    recalls = [(row["recall_count"], row["last_recalled_at"]) for row in map(json.loads, first.read_text().splitlines())]
    assert (7, "2025-06-01T10:00:00+00:00") in recalls and (2**31 - 1, "2024-02-29T12:34:56.789012+00:00") in recalls


def test_export_names_every_row_it_cannot_carry_and_writes_nothing(db, tmp_path, capsys):
    fine = _agent_writes(db, pointer_summary="Fine.")
    infinite = _agent_writes(db, pointer_summary="Created at infinity.", created_at="infinity", updated_at="infinity")
    before_time = _agent_writes(db, pointer_summary="Recalled at -infinity.", last_recalled_at="-infinity")
    far = _agent_writes(db, pointer_summary="Archived in year 10000.", archived_at="10000-01-01 00:00+00")
    not_a_number = _agent_writes(db, pointer_summary="NaN utility.", base_utility=float("nan"), heat=float("inf"))
    target = tmp_path / "out.jsonl"
    assert main(["export", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for node_id, column, value in [(infinite, "created_at", "infinity"), (before_time, "last_recalled_at", "-infinity"),
                                   (far, "archived_at", "10000-01-01"), (not_a_number, "base_utility", "NaN"),
                                   (not_a_number, "heat", "Infinity")]:
        assert any(line.startswith(f"node {node_id}: {column} is {value}") for line in err.splitlines()), (column, err)
    assert fine not in err
    assert f"4 node(s) cannot be exported; {target} was not written (fix them, or pass --skip-invalid" in err
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_skip_invalid_exports_every_other_node_and_lists_those_it_left_out(db, tmp_path, capsys):
    fine = _agent_writes(db, pointer_summary="Fine.")
    also = _agent_writes(db, pointer_summary="Also fine.")
    infinite = _agent_writes(db, pointer_summary="Created at infinity.", created_at="infinity", updated_at="infinity")
    target = tmp_path / "out.jsonl"
    assert main(["export", "--skip-invalid", "-o", str(target)]) == 0
    err = capsys.readouterr().err
    assert f"left out: node {infinite}: created_at is infinity" in err
    assert f"exported 2 memory node(s) to {target}; left out 1 node(s) listed above (--skip-invalid)" in err
    lines = target.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and fine in lines[0] + lines[1] and also in lines[0] + lines[1]
    assert infinite not in target.read_text(encoding="utf-8")
    # What it wrote imports back whole into an empty store.
    db.execute(f"TRUNCATE {TABLES} CASCADE")
    assert main(["import", str(target)]) == 0
    assert "imported 2 memory node(s)" in capsys.readouterr().out

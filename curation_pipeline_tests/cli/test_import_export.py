"""`import`, `export` and `seed` on hostile and large input: every bad line named as
FILE:LINE: column: reason, nothing half-written, --skip-invalid skipping exactly the bad lines,
and progress shown as rows done and rows per second."""

from __future__ import annotations

import json
import os
import re
import threading
import uuid

import pytest

from curation_pipeline.cli.main import PRINTED_PROBLEMS, main
from curation_pipeline.core.jsonl_rows import format_node_jsonl
from curation_pipeline_tests.conftest import insert, node

pytestmark = pytest.mark.slow

DIMENSION = 384
ARCHIVED_AT = "2025-06-01T00:00:00+00:00"


def good(text: str = "Dana prefers email.", **columns) -> dict:
    return {"tenant_id": "acme", "namespace": "support", "pointer_summary": text, **columns}


def vector(*head: float) -> list[float]:
    return [*head, *([0.0] * (DIMENSION - len(head)))]


def write(path, lines: list[str | bytes]) -> str:
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines))
    return str(path)


def texts(db) -> list[str]:
    return [row[0] for row in db.execute("SELECT pointer_summary FROM memory_nodes ORDER BY pointer_summary")]


def warning_lines(err: str, path: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(f"{path}:") and ": warning: " in line]


def problem_lines(err: str, path: str) -> list[str]:
    """The `FILE:LINE: ...` error lines of standard error (warnings left out)."""
    return [line for line in err.splitlines() if line.startswith(path + ":") and ": warning: " not in line]


def orphaned_archived_nodes(db) -> list[str]:
    """Archived nodes whose keeper chain does not end at an active node of their namespace."""
    return [row[0] for row in db.execute("""
        WITH RECURSIVE chain (start, id, tenant_id, namespace, hops) AS (
            SELECT id, id, tenant_id, namespace, 0 FROM memory_nodes WHERE merged_into IS NOT NULL
            UNION ALL
            SELECT c.start, m.merged_into, c.tenant_id, c.namespace, c.hops + 1
            FROM chain c JOIN memory_nodes m ON m.id = c.id
            WHERE m.merged_into IS NOT NULL AND c.hops < 100
        )
        SELECT DISTINCT c.start::text FROM chain c
        WHERE NOT EXISTS (
            SELECT FROM chain e JOIN memory_nodes k ON k.id = e.id
            WHERE e.start = c.start AND k.archived_at IS NULL
              AND (k.tenant_id, k.namespace) = (c.tenant_id, c.namespace))
    """)]


# ---- issue 13 §4: inputs that crashed instead of failing cleanly ------------------------------


@pytest.mark.parametrize(
    ("embedding", "expected"),
    [
        (vector(0.5, 1e300), "embedding[1]: 1e+300 overflows float32"),
        (vector(0.5, 0.5, 3.5e38), "embedding[2]: 3.5e+38 overflows float32"),
        (vector(1e-50), "embedding: is all zeros in float32"),
    ],
)
def test_a_vector_float32_cannot_hold_is_a_clean_error_of_its_line(db, tmp_path, capsys, embedding, expected):
    path = write(tmp_path / "m.jsonl", [json.dumps(good()), json.dumps(good("Bad vector.", embedding=embedding))])
    assert main(["import", path]) == 1
    err = capsys.readouterr().err
    (problem,) = problem_lines(err, path)
    assert problem.startswith(f"{path}:2: {expected}")
    assert "Traceback" not in err and "COPY" not in err
    assert texts(db) == []
    assert main(["import", path, "--skip-invalid"]) == 0
    assert texts(db) == ["Dana prefers email."]


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-10:00"])
def test_a_timestamp_outside_what_the_store_holds_is_a_clean_error_of_its_line(db, tmp_path, capsys, stamp):
    path = write(tmp_path / "m.jsonl", [json.dumps(good()), json.dumps(good("Old.", last_recalled_at=stamp))])
    assert main(["import", path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: last_recalled_at: '{stamp}' is out of range" in err
    assert "Traceback" not in err and texts(db) == []


def test_the_extreme_timestamps_that_fit_import_and_export_unchanged(db, tmp_path):
    path = write(tmp_path / "m.jsonl", [json.dumps(good(created_at="0001-01-01T00:00:00Z",
                                                        updated_at="9999-12-31T23:59:59.999999Z"))])
    assert main(["import", path]) == 0
    assert main(["export", "-o", str(tmp_path / "out.jsonl")]) == 0
    (exported,) = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert (exported["created_at"], exported["updated_at"]) == (
        "0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59.999999+00:00")


def test_merge_problems_name_their_lines_all_of_them_and_skip_invalid_skips_exactly_those(db, tmp_path, capsys):
    a, b, c, keeper, other = (str(uuid.uuid4()) for _ in range(5))
    missing = str(uuid.uuid4())
    lines = [
        json.dumps(good("Keeper.", id=keeper)),                                                # 1 ok
        json.dumps(good("A.", id=a, archived_at=ARCHIVED_AT, merged_into=b)),                  # 2 cycle: warned
        json.dumps(good("B.", id=b, archived_at=ARCHIVED_AT, merged_into=a)),                  # 3 cycle: warned
        json.dumps(good("To nowhere.", archived_at=ARCHIVED_AT, merged_into=missing)),         # 4 missing
        json.dumps({**good("Elsewhere.", id=other), "namespace": "billing"}),                  # 5 ok
        json.dumps(good("Across.", archived_at=ARCHIVED_AT, merged_into=other)),               # 6 other namespace: warned
        json.dumps(good("Into C.", archived_at=ARCHIVED_AT, merged_into=c)),                   # 7 target only on a bad line
        json.dumps(good("C.", id=c, heat="hot")),                                              # 8 invalid
        json.dumps(good("Chained.", archived_at=ARCHIVED_AT, merged_into=a)),                  # 9 into the cycle: warned
        json.dumps(good("Merged.", archived_at=ARCHIVED_AT, merged_into=keeper)),              # 10 ok
    ]
    path = write(tmp_path / "m.jsonl", lines)
    assert main(["import", path]) == 1
    err = capsys.readouterr().err
    assert problem_lines(err, path) == [
        f"{path}:4: merged_into: {missing} does not exist (neither in this file nor in the store)",
        f"{path}:7: merged_into: {c} is only on line 8, which cannot be imported",
        f"{path}:8: heat: must be a number, got 'hot'",
    ]
    # Links the store itself can hold (an agent's cycle, a keeper moved elsewhere) are warnings.
    assert warning_lines(err, path) == [
        f"{path}:2: warning: merged_into: merge cycle: {a} (line 2) -> {b} (line 3) -> {a} (line 2)",
        f"{path}:3: warning: merged_into: merge cycle: {a} (line 2) -> {b} (line 3) -> {a} (line 2)",
        f"{path}:6: warning: merged_into: {other} (line 5) belongs to another namespace (tenant 'acme', namespace 'billing')",
        f"{path}:9: warning: merged_into: {a} (line 2) is in a merge cycle",
    ]
    assert "error: 3 problem(s) on 3 line(s)" in err and "nothing was imported" in err
    assert texts(db) == []

    assert main(["import", path, "--skip-invalid"]) == 0
    out = capsys.readouterr().out
    assert "imported 7 memory node(s)" in out and "skipped 3 invalid line(s)" in out
    assert texts(db) == ["A.", "Across.", "B.", "Chained.", "Elsewhere.", "Keeper.", "Merged."]


def test_a_chain_that_does_not_end_at_an_active_node_is_imported_and_named(db, tmp_path, capsys):
    alone, middle = str(uuid.uuid4()), str(uuid.uuid4())
    path = write(tmp_path / "m.jsonl", [
        json.dumps(good("Archived alone.", id=alone, archived_at=ARCHIVED_AT)),
        json.dumps(good("Middle.", id=middle, archived_at=ARCHIVED_AT, merged_into=alone)),
        json.dumps(good("End.", archived_at=ARCHIVED_AT, merged_into=middle)),
    ])
    assert main(["import", path]) == 0
    err = capsys.readouterr().err
    assert [line.split(": warning: ")[0] for line in warning_lines(err, path)] == [f"{path}:2", f"{path}:3"]
    assert "2 merge link(s) do not end at an active node of their namespace" in err
    assert texts(db) == ["Archived alone.", "End.", "Middle."]


def test_a_file_may_merge_into_nodes_already_in_the_store(db, tmp_path):
    keeper = node(text="Stored keeper.")
    archived = node(text="Stored archived.", archived_at=keeper["created_at"], merged_into=keeper["id"])
    insert(db, keeper, archived)
    path = write(tmp_path / "m.jsonl", [
        json.dumps(good("Into the keeper.", archived_at=ARCHIVED_AT, merged_into=keeper["id"])),
        json.dumps(good("Into the archived one.", archived_at=ARCHIVED_AT, merged_into=archived["id"])),
    ])
    assert main(["import", path]) == 0
    assert len(texts(db)) == 4 and orphaned_archived_nodes(db) == []


def test_invalid_utf8_names_its_line_and_can_be_skipped(db, tmp_path, capsys):
    path = write(tmp_path / "m.jsonl", [
        json.dumps(good("First.")),
        b'{"tenant_id": "acme", "namespace": "support", "pointer_summary": "caf\xe9"}',
        json.dumps(good("Third.")),
    ])
    assert main(["import", path]) == 1
    err = capsys.readouterr().err
    assert problem_lines(err, path) == [f"{path}:2: invalid UTF-8 (byte 0xe9 at position 70 of the line)"]
    assert texts(db) == []
    assert main(["import", path, "--skip-invalid"]) == 0
    assert texts(db) == ["First.", "Third."]


def test_ids_already_in_the_store_are_reported_per_line_and_skipped_alone(db, tmp_path, capsys):
    first, second = node(text="Stored one."), node(text="Stored two.")
    insert(db, first, second)
    path = write(tmp_path / "m.jsonl", [
        format_node_jsonl({**first, "pointer_summary": "Changed one."}),
        json.dumps(good("New.")),
        format_node_jsonl({**second, "pointer_summary": "Changed two."}),
    ])
    assert main(["import", path]) == 1
    assert problem_lines(capsys.readouterr().err, path) == [
        f"{path}:1: id: {first['id']} already exists in the store",
        f"{path}:3: id: {second['id']} already exists in the store",
    ]
    assert main(["import", path, "--skip-invalid"]) == 0
    assert texts(db) == ["New.", "Stored one.", "Stored two."]


def test_every_bad_line_is_counted_but_only_the_first_ones_are_printed(db, tmp_path, capsys):
    lines = [json.dumps(good(f"Memory {n}.", heat="hot" if n % 2 else 1.0)) for n in range(1, 241)]
    path = write(tmp_path / "m.jsonl", lines)
    assert main(["import", path]) == 1
    err = capsys.readouterr().err
    printed = problem_lines(err, path)
    assert printed == [f"{path}:{n}: heat: must be a number, got 'hot'" for n in range(1, 2 * PRINTED_PROBLEMS, 2)]
    assert f"... and {120 - PRINTED_PROBLEMS} more problem(s)" in err
    assert "error: 120 problem(s) on 120 line(s)" in err
    assert texts(db) == []
    assert main(["import", path, "--skip-invalid"]) == 0
    assert db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0] == 120
    assert "skipped 120 invalid line(s)" in capsys.readouterr().out


def test_a_missing_file_or_a_directory_is_a_clear_error(db, tmp_path, capsys):
    assert main(["import", str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err == f"error: cannot read {tmp_path / 'nope.jsonl'}: no such file\n"
    assert main(["import", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: cannot read {tmp_path}: it is a directory\n"


def test_a_file_is_read_once_so_it_may_come_from_a_pipe(db, tmp_path):
    fifo = tmp_path / "nodes.pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(json.dumps(good("Through a pipe.")) + "\n"), daemon=True)
    writer.start()
    try:
        assert main(["import", str(fifo)]) == 0
    finally:
        writer.join(timeout=30)
    assert texts(db) == ["Through a pipe."]


# ---- progress (issue 14 §3), as written when standard error is not a terminal ---------------


def test_import_shows_rows_and_rows_per_second(db, tmp_path, capsys):
    path = write(tmp_path / "big.jsonl", [json.dumps(good(f"Memory {n}.")) for n in range(2500)] + [""])
    assert main(["import", path]) == 0
    err = capsys.readouterr().err.splitlines()
    checking = [line for line in err if line.startswith("checking big.jsonl: ")]
    importing = [line for line in err if line.startswith("importing big.jsonl: ")]
    assert checking and checking[-1].startswith("checking big.jsonl: 2500 row(s) (")
    assert importing and importing[-1].startswith("importing big.jsonl: 2500/2500 row(s) (")
    assert re.fullmatch(r"importing big\.jsonl: 2500/2500 row\(s\) \([\d,]+\.\d/s\), \d+\.\d s elapsed", importing[-1])


def test_export_shows_rows_and_writes_the_file_whole_or_not_at_all(db, tmp_path, capsys):
    insert(db, *(node(text=f"Memory {n}.", embed=False) for n in range(3)))
    out = tmp_path / "out.jsonl"
    assert main(["export", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "exporting: 3/3 row(s) (" in err and f"exported 3 memory node(s) to {out}" in err
    before = out.read_text()
    assert len(before.splitlines()) == 3

    # A value JSON cannot carry (an agent wrote NaN): a clean error, and the earlier export stays.
    db.execute("UPDATE memory_nodes SET heat = 'NaN' WHERE pointer_summary = 'Memory 2.'")
    assert main(["export", "-o", str(out)]) == 2
    assert "cannot be exported" in capsys.readouterr().err
    assert out.read_text() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.jsonl"]  # no temporary file left


def test_seed_shows_rows_embedded_and_written(db, capsys):
    assert main(["seed"]) == 0
    captured = capsys.readouterr()
    assert "seeded 530 memory node(s)" in captured.out
    writing = [line for line in captured.err.splitlines() if line.startswith("seed: writing: ")]
    assert writing and writing[-1].startswith("seed: writing: 530/530 row(s) (")
    assert any(line.startswith("seed: embedding: ") for line in captured.err.splitlines())
    assert main(["seed"]) == 0
    assert "already seeded" in capsys.readouterr().out

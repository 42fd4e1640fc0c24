"""The command line on long work: `run` shows progress and run ids, `runs` lists them (previews
and undos too), `health` prints the namespaces' health over their cycles and fails on a failed
check; previews stay off curate_namespace's partition status in the UI."""

from __future__ import annotations

import re
import uuid

import dagster as dg
import pytest

from curation_pipeline.cli.main import main
from curation_pipeline.core.health import HEALTH_FIELDS
from curation_pipeline.defs.previews import PREVIEW_JOB_NAME
from curation_pipeline_tests.conftest import insert, node
from curation_pipeline_tests.support.ui_graphql import PARTITION_STATUS, ui_graphql

pytestmark = pytest.mark.slow

DUPLICATES = ("Customer Dana Reyes prefers email over phone calls.", "Customer Dana Reyes prefers email to phone calls.")


def _namespaces(db) -> tuple[list[str], dict[str, str]]:
    """Two namespaces of their own (Dagster's run storage is shared by the session's tests)."""
    suffix = uuid.uuid4().hex[:8]
    keys, keepers = [], {}
    for name in ("support", "sales"):
        namespace = f"{name}-{suffix}"
        keeper, _ = insert(db, node(namespace=namespace, text=DUPLICATES[0], base_utility=0.9),
                           node(namespace=namespace, text=DUPLICATES[1]))
        keys.append(f"acme:{namespace}")
        keepers[f"acme:{namespace}"] = keeper
    return keys, keepers


def _table(text: str) -> list[list[str]]:
    """The rows of the first CLI table in `text` (after its rule of dashes, up to a blank
    line), split into cells on runs of two or more blanks."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() and set(line.replace(" ", "")) == {"-"})
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def test_run_shows_progress_and_run_ids_which_runs_lists_with_previews_and_undos(db, dagster_home, capsys):
    keys, _ = _namespaces(db)
    support, sales = keys

    assert main(["run", "--dry-run", "--partition", support]) == 0
    preview_out = capsys.readouterr()
    [preview_row] = _table(preview_out.out)
    preview_id = preview_row[-1]
    assert "previewing: 1/1 namespace(s)" in preview_out.err

    assert main(["run", "--partition", support, "--partition", sales]) == 0
    out, err = capsys.readouterr()
    # Progress on standard error as the runs finish: done out of the total, elapsed time.
    assert "curating: 1/2 namespace(s)" in err and "curating: 2/2 namespace(s)" in err
    assert "s elapsed" in err
    rows = {row[0]: row for row in _table(out)}
    assert set(rows) == {support, sales}
    assert all(row[1] == "SUCCESS" and row[4] == "1" for row in rows.values())  # one merge each
    run_ids = {key: row[-1] for key, row in rows.items()}
    with dg.DagsterInstance.get() as instance:
        assert {key: instance.get_run_by_id(run_id).tags["dagster/partition"]
                for key, run_id in run_ids.items()} == {support: support, sales: sales}

    assert main(["undo", "--run", run_ids[support]]) == 0
    undo_id = capsys.readouterr().out.split("undo id: ")[1].split()[0]

    assert main(["runs", "--partition", support]) == 0
    listed = _table(capsys.readouterr().out)
    # Newest first: the undo, the real run, the preview; each with its kind, status and counts.
    assert [(row[0], row[2], row[3], row[6]) for row in listed] == [
        (undo_id, "undo", "SUCCESS", "no"),
        (run_ids[support], "curation", "SUCCESS", "no"),
        (preview_id, "preview", "SUCCESS", "yes"),
    ]
    assert listed[0][7].startswith("restored=2 conflicts=0")
    assert "merged=1" in listed[1][7] and "merged=1" in listed[2][7]
    assert all(row[1] == support for row in listed)
    assert main(["runs", "--partition", support, "--limit", "1"]) == 0
    assert [row[0] for row in _table(capsys.readouterr().out)] == [undo_id]

    # The UI's partition status of curate_namespace shows the real run, not the preview.
    with dg.DagsterInstance.get() as instance, ui_graphql(instance) as query:
        def status(partition_set: str) -> dict:
            results = query(PARTITION_STATUS, partitionSet=partition_set)["partitionSetOrError"]
            return {r["partitionName"]: r["runId"] for r in results["partitionStatusesOrError"]["results"]}

        assert status("curate_namespace_partition_set")[support] == run_ids[support]
        assert status(f"{PREVIEW_JOB_NAME}_partition_set")[support] == preview_id


def _health_rows(text: str) -> list[dict[str, str]]:
    """`health`'s lines, one per cycle or undo, as {column: cell} over every table it printed
    (a group wider than the terminal is cut into several, each repeating the first four
    columns). Cells are cut at the column starts the rule of dashes gives."""
    merged: dict[tuple, dict[str, str]] = {}
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if len(lines) < 3 or not lines[0].endswith(":") or not lines[1].startswith("namespace"):
            continue
        header, rule, *rows = lines[1:]
        starts = [match.start() for match in re.finditer(r"-+", rule)]
        bounds = list(zip(starts, [*starts[1:], None]))
        names = [header[a:b].strip() for a, b in bounds]
        for row in rows:
            cells = dict(zip(names, (row[a:b].strip() for a, b in bounds)))
            merged.setdefault((cells["namespace"], cells["run"], cells["kind"]), {}).update(cells)
    return list(merged.values())


def test_health_prints_each_namespace_over_its_cycles_and_fails_on_a_failed_check(db, dagster_home, capsys):
    keys, keepers = _namespaces(db)
    support, sales = keys
    assert main(["run", "--partition", support, "--partition", sales]) == 0
    capsys.readouterr()

    assert main(["health"]) == 0
    out = capsys.readouterr().out
    rows = {row["namespace"]: row for row in _health_rows(out) if row["namespace"] in keys}
    assert set(rows) == {support, sales}
    # Every number of the record is in some column, under its title (one "superseded" per group).
    titles = {title for row in rows.values() for title in row}
    assert {f.title for f in HEALTH_FIELDS if f.key != "superseded_nodes"} <= titles
    assert all((row["active"], row["merged"], row["failed checks"], row["kind"]) == ("1", "1", "none", "cycle")
               for row in rows.values())

    # An agent archives a keeper: the next cycle of that namespace fails the orphan check.
    db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (keepers[support],))
    assert main(["run", "--partition", support]) == 0
    capsys.readouterr()
    assert main(["health", "--partition", support, "--last", "2"]) == 1
    out, err = capsys.readouterr()
    rows = _health_rows(out)
    assert [row["namespace"] for row in rows] == [support, support]
    assert [row["failed checks"] for row in rows] == ["none", "no_orphaned_archives"]  # oldest first
    assert f"failed check: {support} no_orphaned_archives: 1 archived node(s)" in err
    assert main(["health", "--partition", sales, "--last", "1"]) == 0

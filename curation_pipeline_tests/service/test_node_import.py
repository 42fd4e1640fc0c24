"""The import service: what is written is exactly what was checked, even when the file or the
store changes between the check and the write, and both phases count their rows."""

from __future__ import annotations

import json
import uuid
from contextlib import contextmanager

import pytest

from curation_pipeline.core.partition_keys import validate_name
from curation_pipeline.service.node_import import import_jsonl_file
from curation_pipeline.store.database import open_connection
from curation_pipeline.store.nodes_io import ImportConflictError
from curation_pipeline_tests.conftest import insert, node

DIMENSION = 384


class Counter:
    def __init__(self) -> None:
        self.done = 0

    def advance(self, count: int = 1) -> None:
        self.done += count


def hooked_progress(on_label: dict, counters: dict):
    """A progress factory that runs ``on_label[label prefix]()`` when that phase starts."""

    @contextmanager
    def progress(label: str, total: int | None):
        for prefix, action in on_label.items():
            if label.startswith(prefix):
                action()
        counters[label] = (counter := Counter(), total)
        yield counter

    return progress


def lines(*texts: str, ids: list[str] | None = None) -> str:
    ids = ids or [str(uuid.uuid4()) for _ in texts]
    return "".join(json.dumps({"id": node_id, "tenant_id": "acme", "namespace": "support",
                               "pointer_summary": text}) + "\n" for node_id, text in zip(ids, texts))


def run_import(database_url, path, progress, **options):
    with open_connection(database_url) as conn:
        return import_jsonl_file(conn, path, dimension=DIMENSION, validate_name=validate_name,
                                 progress=progress, **options)


def count(db) -> int:
    return db.execute("SELECT count(*) FROM memory_nodes").fetchone()[0]


def texts(db) -> list[str]:
    return [row[0] for row in db.execute("SELECT pointer_summary FROM memory_nodes ORDER BY 1")]


@pytest.mark.parametrize(
    "rewritten",
    [lines("One, edited.", "Two, edited."), lines("One.") + "{oops\n", ""],
    ids=["edited", "broken", "emptied"],
)
def test_a_file_changed_after_the_check_imports_what_was_checked(db, database_url, tmp_path, rewritten):
    path = tmp_path / "m.jsonl"
    path.write_text(lines("One.", "Two.", "Three."), encoding="utf-8")
    rewrite = lambda: path.write_text(rewritten, encoding="utf-8")  # noqa: E731
    report = run_import(database_url, path, hooked_progress({"importing": rewrite}, {}))
    assert report.imported == 3
    assert texts(db) == ["One.", "Three.", "Two."]


def test_vectors_and_ids_come_out_of_the_spool_as_they_went_in(db, database_url, tmp_path):
    keeper, archived = str(uuid.uuid4()), str(uuid.uuid4())
    vector = [0.1 * (n % 7) - 0.3 for n in range(DIMENSION)]
    path = tmp_path / "m.jsonl"
    path.write_text(
        json.dumps({"id": keeper, "tenant_id": "acme", "namespace": "support", "pointer_summary": "Keeper.",
                    "embedding": vector}) + "\n"
        + json.dumps({"id": archived, "tenant_id": "acme", "namespace": "support", "pointer_summary": "Old.",
                      "archived_at": "2025-06-01T00:00:00Z", "merged_into": keeper}) + "\n",
        encoding="utf-8",
    )
    run_import(database_url, path, hooked_progress({}, {}))
    stored_vector, model = db.execute(
        "SELECT embedding, embedding_model FROM memory_nodes WHERE id = %s", (keeper,)).fetchone()
    assert model == "imported"
    assert stored_vector.to_list() == pytest.approx(vector, rel=1e-6)
    assert db.execute("SELECT merged_into::text FROM memory_nodes WHERE id = %s", (archived,)).fetchone()[0] == keeper


def test_an_id_an_agent_writes_meanwhile_fails_the_import_cleanly(db, database_url, tmp_path):
    ids = [str(uuid.uuid4()), str(uuid.uuid4())]
    path = tmp_path / "m.jsonl"
    path.write_text(lines("One.", "Two.", ids=ids), encoding="utf-8")
    agent_writes = lambda: insert(db, node(id=ids[1], text="The agent's own."))  # noqa: E731
    with pytest.raises(ImportConflictError, match="written to the store meanwhile"):
        run_import(database_url, path, hooked_progress({"importing": agent_writes}, {}))
    assert [row[0] for row in db.execute("SELECT pointer_summary FROM memory_nodes")] == ["The agent's own."]


def test_both_passes_count_their_rows_and_the_report_says_what_was_skipped(db, database_url, tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(lines(*(f"Memory {n}." for n in range(2300))) + "\n" + '{"bad": 1}\n', encoding="utf-8")
    counters: dict = {}
    report = run_import(database_url, path, hooked_progress({}, counters), skip_invalid=True)
    assert (report.written, report.imported, report.skipped_lines) == (True, 2300, {2302})
    (checking, _), (importing, total) = counters["checking m.jsonl"], counters["importing m.jsonl"]
    assert checking.done == 2301  # every row read, the invalid one too (not the blank line)
    assert importing.done == total == 2300
    assert count(db) == 2300


def test_without_skip_invalid_a_bad_line_means_nothing_is_written(db, database_url, tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(lines("One.", "Two.") + '{"tenant_id": "acme"}\n', encoding="utf-8")
    report = run_import(database_url, path, hooked_progress({}, {}))
    assert not report.written and report.imported == 0
    assert [(error.line, error.column) for error in report.problems.first()] == [(3, "namespace"), (3, "pointer_summary")]
    assert count(db) == 0


# --------------------------------------------------------------------------- an import racing a run

DUPLICATES = ("Customer Dana Reyes prefers email over phone calls.",
              "Customer Dana Reyes prefers email to phone calls.")
MERGE_EVERYTHING = {"consolidate_duplicates": {"similarity_threshold": 0.7}}


def _blocked_on_a_lock(db) -> bool:
    return db.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
    ).fetchone()[0] > 0


@pytest.mark.slow  # runs the job
def test_a_run_that_merges_an_imports_target_while_it_writes_leaves_no_broken_chain(
        db, database_url, instance, tmp_path):
    import threading
    import time

    from curation_pipeline_tests.conftest import fetch_node, run_cycle

    keeper, target = insert(db, node(text=DUPLICATES[0], base_utility=0.9), node(text=DUPLICATES[1]))
    archived = str(uuid.uuid4())
    path = tmp_path / "race.jsonl"
    path.write_text(lines(*[f"Filler memory {n}." for n in range(50)]) + json.dumps({
        "id": archived, "tenant_id": "acme", "namespace": "support", "pointer_summary": DUPLICATES[1],
        "archived_at": "2024-01-01T00:00:00+00:00", "merged_into": target}) + "\n", encoding="utf-8")
    results, threads = [], []

    def run_merging_the_target() -> None:
        # The import has checked the target's chain and is about to write: a run merges the
        # target into its keeper now. It must wait for the import, or the import must see it.
        from curation_pipeline.defs.job import step_run_config

        merge_everything = step_run_config(MERGE_EVERYTHING)
        thread = threading.Thread(target=lambda: results.append(run_cycle(instance, run_config=merge_everything)))
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 120
        while thread.is_alive() and not _blocked_on_a_lock(db) and time.monotonic() < deadline:
            time.sleep(0.01)

    report = run_import(database_url, path, hooked_progress({"importing": run_merging_the_target}, {}))
    threads[0].join(timeout=120)
    [result] = results
    assert report.written and result.success
    assert fetch_node(db, target)["archived_at"] is not None  # the run merged the target
    # The imported node points at the end of the chain, not at an archived keeper.
    assert str(fetch_node(db, archived)["merged_into"]) == keeper
    assert db.execute(
        "SELECT count(*) FROM memory_nodes a JOIN memory_nodes k ON k.id = a.merged_into"
        " WHERE k.archived_at IS NOT NULL").fetchone()[0] == 0
    checks = {check["name"]: check["passed"] for check in
              db.execute("SELECT metadata->'checks' FROM activity_log WHERE action = 'curation_cycle'"
                         " AND run_id = %s", (result.run_id,)).fetchone()[0]}
    assert checks["no_orphaned_archives"] is True

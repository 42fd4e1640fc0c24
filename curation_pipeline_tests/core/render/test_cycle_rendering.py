"""What the UI and the CLI show of a cycle: its steps in a stable order, graph changes, previews."""

from __future__ import annotations

from curation_pipeline.core.cycles import combine_cycles
from curation_pipeline.core.render.changes import (
    CYCLE_COLUMNS,
    cycle_outcome,
    cycle_rows,
    ordered_counts,
    preview_text,
    step_tables,
)
from curation_pipeline.core.render.tables import cycle_table, health_table, run_counts
from curation_pipeline.service.steps import consolidate, graph_sync
from curation_pipeline.service.steps.registry import STEPS

# As Postgres returns jsonb: keys sorted by length, then bytes, not in the order they were written.
CONSOLIDATE = {"pass": "full", "repointed": 0, "focus_nodes": 0, "pairs_merged": 2, "llm_model": "m",
               "llm_requests": 2, "nodes_archived": 2, "nodes_compared": 9, "zeta_new_count": 1}


def test_counts_come_in_the_order_a_reader_wants_whatever_the_storage_order():
    assert [key for key, _ in ordered_counts(consolidate.SPEC, CONSOLIDATE)] == [
        "pairs_merged", "nodes_archived", "repointed", "pass", "nodes_compared", "focus_nodes",
        "llm_model", "llm_requests", "zeta_new_count",
    ]


def test_a_reexecuted_cycle_says_which_run_ran_each_step():
    cycle = combine_cycles([
        {"run_id": "parent", "status": "partial", "duration_s": 1.0, "steps": {
            "consolidate_duplicates": {"status": "succeeded", **CONSOLIDATE},
            "revectorize": {"status": "failed", "error": "RaiseException: refused"}}},
        {"run_id": "child", "status": "success", "duration_s": 1.0, "root_run_id": "parent",
         "steps": {"revectorize": {"status": "succeeded", "embedded": 3, "reembedded": 1}}},
    ], STEPS)
    rows = cycle_rows(cycle, "child", STEPS)
    assert all(list(row) == [name for name, _, _ in CYCLE_COLUMNS] for row in rows)
    by_step = {row["step"]: row for row in rows}
    assert by_step["2 consolidate_duplicates"]["run"] == "parent"
    assert by_step["2 consolidate_duplicates"]["result"] == "merged: 2"
    assert by_step["2 consolidate_duplicates"]["counts"].startswith("pairs_merged=2, nodes_archived=2, repointed=0")
    assert by_step["4 revectorize"] == {"step": "4 revectorize", "status": "succeeded", "run": "child (this run)",
                                        "result": "embedded: 4", "counts": "embedded=3, reembedded=1"}
    assert by_step["6 sync_graph"]["status"] == "not run"
    assert cycle_outcome(cycle) == ("success over 2 runs (first parent, last child); failed steps: none")


def test_graph_sync_shows_the_vertices_and_edges_it_wrote():
    vertices = [
        {"node_id": "n1", "before": None, "after": {"archived": False, "pinned": True, "heat": 0.5, "summary": "A."}},
        {"node_id": "n2", "before": {"archived": False, "pinned": False, "heat": 0.1, "summary": "B."},
         "after": {"archived": True, "pinned": False, "heat": 0.1, "summary": "B."}},
    ]
    edges = [{"label": "merged_into", "source": "n2", "target": "n1", "properties": {}}]
    [table] = step_tables(graph_sync.SPEC, [], edges=edges, vertices=vertices).values()
    assert table.rows == (
        {"node": "n1", "graph change": "created: archived False, pinned True, heat 0.5, summary A."},
        {"node": "n2", "graph change": "archived: False → True"},
        {"node": "n2", "graph change": "edge merged_into → n1"},
    )
    assert step_tables(graph_sync.SPEC, [])["changes"].rows == ()


def test_the_cli_tables_carry_run_ids_and_health():
    metadata = {"status": "success", "steps": {"consolidate_duplicates": {"status": "succeeded", "pairs_merged": 2}}}
    table = cycle_table([("acme:support", "run-1", "SUCCESS", metadata)], STEPS)
    header, _, row = table.splitlines()
    assert header.split()[-2:] == ["run", "id"] and row.split()[-1] == "run-1"
    assert run_counts("curation_cycle", metadata, STEPS) == "merged=2 superseded=0"
    assert run_counts("curation_undo", {"nodes_restored": ["a", "b"], "conflicts": [], "signals_withdrawn": 1,
                                        "edges_retracted": 0}, STEPS) == "restored=2 conflicts=0 signals=1 edges=0"
    health = {"active_nodes": 3, "stale_share": 0.25, "llm_acceptance_rate": None}
    text = health_table([{"tenant_id": "acme corp", "namespace": "a", "run_id": "run-1",
                          "finished_at": "2026-01-02T03:04:05.678+00:00", "health": health,
                          "checks": [{"name": "no_orphaned_archives", "passed": False}]}], STEPS, width=400)
    row = text.splitlines()[3]
    assert row.startswith("acme%20corp:a  cycle  2026-01-02 03:04:05  run-1")
    assert "25.0" in row and row.rstrip().endswith("no_orphaned_archives")  # stale% in percent


def test_the_health_table_fits_the_width_and_tells_the_two_superseded_apart():
    health = {"active_nodes": 82, "archived_nodes": 7, "stale_share": 0.11, "superseded": 2,
              "superseded_nodes": 3, "duration_s": 3.5, "llm_acceptance_rate": None}
    cycles = [{"tenant_id": "acme", "namespace": "support-bot", "run_id": "7b0c2f7e-1234-4567-89ab-cdef01234567",
               "finished_at": "2026-01-02T03:04:05", "health": health, "checks": []},
              {"tenant_id": "acme", "namespace": "support-bot", "run_id": "1f2e3d4c-1234-4567-89ab-cdef01234567",
               "finished_at": "2026-01-02T03:05:05", "health": health, "checks": [], "kind": "undo"}]
    for width in (80, 100, 160):
        text = health_table(cycles, STEPS, width=width)
        assert max(len(line) for line in text.splitlines()) <= width
        # Every number is in some table, whatever the width: 11.0 (percent, not 0.11), 82, 3.5 s.
        assert "11.0" in text and "0.11" not in text and " 82 " in text and "3.5" in text
    blocks = health_table(cycles, STEPS, width=400).split("\n\n")
    state, work, legend = blocks
    assert state.startswith("the namespace after each cycle or undo:") and work.startswith("what each cycle did:")
    assert "superseded" in state.splitlines()[1] and "superseded" in work.splitlines()[1]
    assert "  superseded (after) active memories superseded by a newer one" in legend
    assert "  superseded (did) memories marked superseded by a newer one this cycle" in legend
    assert state.splitlines()[4].split()[:4] == ["acme:support-bot", "undo", "2026-01-02", "03:05:05"]
    assert "7b0c2f7e" in state and "1234-4567" not in state  # the run id's start, as the UI shows it


def test_a_previewed_merge_shows_the_merged_text_even_when_step_3_then_summarizes_the_keeper():
    def change(step, node_id, before, after, reason=None):
        return {"step": step, "node_id": node_id, "reason": reason,
                "before": {"pointer_summary": before}, "after": {"pointer_summary": after}}

    merge = {"keeper_id": "k", "absorbed_id": "a", "similarity": 0.95}
    preview = {"changes": [
        change("consolidate_duplicates", "k", "Dana prefers email.", "Dana prefers email. Invoices go to billing.", merge),
        change("consolidate_duplicates", "a", "Dana likes email.", "Dana likes email.", merge),
        change("summarize_verbose", "k", "Dana prefers email. Invoices go to billing.", "Dana: email."),
    ]}
    text = preview_text("acme:support", preview, STEPS)
    assert "-> Dana prefers email. Invoices go to billing." in text
    assert "summarize k (43 -> 12 chars): Dana: email." in text


def test_a_run_whose_process_died_says_what_happened_and_what_comes_next():
    from curation_pipeline.core.render.tables import cycle_state, run_end_line

    running = {"status": "running", "steps": {}}
    assert cycle_state("FAILURE", running) == "unfinished" and cycle_state("STARTED", running) == "running"
    died = "Run execution process for run-1 unexpectedly exited with exit code -9."
    line = run_end_line("acme:support", "run-1", "FAILURE", running, died, will_retry=True)
    assert line.startswith("acme:support: run run-1 ended FAILURE: Run execution process for run-1 "
                           "unexpectedly exited with exit code -9; its cycle did not finish")
    assert "the daemon retries it" in line and "curation/retry_of=run-1" in line
    line = run_end_line("acme:support", "run-1", "FAILURE", running, died, will_retry=False)
    assert line.endswith("run it again with `curation-pipeline run --partition acme:support`")
    # A step that failed says why itself (`failures`); a success needs no line.
    failed_step = {"status": "partial", "errors": {"revectorize": "boom"}}
    assert run_end_line("acme:support", "run-1", "FAILURE", failed_step, "Steps failed", False) is None
    assert run_end_line("acme:support", "run-1", "SUCCESS", {"status": "success"}, None, False) is None
    table = cycle_table([("acme:support", "run-1", "FAILURE", running)], STEPS)
    assert table.splitlines()[2].split()[:3] == ["acme:support", "FAILURE", "unfinished"]

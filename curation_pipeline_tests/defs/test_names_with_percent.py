"""Tenant and namespace names are data, never SQL text: names full of placeholder, quote and
format characters are curated, undone and exported exactly like plain ones.

Each name pair gets the same small corpus that gives every step work (a merge, a summary, an
embedding, a stale mark, a signal, graph vertices and the merge's edge) and a neighbour in a
plain-named namespace with the same corpus, which must stay untouched.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from curation_pipeline.cli.main import main
from curation_pipeline.service.undo import undo_run
from curation_pipeline_tests.conftest import NOW, cycle_row, insert, node, run_cycle

pytestmark = pytest.mark.slow

PARAPHRASES = (
    "Customer Dana Reyes prefers email over phone calls.",
    "Customer Dana Reyes prefers email to phone calls.",
)
VERBOSE = ("The onboarding call with Initech covered SSO setup, billing contacts and data "
           "retention. " * 7).strip()

HOSTILE_NAMES = [
    pytest.param("x%y", "m%%n", id="percent"),
    pytest.param("%s", "%(t)s", id="placeholders"),
    pytest.param("x%%y", "%b %t %%", id="escaped-percent"),
    pytest.param("{}", "{tenant} {0}", id="braces"),
    pytest.param("o'brien", 'say "hi" \\ back\\slash', id="quotes-and-backslash"),
    pytest.param("ünïcødé-名前", "🧠 mémoire % ' \"", id="unicode"),
    pytest.param("t" * 199 + "%", ("%s" + "n'" * 66)[:200], id="200-characters"),
]
NEIGHBOUR = ("plain", "neighbour")


def _corpus(tenant_id: str, namespace: str) -> list[dict]:
    return [
        node(tenant_id, namespace, PARAPHRASES[0], base_utility=0.9),
        node(tenant_id, namespace, PARAPHRASES[1], recall_count=0, epoch=0),
        node(tenant_id, namespace, VERBOSE, recall_count=0),
        node(tenant_id, namespace, "Old fact.", last_recalled_at=NOW - timedelta(days=60)),
        node(tenant_id, namespace, "Waiting for its vector.", embed=False),
    ]


def _namespace_content(db, tenant_id: str, namespace: str) -> dict:
    where = (tenant_id, namespace)
    return {
        "nodes": db.execute(
            "SELECT id::text, pointer_summary, embedding::text, confidence, archived_at, merged_into"
            " FROM memory_nodes WHERE tenant_id = %s AND namespace = %s ORDER BY id", where,
        ).fetchall(),
        "signals": db.execute(
            "SELECT memory_id::text, status FROM training_signals"
            " WHERE tenant_id = %s AND namespace = %s ORDER BY 1", where,
        ).fetchall(),
        "vertices": db.execute(
            "SELECT node_id::text, archived FROM graph_vertices"
            " WHERE tenant_id = %s AND namespace = %s ORDER BY 1", where,
        ).fetchall(),
        "edges": db.execute(
            "SELECT e.source_id::text, e.target_id::text, e.retracted_at IS NULL FROM graph_edges e"
            " JOIN graph_vertices v ON v.node_id = e.source_id"
            " WHERE v.tenant_id = %s AND v.namespace = %s ORDER BY 1, 2", where,
        ).fetchall(),
    }


@pytest.mark.parametrize(("tenant_id", "namespace"), HOSTILE_NAMES)
def test_a_hostile_name_goes_through_a_full_cycle_undo_and_export(db, instance, database_url, tmp_path,
                                                                  tenant_id, namespace):
    insert(db, *_corpus(tenant_id, namespace), *_corpus(*NEIGHBOUR))
    db.execute("UPDATE namespace_activity SET current_epoch = 500")
    neighbour_before = _namespace_content(db, *NEIGHBOUR)
    before = _namespace_content(db, tenant_id, namespace)

    result = run_cycle(instance, tenant_id, namespace)

    assert result.success
    cycle = cycle_row(db, result.run_id)
    assert cycle["status"] == "success" and (cycle["tenant_id"], cycle["namespace"]) == (tenant_id, namespace)
    steps = cycle["steps"]
    assert steps["reclassify_stale"]["signals_created"] == 1
    assert steps["consolidate_duplicates"]["pairs_merged"] == 1
    assert steps["summarize_verbose"]["summarized"] == 1
    assert steps["revectorize"]["embedded"] == 2  # the waiting node and the summary (the keeper said it already)
    assert steps["mark_stale_confidence"]["marked_stale"] == 1
    assert steps["sync_graph"]["vertices_created"] == 5
    assert all(counts.get("skipped_concurrent", 0) == 0 for counts in steps.values()), steps
    revisions = db.execute(
        "SELECT DISTINCT tenant_id, namespace, run_id FROM node_revisions"
    ).fetchall()
    assert revisions == [(tenant_id, namespace, result.run_id)]
    assert db.execute(
        "SELECT count(*) FROM graph_edges WHERE retracted_at IS NULL"
    ).fetchone()[0] == 1
    assert db.execute(
        "SELECT last_curation_run_id FROM namespace_activity WHERE tenant_id = %s AND namespace = %s",
        (tenant_id, namespace),
    ).fetchone()[0] == result.run_id
    assert _namespace_content(db, *NEIGHBOUR) == neighbour_before

    [report] = undo_run(database_url, result.run_id)

    assert report.conflicts == []
    after_undo = _namespace_content(db, tenant_id, namespace)
    assert after_undo["nodes"] == before["nodes"]
    assert {status for _, status in after_undo["signals"]} == {"withdrawn"}
    assert [retracted for *_, retracted in after_undo["edges"]] == [False]

    output = tmp_path / "export.jsonl"
    assert main(["export", "-o", str(output), "--tenant", tenant_id, "--namespace", namespace]) == 0
    exported = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["id"] for row in exported) == [row[0] for row in before["nodes"]]
    assert {(row["tenant_id"], row["namespace"]) for row in exported} == {(tenant_id, namespace)}
    assert _namespace_content(db, *NEIGHBOUR) == neighbour_before

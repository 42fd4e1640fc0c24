"""The whole job per partition: invariants over the seed corpus, failure and re-execution,
and an agent writing while a step runs."""

from __future__ import annotations

from datetime import timedelta

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

import curation_pipeline.service.steps.consolidate
import curation_pipeline.service.steps.reclassify
import curation_pipeline.service.steps.stale_confidence
import curation_pipeline.service.steps.summarize
from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.partition_keys import partition_key
from curation_pipeline.defs.job import JOB_NAME, step_run_config
from curation_pipeline.demo.seeding import seed_store
from curation_pipeline.store.database import open_connection
from curation_pipeline_tests.conftest import (
    NOW,
    cycle_row,
    fetch_node,
    insert,
    node,
    refuse_vector_writes,
    run_cycle,
)

pytestmark = pytest.mark.slow


def _snapshot(db) -> dict[str, tuple]:
    return {
        row[0]: row[1:]
        for row in db.execute(
            "SELECT id::text, tenant_id, namespace, archived_at IS NOT NULL FROM memory_nodes"
        ).fetchall()
    }


def test_cycles_over_the_seed_corpus_keep_every_invariant(db, instance):
    seeded = seed_store(load_settings())
    assert seeded > 300
    before = _snapshot(db)
    namespaces = db.execute(
        "SELECT DISTINCT tenant_id, namespace FROM memory_nodes ORDER BY 1, 2"
    ).fetchall()
    assert len(namespaces) >= 6

    step_totals: dict[str, int] = {}
    for _ in range(3):
        for tenant_id, namespace in namespaces:
            result = run_cycle(instance, tenant_id, namespace)
            assert result.success, (tenant_id, namespace)
            for _step, counts in cycle_row(db, result.run_id)["steps"].items():
                for key in ("signals_created", "pairs_merged", "summarized", "embedded",
                            "marked_stale", "vertices_created"):
                    step_totals[key] = step_totals.get(key, 0) + counts.get(key, 0)
    # Every step had work on the demo corpus.
    assert all(step_totals[key] > 0 for key in step_totals), step_totals

    after = _snapshot(db)
    # Nothing deleted; nobody moved tenant or namespace; active + archived count unchanged.
    assert set(after) == set(before)
    assert all(after[i][:2] == before[i][:2] for i in before)
    # Every archived node that was merged points at an ACTIVE keeper of its own namespace.
    orphans = db.execute(
        """
        SELECT a.id FROM memory_nodes a LEFT JOIN memory_nodes k ON k.id = a.merged_into
        WHERE a.merged_into IS NOT NULL
          AND (k.archived_at IS NOT NULL OR k.tenant_id <> a.tenant_id OR k.namespace <> a.namespace)
        """
    ).fetchall()
    assert orphans == []
    # No revision, signal, vertex or edge crossed a tenant or namespace.
    crossings = db.execute(
        """
        SELECT 'revision' FROM node_revisions r JOIN memory_nodes m ON m.id = r.node_id
            WHERE (m.tenant_id, m.namespace) <> (r.tenant_id, r.namespace)
        UNION ALL SELECT 'signal' FROM training_signals s JOIN memory_nodes m ON m.id = s.memory_id
            WHERE (m.tenant_id, m.namespace) <> (s.tenant_id, s.namespace)
        UNION ALL SELECT 'vertex' FROM graph_vertices v JOIN memory_nodes m ON m.id = v.node_id
            WHERE (m.tenant_id, m.namespace) <> (v.tenant_id, v.namespace)
        UNION ALL SELECT 'edge' FROM graph_edges e
            JOIN graph_vertices s ON s.node_id = e.source_id JOIN graph_vertices t ON t.node_id = e.target_id
            WHERE (s.tenant_id, s.namespace) <> (t.tenant_id, t.namespace)
        """
    ).fetchall()
    assert crossings == []
    # Every merge and summary can be explained: the archived node's text is unchanged and
    # each rewritten text has its previous version in node_revisions.
    unexplained = db.execute(
        """
        SELECT r.node_id FROM node_revisions r
        WHERE r.before->>'pointer_summary' IS DISTINCT FROM r.after->>'pointer_summary'
          AND r.step NOT IN ('consolidate_duplicates', 'summarize_verbose')
        """
    ).fetchall()
    assert unexplained == []
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] > 0
    # At most one pending signal per node and signal type.
    assert db.execute(
        "SELECT count(*) FROM (SELECT memory_id FROM training_signals WHERE status = 'pending'"
        " GROUP BY memory_id, signal_type HAVING count(*) > 1) d"
    ).fetchone()[0] == 0


def test_a_cycle_on_an_unchanged_namespace_changes_nothing(db, instance):
    insert(db, node(text="Stable fact one."), node(text="Stable fact two, quite different."))
    first = run_cycle(instance)
    assert first.success
    revisions = db.execute("SELECT count(*) FROM node_revisions").fetchone()[0]
    second = run_cycle(instance)
    steps = cycle_row(db, second.run_id)["steps"]
    assert steps["sync_graph"]["nodes_considered"] == 0
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] == revisions
    assert all(counts.get("skipped_concurrent", 0) == 0 for counts in steps.values())


def _reconstructable_job():
    repository = ReconstructableRepository.for_module("curation_pipeline.defs.definitions", "defs")
    return repository.get_reconstructable_job(JOB_NAME)


def test_a_failed_step_leaves_the_others_done_and_reexecution_finishes_the_work(db, instance):
    keeper, _ = insert(
        db,
        node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
        node(text="Customer Dana Reyes prefers email to phone calls."),
    )
    stale = insert(db, node(text="Never used.", recall_count=0, epoch=0))[0]
    # A restatement is said once: the keeper's text (and vector) stays; step 4 still has a
    # node without a vector to embed.
    unembedded = insert(db, node(text="Invoices for Orbital Foods go to ap@orbital.example.", embed=False))[0]
    db.execute("UPDATE namespace_activity SET current_epoch = 500")
    key = partition_key("acme", "support")
    instance.add_dynamic_partitions("namespaces", [key])
    with refuse_vector_writes(db):
        with dg.execute_job(
            _reconstructable_job(), instance, run_config={}, tags={"dagster/partition": key}
        ) as failed:
            assert not failed.success
            step_status = {
                e.node_name: e.event_type_value for e in failed.all_events
                if e.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE")
            }
            parent_run_id = failed.run_id
    assert step_status["revectorize"] == "STEP_FAILURE"
    for independent in ("reclassify_stale", "consolidate_duplicates", "summarize_verbose",
                        "mark_stale_confidence", "sync_graph"):
        assert step_status[independent] == "STEP_SUCCESS", independent
    assert "log_curation_activity" not in step_status  # needs revectorize: skipped
    assert "associate_concepts" not in step_status

    partial = cycle_row(db, parent_run_id)
    assert partial["status"] == "partial" and partial["failed_steps"] == ["revectorize"]
    assert "vector writes are refused" in partial["errors"]["revectorize"]
    assert partial["steps"]["consolidate_duplicates"]["pairs_merged"] == 1
    assert fetch_node(db, keeper)["pointer_summary"] == "Customer Dana Reyes prefers email over phone calls."
    assert fetch_node(db, unembedded)["embedding"] is None
    # A failed run does not count as a curation of the namespace.
    assert db.execute("SELECT last_curated_at FROM namespace_activity").fetchone()[0] is None
    revisions_before = db.execute("SELECT count(*) FROM node_revisions").fetchone()[0]

    with dg.execute_job(
        _reconstructable_job(), instance, run_config={}, tags={"dagster/partition": key},
        reexecution_options=dg.ReexecutionOptions.from_failure(parent_run_id, instance),
    ) as retried:
        assert retried.success
        executed = {e.node_name for e in retried.all_events if e.event_type_value == "STEP_SUCCESS"}
        retry_run_id = retried.run_id
    assert executed == {"revectorize", "associate_concepts", "log_curation_activity"}
    finished = cycle_row(db, retry_run_id)
    assert finished["status"] == "success" and finished["parent_run_id"] == parent_run_id
    assert finished["steps"]["revectorize"]["embedded"] == 1
    assert fetch_node(db, unembedded)["embedding"] is not None
    # Nothing done twice: one more revision (the embedding), one signal, one archived node.
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] == revisions_before + 1
    assert db.execute("SELECT count(*) FROM training_signals").fetchone()[0] == 1
    assert db.execute("SELECT memory_id::text FROM training_signals").fetchone()[0] == stale
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL").fetchone()[0] == 1
    assert db.execute("SELECT last_curation_run_id FROM namespace_activity").fetchone()[0] == retry_run_id


@pytest.mark.parametrize("edited", ["keeper", "absorbed"])
def test_an_agent_edit_during_consolidation_is_never_overwritten(db, instance, monkeypatch, edited):
    ids = dict(zip(
        ("keeper", "absorbed"),
        insert(
            db,
            node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
            node(text="Customer Dana Reyes prefers email to phone calls.", base_utility=0.1),
        ),
    ))
    real_planner = curation_pipeline.service.steps.consolidate.decide_pairs

    def plan_while_an_agent_writes(*args, **kwargs):
        # The agent's own connection commits between the step's load and its write.
        with open_connection(db.info.dsn, autocommit=True) as agent:
            agent.execute(
                "UPDATE memory_nodes SET pointer_summary = 'Dana now prefers Slack.', recall_count = 9"
                " WHERE id = %s", (ids[edited],),
            )
        return real_planner(*args, **kwargs)

    monkeypatch.setattr(curation_pipeline.service.steps.consolidate, "decide_pairs", plan_while_an_agent_writes)
    result = run_cycle(instance, op_selection=["consolidate_duplicates"])
    assert result.success
    assert fetch_node(db, ids[edited])["pointer_summary"] == "Dana now prefers Slack."
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] == 0
    assert cycle_row(db, result.run_id)["steps"]["consolidate_duplicates"]["skipped_concurrent"] == 1


def test_an_out_of_range_op_config_fails_that_step_only_and_is_recorded(db, instance):
    keeper, absorbed = insert(
        db,
        node(text="Customer Dana Reyes prefers email over phone calls.", base_utility=0.9),
        node(text="Customer Dana Reyes prefers email to phone calls."),
    )
    result = run_cycle(
        instance, run_config=step_run_config({"consolidate_duplicates": {"similarity_threshold": 1.5}})
    )
    assert not result.success
    metadata = cycle_row(db, result.run_id)
    assert metadata["status"] == "partial"
    assert metadata["failed_steps"] == ["consolidate_duplicates"]
    assert "similarity_threshold" in metadata["errors"]["consolidate_duplicates"]
    assert metadata["steps"]["mark_stale_confidence"]["status"] == "succeeded"
    assert fetch_node(db, absorbed)["archived_at"] is None


def test_a_namespace_is_curated_by_one_run_at_a_time(db, instance, database_url, monkeypatch):
    insert(db, node(text="Customer Dana Reyes prefers email over phone calls."),
           node(text="Customer Dana Reyes prefers email to phone calls."),
           node(namespace="elsewhere", text="Unrelated."))
    impatient = {"resources": {"memory_store": {"config": {"lock_timeout_s": 1}}}}
    started_meanwhile = {}
    real_planner = curation_pipeline.service.steps.consolidate.decide_pairs

    def start_other_runs_mid_cycle(*args, **kwargs):
        # Between two steps of this run another run of the same namespace must not get in,
        # while a run of another namespace is not held up at all.
        started_meanwhile["same"] = run_cycle(instance, run_config=impatient)
        started_meanwhile["other"] = run_cycle(instance, namespace="elsewhere", run_config=impatient)
        return real_planner(*args, **kwargs)

    monkeypatch.setattr(curation_pipeline.service.steps.consolidate, "decide_pairs", start_other_runs_mid_cycle)
    first = run_cycle(instance)
    assert first.success
    same, other = started_meanwhile["same"], started_meanwhile["other"]
    assert not same.success and other.success
    errors = [
        e.event_specific_data.error.to_string() for e in same.all_events
        if getattr(e.event_specific_data, "error", None) is not None
    ]
    assert any("being curated by another run" in error for error in errors)
    # The blocked run changed nothing; the first did its one merge.
    assert cycle_row(db, same.run_id) is None
    assert db.execute("SELECT count(*) FROM memory_nodes WHERE archived_at IS NOT NULL").fetchone()[0] == 1


@pytest.mark.parametrize(
    ("op_name", "planner", "columns"),
    [
        ("reclassify_stale", "plan_reclassify", {"recall_count": 0, "epoch": 0}),
        ("summarize_verbose", "plan_summaries", {"recall_count": 0}),
        ("mark_stale_confidence", "plan_stale_confidence", {"last_recalled_at": NOW - timedelta(days=60)}),
    ],
)
def test_every_step_leaves_a_row_an_agent_changed_after_loading_it(db, instance, monkeypatch, op_name, planner, columns):
    text = ("The quarterly review with Globex covered churn risk, renewal dates and the pilot scope. " * 7).strip()
    target = insert(db, node(text=text, **columns))[0]
    db.execute("UPDATE namespace_activity SET current_epoch = 500")
    module = {"reclassify_stale": curation_pipeline.service.steps.reclassify,
              "summarize_verbose": curation_pipeline.service.steps.summarize,
              "mark_stale_confidence": curation_pipeline.service.steps.stale_confidence}[op_name]
    real_planner = getattr(module, planner)

    def plan_while_an_agent_recalls_the_node(*args, **kwargs):
        with open_connection(db.info.dsn, autocommit=True) as agent:
            agent.execute(
                "UPDATE memory_nodes SET recall_count = recall_count + 1, last_recalled_at = now()"
                " WHERE id = %s", (target,),
            )
        return real_planner(*args, **kwargs)

    monkeypatch.setattr(module, planner, plan_while_an_agent_recalls_the_node)
    result = run_cycle(instance, op_selection=[op_name])
    assert result.success
    row = fetch_node(db, target)
    assert (row["pointer_summary"], row["confidence"]) == (text, "default")
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM training_signals").fetchone()[0] == 0
    assert cycle_row(db, result.run_id)["steps"][op_name]["skipped_concurrent"] == 1


def test_reclassify_uses_the_nodes_epochs_when_no_agent_reported_the_namespace_epoch(db, instance):
    old = insert(db, node(text="Early note.", recall_count=0, epoch=0))[0]
    insert(db, node(text="Recent note.", recall_count=0, epoch=500))
    db.execute("UPDATE namespace_activity SET current_epoch = NULL")
    # The graph sync creating the namespace's bookkeeping must not invent an epoch of 0.
    assert run_cycle(instance, op_selection=["sync_graph"]).success
    assert run_cycle(instance, op_selection=["reclassify_stale"]).success
    assert db.execute("SELECT memory_id::text FROM training_signals").fetchall() == [(old,)]


def test_step_2_repoints_an_archived_node_whose_keeper_was_archived_to_the_chains_end(db, instance):
    end = insert(db, node(text="The keeper everything ends at."))[0]
    middle = insert(db, node(text="Merged once.", archived_at=NOW, merged_into=end))[0]
    # As an agent (or an import that raced a run) leaves it: archived into an archived node.
    start, second = insert(db, node(text="Merged into the merged one.", archived_at=NOW, merged_into=middle),
                           node(text="Also merged into it.", archived_at=NOW, merged_into=middle))
    # A chain with no active end in the namespace stays as it is (the check keeps naming it).
    lone = insert(db, node(text="Archived alone.", archived_at=NOW))[0]
    stranded = insert(db, node(text="Into the archived one.", archived_at=NOW, merged_into=lone))[0]

    result = run_cycle(instance)
    assert result.success
    assert str(fetch_node(db, start)["merged_into"]) == end and str(fetch_node(db, second)["merged_into"]) == end
    assert str(fetch_node(db, stranded)["merged_into"]) == lone  # no active end: left alone
    [reason] = [row[0] for row in db.execute(
        "SELECT reason FROM node_revisions WHERE node_id = %s AND step = 'consolidate_duplicates'", (start,))]
    assert (reason["repointed_from"], reason["repointed_to"]) == (middle, end)
    cycle = cycle_row(db, result.run_id)
    assert cycle["steps"]["consolidate_duplicates"]["chains_repaired"] == 2
    checks = {check["name"]: check for check in cycle["checks"]}
    assert checks["no_orphaned_archives"]["description"].startswith("1 archived node(s)")  # the stranded one

    # Nothing written since: the next cycle has nothing to repair.
    again = run_cycle(instance)
    assert cycle_row(db, again.run_id)["steps"]["consolidate_duplicates"]["chains_repaired"] == 0

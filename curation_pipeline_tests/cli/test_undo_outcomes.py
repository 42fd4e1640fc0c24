"""What an undo reports: a status that says what happened (`partial` when it
left a row alone, in its output and in `runs`), the later run that changed a row it left alone,
and nothing recorded for an undo with nothing to do."""

from __future__ import annotations

import pytest

from curation_pipeline.cli.main import NOTHING_TO_UNDO, main
from curation_pipeline_tests.conftest import fetch_node, insert, node, run_cycle
from curation_pipeline_tests.service.test_undo import BADGE, DANA, DESK, MERGE_CONFIG, curated  # noqa: F401

pytestmark = pytest.mark.slow


def _undo_rows(db) -> list[str]:
    return [row[0] for row in db.execute(
        "SELECT run_id FROM activity_log WHERE action = 'curation_undo' ORDER BY id").fetchall()]


def test_an_undo_that_left_a_row_alone_is_partial_and_names_the_later_run(db, instance, dagster_home, capsys):
    keeper, first = insert(db, node(text=DANA, base_utility=0.9), node(text=f"{DANA} {BADGE}"))
    run_a = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_a.success and fetch_node(db, first)["merged_into"] is not None
    insert(db, node(text=f"{DANA} {BADGE} {DESK}", base_utility=0.1))
    run_b = run_cycle(instance, run_config=MERGE_CONFIG)
    assert run_b.success and DESK in fetch_node(db, keeper)["pointer_summary"]

    assert main(["undo", "--run", run_a.run_id]) == 1
    captured = capsys.readouterr()
    [line] = [line for line in captured.err.splitlines() if line.startswith(f"left alone: node {keeper} ")]
    assert f"by run {run_b.run_id}" in line, line
    [undo_id] = _undo_rows(db)
    assert "partial" in captured.out.split("\n", 2)[2]  # the table's row for the namespace
    assert f"undo {undo_id} is partial" in captured.out

    assert main(["runs", "--partition", "acme:support"]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith(undo_id)]
    assert row.split()[3] == "PARTIAL", row


def test_an_agents_change_is_named_as_no_run(db, curated, capsys):  # noqa: F811
    db.execute("UPDATE memory_nodes SET pointer_summary = 'Agent rewrote this.' WHERE id = %s", (curated["ids"][0],))
    assert main(["undo", "--run", curated["run_id"]]) == 1
    err = capsys.readouterr().err
    assert (f"left alone: node {curated['ids'][0]} changed since (pointer_summary) by an agent "
            "(no curation run changed it since)") in err


def test_undoing_an_undone_run_records_nothing_and_says_by_which_undo(db, curated, dagster_home, capsys):  # noqa: F811
    assert main(["undo", "--run", curated["run_id"]]) == 0
    [undo_id] = _undo_rows(db)
    revisions = db.execute("SELECT count(*) FROM node_revisions").fetchone()[0]
    capsys.readouterr()

    undo_runs_before = _undo_runs()
    assert main(["undo", "--run", curated["run_id"]]) == NOTHING_TO_UNDO == 3
    out = capsys.readouterr().out
    assert out.strip() == f"nothing to undo: run {curated['run_id']} was already undone by {undo_id}"
    assert _undo_rows(db) == [undo_id]  # no new, empty undo record
    assert _undo_runs() == undo_runs_before  # and no Dagster run launched just to say so
    assert db.execute("SELECT count(*) FROM node_revisions").fetchone()[0] == revisions

    assert main(["runs", "--partition", "acme:support"]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith(undo_id)]
    assert row.split()[3] == "SUCCESS", row


def _undo_runs() -> int:
    """The undo job's runs in Dagster (the session's tests share one Dagster storage)."""
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.config.settings import load_settings

    prepare_dagster_home(load_settings())
    with dg.DagsterInstance.get() as instance:
        return len(instance.get_run_ids(dg.RunsFilter(job_name="undo_curation_run")))


def test_an_undo_from_the_command_line_is_a_run_of_the_undo_job_in_dagster(db, curated, dagster_home, capfd):  # noqa: F811
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.config.settings import load_settings
    from curation_pipeline.defs.partitions import register_partitions

    prepare_dagster_home(load_settings())
    with dg.DagsterInstance.get() as instance:
        register_partitions(instance, ["acme:support"])  # as `run` or the discovery sensor would
    # Given as the UI shows run ids: their first 8 characters.
    assert main(["undo", "--run", curated["run_id"][:8]]) == 0
    [undo_id] = _undo_rows(db)
    captured = capfd.readouterr()  # the run processes' output too: they write to this terminal
    assert f"undo id: {undo_id}" in captured.out
    # Said at once what it waits for, then which run does the undo; none of Dagster's DEBUG lines.
    err = captured.err.splitlines()
    assert err[0] == f"run {curated['run_id'][:8]} is {curated['run_id']}"
    assert err[1].startswith(f"undoing run {curated['run_id']}: starting Dagster's code server")
    assert f"started undo run {undo_id}" in err
    assert not [line for line in err if " - DEBUG - " in line or " - INFO - " in line], captured.err
    with dg.DagsterInstance.get() as instance:
        run = instance.get_run_by_id(undo_id)  # the undo's id is its Dagster run's
        assert run is not None and run.job_name == "undo_curation_run"
        assert run.status == dg.DagsterRunStatus.SUCCESS and run.tags["curation/trigger"] == "cli"
        # The session's tests share one Dagster storage: this undo's observation among theirs.
        [observation] = [record for record in instance.fetch_observations(
            dg.AssetKey("memory_namespace"), limit=100).records if record.run_id == undo_id]
        assert observation.partition_key == "acme:support"


def test_an_undo_of_a_run_that_changed_nothing_launches_no_run(db, dagster_home, capsys):
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.config.settings import load_settings

    prepare_dagster_home(load_settings())

    def undo_runs() -> int:  # the session's tests share one Dagster storage
        with dg.DagsterInstance.get() as instance:
            return len(instance.get_run_ids(dg.RunsFilter(job_name="undo_curation_run")))

    before = undo_runs()
    assert main(["undo", "--run", "no-such-run"]) == 2  # a user error: one line, no traceback
    assert capsys.readouterr().err == ("error: no such run: 'no-such-run' is no run recorded in the memory "
                                       "store (`curation-pipeline runs` lists the recent ones)\n")
    assert undo_runs() == before


def test_a_run_that_changed_nothing_and_an_ambiguous_prefix_are_refused(db, instance, dagster_home, capsys):
    insert(db, node(text="The deploy pipeline runs on Fridays."))
    quiet = run_cycle(instance, op_selection=["reclassify_stale"])  # a recent node: nothing to do
    assert quiet.success
    before = _undo_runs()
    assert main(["undo", "--run", quiet.run_id]) == 2
    assert f"run {quiet.run_id} changed nothing that could be undone" in capsys.readouterr().err
    # Two recorded runs whose ids start alike: the shared start is refused, listing both.
    twins = [f"{quiet.run_id[:8]}-twin-{n}" for n in (1, 2)]
    for twin in twins:
        db.execute("INSERT INTO activity_log (tenant_id, namespace, action, run_id, metadata)"
                   " VALUES ('acme', 'support', 'curation_cycle', %s, '{}')", (twin,))
    assert main(["undo", "--run", quiet.run_id[:8]]) == 2
    err = capsys.readouterr().err
    assert f"run id '{quiet.run_id[:8]}' is ambiguous: it starts 3 runs" in err
    assert all(run_id in err for run_id in (quiet.run_id, *twins))
    assert main(["undo", "--run", f"{quiet.run_id[:8]}-twin-"]) == 2
    assert "it starts 2 runs" in capsys.readouterr().err
    assert _undo_runs() == before

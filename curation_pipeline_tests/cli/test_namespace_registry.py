"""A namespace exists because it holds memory, or because the operator said so: a
typo in `run --partition` is an error naming the known namespaces, not a new partition for
good; `--create` and `import` add one; `namespaces remove` retires a partition and keeps its
memory, and nothing adds it back behind the operator's back unless it gets new memory."""

from __future__ import annotations

import json
import uuid

import dagster as dg
import pytest

from curation_pipeline.cli.main import main
from curation_pipeline.config.settings import load_settings
from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
from curation_pipeline.service.namespaces import discover_partition_keys
from curation_pipeline.store.triggers import load_candidates
from curation_pipeline_tests.conftest import insert, node
from curation_pipeline_tests.support.cli_output import one_line_error

pytestmark = pytest.mark.slow


def _fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"  # Dagster's storage is shared by the session's tests


def _registered() -> set[str]:
    with dg.DagsterInstance.get() as instance:
        return set(instance.get_dynamic_partitions(PARTITIONS_DEF_NAME))


def test_a_typo_is_an_error_naming_the_known_namespaces(db, dagster_home, capsys):
    known = _fresh("known")
    insert(db, node(namespace=known, text="Dana prefers email."))
    # A typo of it: the error lists the known namespaces closest to the typo first, and the
    # session's other tests leave many known namespaces behind.
    typo = f"acme:{known.replace('known', 'konwn')}"

    assert main(["run", "--partition", typo]) == 2

    line = one_line_error(capsys.readouterr().err)
    assert line.startswith(f"error: unknown namespace {typo}")
    assert f"acme:{known}" in line and "--create" in line
    assert typo not in _registered()
    assert typo not in discover_partition_keys(load_settings())[0]


@pytest.mark.parametrize("command", ["health", "runs"])
def test_the_read_only_commands_refuse_a_typo_as_run_does(db, dagster_home, capsys, command):
    known = _fresh("support-bot")
    insert(db, node(namespace=known, text="Dana prefers email."))
    typo = f"acme:{known.replace('support', 'suport')}"

    assert main([command, "--partition", typo]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith(f"error: unknown namespace {typo}") and f"acme:{known}" in line
    assert "--create" not in line  # nothing to create: these commands only read
    # A known namespace with nothing recorded yet is no error: it says so.
    assert main([command, "--partition", f"acme:{known}"]) == 0
    assert "recorded yet for" in capsys.readouterr().out


def test_create_adds_a_new_namespace_and_runs_it(db, dagster_home, capsys):
    key = f"acme:{_fresh('new')}"
    assert main(["run", "--partition", key, "--create"]) == 0
    assert key in _registered()
    assert key in discover_partition_keys(load_settings())[0]
    capsys.readouterr()
    assert main(["run", "--partition", key]) == 0  # known from now on


def test_a_namespace_with_memory_needs_no_create(db, dagster_home):
    namespace = _fresh("fresh")
    insert(db, node(namespace=namespace, text="Something the agent learned."))
    assert main(["run", "--partition", f"acme:{namespace}"]) == 0


def test_remove_retires_the_partition_and_keeps_the_memory(db, dagster_home, capsys, tmp_path):
    namespace = _fresh("retire")
    key = f"acme:{namespace}"
    [kept] = insert(db, node(namespace=namespace, text="A memory that must stay."))
    assert main(["namespaces", "sync"]) == 0
    assert key in _registered()
    capsys.readouterr()

    assert main(["namespaces", "remove", key]) == 0
    out = capsys.readouterr().out
    assert f"removed {key}" in out and "1 memory node(s) kept" in out
    assert key not in _registered()
    assert db.execute("SELECT archived_at FROM memory_nodes WHERE id = %s", (kept,)).fetchone() == (None,)

    # Neither the listing, nor the discovery the sensor and `sync` run, nor the schedule's and
    # the idle sensor's reads bring it back.
    assert main(["namespaces", "list"]) == 0
    assert key not in capsys.readouterr().out.split()
    assert main(["namespaces", "sync"]) == 0
    assert key not in _registered()
    assert (("acme", namespace) not in
            {(state.tenant_id, state.namespace) for state in load_candidates(db)})
    # A run of it is refused like a typo's, saying how to bring it back.
    assert main(["run", "--partition", key]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "removed" in line and "--create" in line

    # New memory brings it back (the rule: a node created after the removal).
    insert(db, node(namespace=namespace, text="The agent wrote here again."))
    assert key in discover_partition_keys(load_settings())[0]


def test_remove_then_create_or_import_brings_it_back(db, dagster_home, capsys, tmp_path):
    namespace = _fresh("back")
    key = f"acme:{namespace}"
    insert(db, node(namespace=namespace, text="Kept through the removal."))
    assert main(["namespaces", "remove", key]) == 0
    assert main(["run", "--partition", key, "--create"]) == 0
    assert key in _registered()

    assert main(["namespaces", "remove", key]) == 0
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps({"tenant_id": "acme", "namespace": namespace,
                                "pointer_summary": "Imported later."}) + "\n", encoding="utf-8")
    assert main(["import", str(path)]) == 0
    assert key in discover_partition_keys(load_settings())[0]


@pytest.mark.parametrize("argv", [["namespaces", "remove"], ["namespaces", "remove", "no-colon"]])
def test_remove_needs_a_key(db, dagster_home, capsys, argv):
    assert main(argv) == 2
    assert one_line_error(capsys.readouterr().err).startswith("error: ")


def test_removing_an_unknown_namespace_is_an_error(db, dagster_home, capsys):
    assert main(["namespaces", "remove", f"acme:{_fresh('never')}"]) == 2
    assert "unknown namespace" in one_line_error(capsys.readouterr().err)


def test_removing_a_namespace_during_its_run_is_refused_and_the_run_ends_well(db, dagster_home, database_url):
    """`namespaces remove` while a run of that namespace holds it (paused inside step 6's write
    transaction by the database itself): refused, naming the run; the run ends as a success, and
    the namespace stays. After the run, the removal goes through."""
    from curation_pipeline_tests.conftest import cycle_row, run_cycle
    from curation_pipeline_tests.support.step_faults import MidStepFault, install_step_pause, uninstall_step_pause

    namespace = _fresh("busy")
    key = f"acme:{namespace}"
    insert(db, node(namespace=namespace, text="Dana prefers email."))
    assert main(["namespaces", "sync"]) == 0
    removal: dict = {}

    def remove_meanwhile(_conn) -> None:
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            removal["code"] = main(["namespaces", "remove", key])
        removal["err"] = err.getvalue()

    install_step_pause(db)
    try:
        with dg.DagsterInstance.get() as instance, \
                MidStepFault(database_url, ("sync_graph",), "agent_write", "acme", namespace,
                             agent_write=remove_meanwhile) as fault:
            result = run_cycle(instance, "acme", namespace)
    finally:
        uninstall_step_pause(db)
    assert fault.outcome.fired
    assert removal["code"] == 2
    line = one_line_error(removal["err"])
    assert line.startswith(f"error: namespace {key} is being curated by run {result.run_id}")
    assert result.success
    assert cycle_row(db, result.run_id)["status"] == "success"
    assert key in _registered()
    assert db.execute("SELECT retired_at FROM namespace_activity WHERE tenant_id = 'acme' AND namespace = %s",
                      (namespace,)).fetchone() == (None,)
    assert main(["namespaces", "remove", key]) == 0
    assert key not in _registered()


def test_removing_an_already_removed_namespace_says_so(db, dagster_home, capsys):
    namespace = _fresh("twice")
    key = f"acme:{namespace}"
    insert(db, node(namespace=namespace, text="Kept through two removals."))
    assert main(["namespaces", "remove", key]) == 0
    capsys.readouterr()
    assert main(["namespaces", "remove", key]) == 0
    out = capsys.readouterr().out
    assert f"{key} is already removed" in out and "1 memory node(s) kept" in out
    assert "unknown namespace" not in out


def test_removal_under_a_run_holding_the_namespace_changes_nothing(db, database_url):
    """A run launched elsewhere (not in this Dagster's runs) still holds the namespace's lease:
    the removal is refused before the store or the partition changes."""
    from curation_pipeline.service.namespaces import retire_namespace
    from curation_pipeline.store.locking import NamespaceBusyError, namespace_lease

    namespace = _fresh("leased")
    key = f"acme:{namespace}"
    insert(db, node(namespace=namespace, text="Dana prefers email."))
    removed = []
    with namespace_lease(database_url, "acme", namespace, 5, holder="run r-42"), \
            pytest.raises(NamespaceBusyError, match=f"namespace {key} is being curated by run r-42"):
        retire_namespace(load_settings(), key, {key}, remove_partition=lambda: removed.append(key))
    assert removed == []
    assert db.execute("SELECT retired_at FROM namespace_activity WHERE tenant_id = 'acme' AND namespace = %s",
                      (namespace,)).fetchone() in (None, (None,))
    assert retire_namespace(load_settings(), key, {key}, remove_partition=lambda: removed.append(key)).kept == 1
    assert removed == [key]

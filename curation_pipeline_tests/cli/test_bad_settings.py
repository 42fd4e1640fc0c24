"""An invalid setting, whichever it is (the LLM's included), stops everything before anything
runs: the command launches nothing, the code location does not load (so the UI shows why and
its schedule and sensors launch nothing), and a bad value typed into the launchpad fails the
run before its first step."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import timedelta

import pytest

from curation_pipeline.cli.main import main
from curation_pipeline_tests.conftest import NOW, insert, node, run_cycle

pytestmark = pytest.mark.slow

# What the UI, the daemon and a run process do with workspace.yaml's module: build its `defs`.
LOAD_CODE_LOCATION = (
    "from dagster._core.definitions.reconstruct import ReconstructableRepository;"
    "ReconstructableRepository.for_module('curation_pipeline.defs.definitions', 'defs').get_definition()"
)

BAD_SETTINGS = [
    ("CURATOR_LLM_ENABLED", "maybe"),
    ("CURATOR_LLM_API", "bogus"),
    ("CURATOR_LLM_BASE_URL", "ftp://x"),
    ("CURATION_EMBEDDER", "bogus"),
    ("CURATOR_RECLASSIFY_CAP", "-1"),
]


def _work_for_steps_1_and_5(db, namespace: str) -> None:
    """Nodes step 1 signals and step 5 marks stale: what ran too early used to write."""
    old = NOW - timedelta(days=90)
    insert(db, *[node(namespace=namespace, text=f"Old note {n} about the renewal.", recall_count=0,
                      epoch=0, last_recalled_at=None, created_at=old) for n in range(3)])
    db.execute("UPDATE namespace_activity SET current_epoch = 500 WHERE namespace = %s", (namespace,))


def _written(db, namespace: str) -> tuple[int, int, int]:
    return db.execute(
        "SELECT (SELECT count(*) FROM training_signals WHERE namespace = %(n)s),"
        " (SELECT count(*) FROM node_revisions WHERE namespace = %(n)s),"
        " (SELECT count(*) FROM activity_log WHERE namespace = %(n)s)",
        {"n": namespace},
    ).fetchone()


@pytest.mark.parametrize(("variable", "value"), BAD_SETTINGS)
def test_run_refuses_a_bad_setting_before_launching_anything(db, dagster_home, monkeypatch, capsys, variable, value):
    namespace = f"bad-{uuid.uuid4().hex[:8]}"
    _work_for_steps_1_and_5(db, namespace)
    monkeypatch.setenv(variable, value)
    assert main(["run", "--partition", f"acme:{namespace}"]) == 2
    err = capsys.readouterr().err
    assert f"{variable}='{value}' is invalid" in err and "Traceback" not in err, err
    assert _written(db, namespace) == (0, 0, 0)


def test_every_bad_setting_is_named_at_once(monkeypatch, capsys):
    monkeypatch.setenv("CURATOR_LLM_ENABLED", "maybe")
    monkeypatch.setenv("CURATION_EMBEDDER_TIMEOUT_SECS", "soon")
    monkeypatch.setenv("CURATOR_CONSOLIDATE_CAP", "many")
    assert main(["run", "--all"]) == 2
    err = capsys.readouterr().err
    for variable in ("CURATOR_LLM_ENABLED", "CURATION_EMBEDDER_TIMEOUT_SECS", "CURATOR_CONSOLIDATE_CAP"):
        assert variable in err, err


@pytest.mark.parametrize(("variable", "value"), BAD_SETTINGS[:3])
def test_the_code_location_does_not_load_with_a_bad_llm_setting(tmp_path, variable, value):
    # What the UI, the daemon and every run process load: the error names the variable.
    environment = {name: v for name, v in os.environ.items() if not name.startswith(("CURATOR_LLM_", "OPENAI_"))}
    environment.update({variable: value, "CURATION_HOME": str(tmp_path)})
    loaded = subprocess.run([sys.executable, "-c", LOAD_CODE_LOCATION],
                            env=environment, capture_output=True, text=True)
    assert loaded.returncode != 0
    assert f"{variable}='{value}' is invalid" in loaded.stderr


@pytest.mark.parametrize(
    ("resource", "config", "named"),
    [
        ("llm", {"enabled": True, "base_url": "ftp://x"}, "CURATOR_LLM_BASE_URL='ftp://x' is invalid"),
        ("embedder", {"provider": "bogus"}, "CURATION_EMBEDDER='bogus' is invalid"),
    ],
)
def test_a_bad_launchpad_value_fails_the_run_before_its_first_step(db, instance, resource, config, named):
    namespace = f"pad-{uuid.uuid4().hex[:8]}"
    _work_for_steps_1_and_5(db, namespace)
    result = run_cycle(instance, "acme", namespace, run_config={"resources": {resource: {"config": config}}})
    assert not result.success
    assert _written(db, namespace) == (0, 0, 0)
    assert not [event for event in result.all_events if event.is_step_start]  # no step ran
    failure = next(event for event in result.all_events if event.is_failure)
    assert named in failure.event_specific_data.error.cause.message


def test_the_code_location_names_every_bad_setting_at_once(tmp_path):
    environment = {name: v for name, v in os.environ.items() if not name.startswith(("CURATOR_LLM_", "OPENAI_"))}
    environment.update({"CURATOR_LLM_API": "bogus", "CURATION_EMBEDDER": "bogus", "CURATOR_CONSOLIDATE_CAP": "many",
                        "CURATION_HOME": str(tmp_path)})
    loaded = subprocess.run([sys.executable, "-c", LOAD_CODE_LOCATION],
                            env=environment, capture_output=True, text=True)
    assert loaded.returncode != 0
    for variable in ("CURATOR_LLM_API", "CURATION_EMBEDDER", "CURATOR_CONSOLIDATE_CAP"):
        assert f"{variable}=" in loaded.stderr, loaded.stderr

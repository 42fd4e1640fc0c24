"""Settings are read where the Definitions are built, never at import: importing any module of
the package with bad values set succeeds, and building the code location then fails naming
every bad variable. A worker that imports the package once and runs many runs follows the
environment each time it builds the definitions."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from curation_pipeline.config.op_config import config_fields, step_op_config
from curation_pipeline.config.steps import StepSettings
from curation_pipeline.defs.job import STEP_CONFIGS  # the registry's op -> config class

# One bad value per kind of setting: a step's, the LLM's, the embedder's, a trigger's.
BAD = {"CURATOR_CONSOLIDATE_CAP": "many", "CURATOR_LLM_API": "bogus", "CURATION_EMBEDDER": "bogus",
       "CURATOR_SENSOR_INTERVAL_SECS": "0"}

_IMPORT_ALL_THEN_LOAD = """
import importlib, pkgutil, sys
import curation_pipeline
names = [info.name for info in pkgutil.walk_packages(curation_pipeline.__path__, "curation_pipeline.")]
for name in names:
    importlib.import_module(name)
print("imported", len(names), flush=True)
from dagster._core.definitions.reconstruct import ReconstructableRepository
try:
    ReconstructableRepository.for_module("curation_pipeline.defs.definitions", "defs").get_definition()
except Exception as error:
    print("refused:", error)
    sys.exit(3)
"""


def test_importing_every_module_reads_no_setting_and_loading_the_location_names_every_bad_one(tmp_path):
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("CURATOR_", "CURATION_", "SULCUS_", "OPENAI_"))}
    environment.update(BAD, CURATION_HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _IMPORT_ALL_THEN_LOAD], env=environment,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.startswith("imported "), done.stderr  # every import succeeded
    assert int(done.stdout.split()[1]) > 50
    assert done.returncode == 3, done.stderr  # the code location refused to load
    for variable, value in BAD.items():
        assert f"{variable}='{value}' is invalid" in done.stdout, done.stdout


def test_the_op_config_defaults_are_the_declared_ones_whatever_the_environment(monkeypatch):
    monkeypatch.setenv("CURATOR_CONSOLIDATE_CAP", "many")  # never read by the classes
    declared = step_op_config(StepSettings(), STEP_CONFIGS)
    for op, config in STEP_CONFIGS.items():
        assert config().model_dump() == declared[op], op


def test_every_op_config_field_is_a_step_setting_with_its_bound_and_description():
    for config in STEP_CONFIGS.values():
        for field, setting in config_fields(config).items():
            declared, derived = StepSettings.model_fields[setting], config.model_fields[field]
            assert (derived.annotation, derived.metadata, derived.default) == (
                declared.annotation, declared.metadata, declared.default), f"{config.__name__}.{field}"
            assert derived.description, f"{config.__name__}.{field}"


def test_the_values_in_force_are_the_environments_for_every_op():
    settings = StepSettings.from_environment({"CURATOR_SIMILARITY_THRESHOLD": "0.95", "CURATOR_GRAPH_SYNC_CAP": "7"})
    values = step_op_config(settings, STEP_CONFIGS)
    assert values["consolidate_duplicates"]["similarity_threshold"] == 0.95
    assert values["associate_concepts"]["merge_threshold"] == 0.95  # step 6b stays below step 2's threshold
    assert values["sync_graph"] == {"cap": 7, "backfill_cap": 20_000}


@pytest.mark.slow
def test_the_definitions_bind_the_environment_as_it_is_when_they_are_built(monkeypatch, tmp_path):
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.job import CYCLE_GRAPH, JOB_NAME, PREVIEW_JOB_NAME

    monkeypatch.setenv("CURATION_HOME", str(tmp_path))
    before = load_defs()
    monkeypatch.setenv("CURATOR_CONSOLIDATE_CAP", "7")
    monkeypatch.setenv("CURATOR_LLM_MODEL", "later-model")
    monkeypatch.setenv("CURATOR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    after = load_defs()
    for job_name in (JOB_NAME, PREVIEW_JOB_NAME):
        def cap(defs, job_name=job_name):
            job = defs.resolve_job_def(job_name)
            config = job.partitioned_config.get_run_config_for_partition_key("acme:support")
            return config["ops"][CYCLE_GRAPH]["ops"]["consolidate_duplicates"]["config"]["cap"]
        assert (cap(before), cap(after)) == (20, 7), job_name
    shown = _launchpad_defaults(after.resolve_job_def(JOB_NAME))["resources"]["llm"]["config"]
    assert (shown["model"], shown["base_url"], shown["api"]) == ("later-model", "http://127.0.0.1:9/v1", "chat")
    # A run that sets one field keeps the values in force for the rest (steps and resources).
    from dagster._core.system_config.objects import ResolvedRunConfig

    from curation_pipeline.defs.job import step_run_config, with_step_defaults

    partial = {**step_run_config({"consolidate_duplicates": {"similarity_threshold": 0.8}}),
               "resources": {"llm": {"config": {"model": "launchpad-model"}}}}
    resolved = ResolvedRunConfig.build(after.resolve_job_def(JOB_NAME),
                                       with_step_defaults(StepSettings.from_environment(), partial))
    step = resolved.ops[f"{CYCLE_GRAPH}.consolidate_duplicates"].config
    assert (step["similarity_threshold"], step["cap"]) == (0.8, 7)
    llm = resolved.resources["llm"].config
    assert (llm["model"], llm["base_url"], llm["api"]) == ("launchpad-model", "http://127.0.0.1:9/v1", "chat")


def _launchpad_defaults(job) -> dict:
    """What the launchpad pre-fills (the GraphQL field rootDefaultYaml is this function)."""
    import yaml
    from dagster._core.snap.snap_to_yaml import default_values_yaml_from_type_snap

    snapshot = job.get_job_snapshot()
    schema = snapshot.config_schema_snapshot
    root = schema.get_config_snap(snapshot.mode_def_snaps[0].root_config_key)
    return yaml.safe_load(default_values_yaml_from_type_snap(schema, root))

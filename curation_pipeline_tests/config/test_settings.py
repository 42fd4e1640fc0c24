"""The pipeline's own settings (store, steps, triggers): defaults are the reference's numbers,
the environment overrides them, and a bad value stops with an error naming its variable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from curation_pipeline.config.settings import (
    Settings,
    SettingsError,
    environment_variables,
    load_settings,
)
from curation_pipeline.config.steps import StepSettings
from curation_pipeline.config.store import StoreSettings
from curation_pipeline.config.triggers import TriggerSettings

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_defaults_are_the_reference_curators_numbers():
    settings = load_settings({})
    assert (settings.reclassify_min_epoch_lag, settings.reclassify_cap) == (100, 50)
    assert (settings.similarity_threshold, settings.consolidate_cap, settings.merge_max_chars) == (0.92, 20, 2000)
    assert (settings.max_archive_fraction, settings.in_database_search_max_changed) == (0.1, 100)
    assert (settings.verbose_min_chars, settings.verbose_recall_below) == (500, 3)
    assert (settings.summarize_cap, settings.summary_chars) == (30, 200)
    assert (settings.embed_batch_size, settings.reembed_cap) == (256, 1000)
    assert (settings.stale_after_days, settings.graph_sync_cap) == (30, 100)
    assert settings.database_url is None and settings.embedding_dim == 384
    assert (settings.association_threshold, settings.association_cap) == (0.80, 200)
    assert settings.graph_backend == "auto"
    assert (settings.curation_enabled, settings.interval_secs, settings.idle_threshold_secs) == (True, 1800, 600)
    assert (settings.idle_floor_secs, settings.ceiling_secs, settings.sensor_interval_secs) == (900, 21600, 30)
    assert (settings.idle_max_runs_per_tick, settings.schedule_max_runs_per_tick) == (50, 1000)


def test_environment_overrides_and_paths():
    settings = load_settings(
        {"CURATOR_SIMILARITY_THRESHOLD": "0.9", "CURATOR_CONSOLIDATE_CAP": "0", "CURATOR_ENABLED": "off",
         "CURATION_HOME": "/tmp/somewhere", "DATABASE_URL": " ", "CURATION_GRAPH_BACKEND": " Postgres "}
    )
    assert settings.similarity_threshold == 0.9 and settings.consolidate_cap == 0
    assert settings.curation_enabled is False and settings.graph_backend == "postgres"
    assert settings.curation_home == Path("/tmp/somewhere")
    assert settings.pgdata_dir == Path("/tmp/somewhere/pgdata")
    assert settings.dagster_home == Path("/tmp/somewhere/dagster_home")
    assert settings.database_url is None  # blank counts as unset


def test_dagster_home_and_a_home_directory_in_paths():
    settings = load_settings({"CURATION_HOME": "~/curation", "DAGSTER_HOME": "/srv/dagster"})
    assert settings.curation_home == Path.home() / "curation"
    assert settings.dagster_home == Path("/srv/dagster")


def test_each_concern_reads_only_its_own_variables():
    environ = {"CURATOR_CONSOLIDATE_CAP": "5", "CURATOR_INTERVAL_SECS": "3600", "CURATION_EMBEDDING_DIM": "768"}
    assert StepSettings.from_environment(environ).consolidate_cap == 5
    assert TriggerSettings.from_environment(environ).interval_secs == 3600
    assert StoreSettings.from_environment(environ).embedding_dim == 768
    assert not hasattr(TriggerSettings.from_environment(environ), "consolidate_cap")
    combined = load_settings(environ)
    assert all(isinstance(combined, concern) for concern in (StepSettings, TriggerSettings, StoreSettings))
    assert (combined.consolidate_cap, combined.interval_secs, combined.embedding_dim) == (5, 3600, 768)


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("CURATOR_SIMILARITY_THRESHOLD", "1.5", "less than or equal to 1"),
        ("CURATOR_SIMILARITY_THRESHOLD", "high", "valid number"),
        ("CURATOR_SIMILARITY_THRESHOLD", "nan", "finite number"),
        ("CURATOR_MAX_ARCHIVE_FRACTION", "0", "greater than 0"),
        ("CURATOR_CONSOLIDATE_CAP", "-1", "greater than or equal to 0"),
        ("CURATOR_CONSOLIDATE_CAP", "2.5", "valid integer"),
        ("CURATION_EMBEDDING_DIM", "0", "greater than 0"),
        ("CURATOR_REEMBED_CAP", "-1", "greater than or equal to 0"),
        ("CURATOR_SUMMARY_CHARS", "1", "greater than or equal to 2"),
        ("CURATOR_ASSOCIATION_THRESHOLD", "0", "greater than 0"),
        ("CURATOR_ASSOCIATION_CAP", "many", "valid integer"),
        ("CURATION_GRAPH_BACKEND", "neo4j", "must be one of auto, postgres, age"),
        ("CURATOR_ENABLED", "maybe", "valid boolean"),
        ("CURATOR_INTERVAL_SECS", "30", "greater than or equal to 60"),
        ("IDLE_THRESHOLD_SECS", "-1", "greater than or equal to 0"),
        ("CURATOR_IDLE_MAX_RUNS_PER_TICK", "0", "greater than 0"),
    ],
)
def test_invalid_values_name_the_variable_and_the_value(variable, value, reason):
    with pytest.raises(SettingsError) as error:
        load_settings({variable: value})
    assert str(error.value).startswith(f"environment variable {variable}={value!r} is invalid: ")
    assert reason in str(error.value)


def test_every_bad_variable_is_reported_at_once():
    with pytest.raises(SettingsError) as error:
        load_settings({"CURATOR_CONSOLIDATE_CAP": "-1", "CURATOR_ENABLED": "maybe", "CURATOR_REEMBED_CAP": "10"})
    lines = str(error.value).splitlines()
    assert len(lines) == 2
    assert any("CURATOR_CONSOLIDATE_CAP='-1'" in line for line in lines)
    assert any("CURATOR_ENABLED='maybe'" in line for line in lines)


def test_the_association_threshold_must_stay_below_the_merge_threshold():
    with pytest.raises(SettingsError, match="CURATOR_ASSOCIATION_THRESHOLD < CURATOR_SIMILARITY_THRESHOLD"):
        load_settings({"CURATOR_SIMILARITY_THRESHOLD": "0.85", "CURATOR_ASSOCIATION_THRESHOLD": "0.85"})
    lowered = load_settings({"CURATOR_SIMILARITY_THRESHOLD": "0.85", "CURATOR_ASSOCIATION_THRESHOLD": "0.7"})
    assert (lowered.similarity_threshold, lowered.association_threshold) == (0.85, 0.7)


def test_a_given_mapping_is_read_instead_of_the_process_environment(monkeypatch):
    monkeypatch.setenv("CURATOR_CONSOLIDATE_CAP", "7")
    assert load_settings({}).consolidate_cap == 20
    assert load_settings().consolidate_cap == 7
    # Built in code, a model holds exactly what it is given: the process's variables stay out.
    assert Settings().consolidate_cap == 20


def test_settings_are_immutable_and_refuse_unknown_fields():
    with pytest.raises(ValueError, match="frozen"):
        Settings().consolidate_cap = 3
    with pytest.raises(ValueError, match="consolidate_capp"):
        Settings(consolidate_capp=3)


def test_a_changed_copy_is_checked_like_the_environment():
    settings = load_settings({"CURATOR_CONSOLIDATE_CAP": "5"})
    changed = settings.with_changes(ceiling_secs=0, curation_home="/tmp/elsewhere")
    assert (changed.consolidate_cap, changed.ceiling_secs, changed.curation_home) == (5, 0, Path("/tmp/elsewhere"))
    assert settings.ceiling_secs == 21600  # the original is untouched
    with pytest.raises(SettingsError, match=r"^CURATOR_SIMILARITY_THRESHOLD=1.5 is invalid"):
        settings.with_changes(similarity_threshold=1.5)


def _documented_variables() -> set[str]:
    text = "\n".join(path.read_text(encoding="utf-8") for path in DOCS.glob("*.md"))
    return set(re.findall(r"`((?:CURATOR|CURATION|SULCUS)_[A-Z0-9_]*[A-Z0-9]|IDLE_THRESHOLD_SECS|DATABASE_URL)`", text))


def test_the_docs_name_only_variables_that_are_read():
    documented = _documented_variables()
    unknown = documented - environment_variables() - {"CURATION_DAGSTER_STORAGE_URL"}
    assert not unknown, f"docs/ name variables no setting reads: {sorted(unknown)}"
    assert {"CURATOR_LLM_API", "CURATOR_LLM_CONCURRENCY", "CURATOR_SIMILARITY_THRESHOLD"} <= documented


def test_a_merge_limit_below_what_step_3_keeps_is_refused():
    # CURATOR_MERGE_MAX_CHARS=1 was accepted, and every merge then dropped the absorbed clauses
    # (issue "Integrity, round three", point 8).
    with pytest.raises(SettingsError, match="CURATOR_MERGE_MAX_CHARS='1' is invalid: .*greater than or equal to 200"):
        load_settings({"CURATOR_MERGE_MAX_CHARS": "1"})
    with pytest.raises(SettingsError, match="CURATOR_MERGE_MAX_CHARS=300 .*CURATOR_VERBOSE_MIN_CHARS=500"):
        load_settings({"CURATOR_MERGE_MAX_CHARS": "300"})
    assert load_settings({"CURATOR_MERGE_MAX_CHARS": "500"}).merge_max_chars == 500


def test_a_judge_band_set_to_start_above_the_merge_threshold_is_refused():
    # The judged band is (CURATOR_JUDGE_BAND_LOW, CURATOR_SIMILARITY_THRESHOLD]: empty, it turned
    # the judge off without a word.
    with pytest.raises(SettingsError, match=r"CURATOR_JUDGE_BAND_LOW <= CURATOR_SIMILARITY_THRESHOLD"):
        load_settings({"CURATOR_JUDGE_BAND_LOW": "0.95"})
    assert load_settings({"CURATOR_JUDGE_BAND_LOW": "0.9"}).judge_band_low == 0.9
    # Left at its default under a lowered merge threshold: accepted (it was not asked for).
    assert load_settings({"CURATOR_SIMILARITY_THRESHOLD": "0.7", "CURATOR_ASSOCIATION_THRESHOLD": "0.6"}).judge_band_low == 0.75


def test_a_consolidate_op_config_with_an_empty_judge_band_is_refused():
    from curation_pipeline.config.op_config import ConsolidateConfig

    defaults = {name: getattr(StepSettings.model_construct(), setting)
                for name, setting in (("similarity_threshold", "similarity_threshold"), ("cap", "consolidate_cap"),
                                      ("max_chars", "merge_max_chars"),
                                      ("in_database_search_max_changed", "in_database_search_max_changed"),
                                      ("max_archive_fraction", "max_archive_fraction"),
                                      ("update_min_similarity", "update_min_similarity"),
                                      ("supersede_cap", "supersede_cap"), ("judge_cap", "judge_cap"),
                                      ("search_max_changed", "search_max_changed"))}
    with pytest.raises(ValueError, match="judge band"):
        ConsolidateConfig(**defaults, judge_band_low=0.95)


def test_a_bad_value_two_settings_read_is_named_once():
    from curation_pipeline.config.settings import check_all_settings

    with pytest.raises(SettingsError) as error:
        check_all_settings({"CURATION_EMBEDDING_DIM": "0"})
    assert str(error.value).count("CURATION_EMBEDDING_DIM") == 1

"""Settings from the environment: defaults are the reference's numbers, bad values are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation_pipeline.config.embedder import load_embedder_settings
from curation_pipeline.config.settings import Settings, SettingsError, load_settings


def test_defaults_are_the_reference_curators_numbers():
    settings = load_settings({})
    assert (settings.reclassify_min_epoch_lag, settings.reclassify_cap) == (100, 50)
    assert (settings.similarity_threshold, settings.consolidate_cap, settings.merge_max_chars) == (0.92, 20, 2000)
    assert (settings.verbose_min_chars, settings.summarize_cap, settings.summary_chars) == (500, 30, 200)
    assert (settings.stale_after_days, settings.graph_sync_cap) == (30, 100)
    assert settings.database_url is None and settings.embedding_dim == 384
    assert (settings.association_threshold, settings.association_cap) == (0.80, 200)
    assert settings.graph_backend == "auto"


def test_environment_overrides_and_paths():
    settings = load_settings(
        {"CURATOR_SIMILARITY_THRESHOLD": "0.9", "CURATOR_CONSOLIDATE_CAP": "0",
         "CURATION_HOME": "/tmp/somewhere", "DATABASE_URL": " ", "DAGSTER_HOME": "ignored here"}
    )
    assert settings.similarity_threshold == 0.9 and settings.consolidate_cap == 0
    assert settings.curation_home == Path("/tmp/somewhere")
    assert settings.pgdata_dir == Path("/tmp/somewhere/pgdata")
    assert settings.database_url is None  # blank counts as unset


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("CURATOR_SIMILARITY_THRESHOLD", "1.5"),
        ("CURATOR_SIMILARITY_THRESHOLD", "high"),
        ("CURATOR_CONSOLIDATE_CAP", "-1"),
        ("CURATOR_CONSOLIDATE_CAP", "2.5"),
        ("CURATION_EMBEDDING_DIM", "0"),
        ("CURATOR_REEMBED_CAP", "-1"),
        ("CURATOR_ASSOCIATION_THRESHOLD", "0"),
        ("CURATOR_ASSOCIATION_CAP", "many"),
        ("CURATION_GRAPH_BACKEND", "neo4j"),
    ],
)
def test_invalid_values_name_the_variable(variable, value):
    with pytest.raises(SettingsError, match=variable):
        load_settings({variable: value})


def test_settings_are_immutable():
    with pytest.raises(AttributeError):
        Settings().consolidate_cap = 3


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"CURATION_EMBEDDER": "word2vec"}, "CURATION_EMBEDDER='word2vec' is invalid"),
        ({"CURATION_EMBEDDING_MODEL": "all-MiniLM-L6-v2"}, "CURATION_EMBEDDER is lexical, which has no model"),
        ({"CURATION_EMBEDDER": "azure"}, "needs CURATION_EMBEDDER_BASE_URL"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_BASE_URL": "ftp://host"}, "CURATION_EMBEDDER_BASE_URL"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_TIMEOUT_SECS": "0"}, "CURATION_EMBEDDER_TIMEOUT_SECS"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_MAX_CALLS": "0"}, "CURATION_EMBEDDER_MAX_CALLS"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_SEND_DIMENSIONS": "maybe"}, "CURATION_EMBEDDER_SEND_DIMENSIONS"),
    ],
)
def test_invalid_embedder_settings_name_the_variable(environ, message):
    with pytest.raises(SettingsError, match=message):
        load_embedder_settings(environ)


def test_embedder_settings_defaults_and_azure_detection():
    assert load_embedder_settings({}).model_name is None
    assert load_embedder_settings({"CURATION_EMBEDDER": "sentence-transformers"}).model_name == "all-MiniLM-L6-v2"
    azure = load_embedder_settings({"CURATION_EMBEDDER": "openai",
                                    "CURATION_EMBEDDER_BASE_URL": "https://x.openai.azure.com/"})
    assert azure.provider == "azure" and azure.base_url == "https://x.openai.azure.com"
    assert "secret" not in repr(load_embedder_settings({"CURATION_EMBEDDER_API_KEY": "secret"}))

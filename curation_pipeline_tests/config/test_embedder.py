"""Embedder settings: the provider, its model and connection, the store's width; the key hidden."""

from __future__ import annotations

import pytest

from curation_pipeline.config.embedder import EmbedderSettings, load_embedder_settings
from curation_pipeline.config.settings import SettingsError, load_settings


def test_defaults_and_provider_models():
    settings = load_embedder_settings({})
    # The default is semantic and runs offline without torch (all-MiniLM-L6-v2 on onnxruntime).
    assert (settings.provider, settings.model_name, settings.is_semantic) == ("onnx-minilm", None, True)
    lexical = load_embedder_settings({"CURATION_EMBEDDER": "lexical"})
    assert (lexical.provider, lexical.model_name, lexical.is_semantic) == ("lexical", None, False)
    assert (settings.dimension, settings.max_calls, settings.max_input_chars) == (384, 200, 24_000)
    assert load_embedder_settings({"CURATION_EMBEDDER": "Sentence-Transformers"}).model_name == "all-MiniLM-L6-v2"
    assert load_embedder_settings({"CURATION_EMBEDDER": "openai"}).model_name == "text-embedding-3-small"


def test_the_width_is_the_stores_variable():
    environ = {"CURATION_EMBEDDING_DIM": "768"}
    assert load_embedder_settings(environ).dimension == load_settings(environ).embedding_dim == 768


def test_an_azure_host_selects_azure_and_a_full_endpoint_is_cut_to_its_base():
    azure = load_embedder_settings({"CURATION_EMBEDDER": "openai",
                                    "CURATION_EMBEDDER_BASE_URL": "https://x.openai.azure.com/embeddings/"})
    assert azure.provider == "azure" and azure.base_url == "https://x.openai.azure.com"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"CURATION_EMBEDDER": "word2vec"}, "CURATION_EMBEDDER='word2vec' is invalid"),
        ({"CURATION_EMBEDDER": "lexical", "CURATION_EMBEDDING_MODEL": "all-MiniLM-L6-v2"},
         "CURATION_EMBEDDER is lexical, which has no model"),
        ({"CURATION_EMBEDDER": "azure"}, "needs CURATION_EMBEDDER_BASE_URL"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_BASE_URL": "ftp://host"}, "CURATION_EMBEDDER_BASE_URL='ftp://host'"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_TIMEOUT_SECS": "0"}, "CURATION_EMBEDDER_TIMEOUT_SECS='0'"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_MAX_CALLS": "0"}, "CURATION_EMBEDDER_MAX_CALLS='0'"),
        ({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_SEND_DIMENSIONS": "maybe"}, "CURATION_EMBEDDER_SEND_DIMENSIONS='maybe'"),
        ({"CURATION_EMBEDDING_DIM": "-5"}, "CURATION_EMBEDDING_DIM='-5'"),
    ],
)
def test_invalid_embedder_settings_name_the_variable(environ, message):
    with pytest.raises(SettingsError, match=message):
        load_embedder_settings(environ)


def test_the_key_is_never_shown():
    settings = load_embedder_settings({"CURATION_EMBEDDER": "openai", "CURATION_EMBEDDER_API_KEY": "secret-key"})
    assert settings.api_key.get_secret_value() == "secret-key"
    assert "secret-key" not in repr(settings) and "secret-key" not in settings.model_dump_json()


def test_a_launchpad_switch_is_checked_and_re_derives_azure():
    base = EmbedderSettings(provider="openai", base_url="https://x.openai.azure.com", api_key="k")
    assert base.provider == "azure"
    assert base.with_changes(provider="openai").provider == "azure"  # still an Azure host
    assert base.with_changes(provider="lexical").api_key.get_secret_value() == "k"
    with pytest.raises(SettingsError, match="CURATION_EMBEDDER='word2vec' is invalid"):
        base.with_changes(provider="word2vec")
    with pytest.raises(SettingsError, match="lexical, which has no model"):
        base.with_changes(provider="lexical", model="all-MiniLM-L6-v2")

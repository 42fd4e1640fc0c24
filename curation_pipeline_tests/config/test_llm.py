"""LLM settings: off by default, the reference's names accepted, the API chosen per provider,
and the key never shown."""

from __future__ import annotations

import logging

import pytest

from curation_pipeline.config.llm import LLMSettings, load_llm_settings
from curation_pipeline.config.settings import SettingsError
from curation_pipeline.defs.llm_resource import LLMResource
from curation_pipeline.defs.resources import EmbedderResource

KEY = "sk-very-secret-123"


def test_defaults():
    settings = load_llm_settings({})
    assert settings.enabled is False and settings.provider == "openai" and settings.base_url is None
    assert (settings.model, settings.api, settings.concurrency) == ("gpt-4o-mini", "responses", 4)
    assert (settings.timeout_secs, settings.max_retries, settings.max_calls, settings.cache) == (30.0, 2, 60, True)


@pytest.mark.parametrize(
    ("alias", "value", "field", "expected"),
    [
        ("SULCUS_EXTRACTION_ENABLED", "true", "enabled", True),
        ("SULCUS_EXTRACTION_ENDPOINT", "http://localhost:11434/v1/responses", "base_url", "http://localhost:11434/v1"),
        ("SULCUS_EXTRACTION_MODEL", "llama3.2", "model", "llama3.2"),
    ],
)
def test_each_reference_name_is_accepted(alias, value, field, expected):
    environ = {alias: value, "CURATOR_LLM_BASE_URL": "http://localhost:8000/v1"} if field == "enabled" else {alias: value}
    assert getattr(load_llm_settings(environ), field) == expected


def test_the_reference_key_name_is_accepted():
    settings = load_llm_settings({"SULCUS_EXTRACTION_API_KEY": KEY})
    assert settings.api_key.get_secret_value() == KEY


def test_the_curator_name_wins_over_its_alias():
    settings = load_llm_settings({
        "SULCUS_EXTRACTION_MODEL": "llama3.2", "CURATOR_LLM_MODEL": "qwen2.5",
        "SULCUS_EXTRACTION_API_KEY": "old-key", "CURATOR_LLM_API_KEY": KEY,
        "SULCUS_EXTRACTION_ENDPOINT": "http://old:1/v1", "CURATOR_LLM_BASE_URL": "http://new:2/v1",
        "SULCUS_EXTRACTION_ENABLED": "false", "CURATOR_LLM_ENABLED": "true",
    })
    assert (settings.model, settings.base_url, settings.enabled) == ("qwen2.5", "http://new:2/v1", True)
    assert settings.api_key.get_secret_value() == KEY


def test_an_empty_variable_counts_as_unset_so_the_alias_applies():
    settings = load_llm_settings({"CURATOR_LLM_MODEL": "", "SULCUS_EXTRACTION_MODEL": "llama3.2",
                                  "CURATOR_LLM_TIMEOUT_SECS": "  "})
    assert settings.model == "llama3.2" and settings.timeout_secs == 30.0


@pytest.mark.parametrize(
    ("environ", "api"),
    [
        ({}, "responses"),  # the OpenAI API itself
        ({"CURATOR_LLM_BASE_URL": "http://localhost:11434/v1"}, "chat"),  # Ollama, vLLM, LM Studio...
        ({"CURATOR_LLM_BASE_URL": "https://name.openai.azure.com"}, "chat"),  # Azure, by its host
        ({"CURATOR_LLM_PROVIDER": "azure", "CURATOR_LLM_BASE_URL": "https://gw.example.com"}, "chat"),
        ({"CURATOR_LLM_BASE_URL": "http://localhost:8000/v1", "CURATOR_LLM_API": "Responses"}, "responses"),
        ({"CURATOR_LLM_API": "chat"}, "chat"),
    ],
)
def test_the_api_defaults_per_provider_and_can_be_chosen(environ, api):
    assert load_llm_settings(environ).api == api


def test_an_azure_host_selects_azure_unless_the_provider_is_named():
    assert load_llm_settings({"CURATOR_LLM_BASE_URL": "https://x.openai.azure.com"}).provider == "azure"
    named = load_llm_settings({"CURATOR_LLM_BASE_URL": "https://x.openai.azure.com", "CURATOR_LLM_PROVIDER": "openai"})
    assert named.provider == "openai" and named.api == "chat"


@pytest.mark.parametrize("endpoint", ["http://localhost:8000/v1/responses", "http://localhost:8000/v1/chat/completions/",
                                      "http://localhost:8000/v1/"])
def test_a_full_endpoint_is_cut_to_its_base(endpoint):
    assert load_llm_settings({"CURATOR_LLM_BASE_URL": endpoint}).base_url == "http://localhost:8000/v1"


def test_concurrency():
    assert load_llm_settings({"CURATOR_LLM_CONCURRENCY": "8"}).concurrency == 8


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"CURATOR_LLM_ENABLED": "maybe"}, "CURATOR_LLM_ENABLED='maybe' is invalid"),
        ({"SULCUS_EXTRACTION_ENABLED": "maybe"}, "SULCUS_EXTRACTION_ENABLED='maybe' is invalid"),
        ({"CURATOR_LLM_BASE_URL": "localhost:8000"}, "CURATOR_LLM_BASE_URL='localhost:8000' is invalid: must be an http"),
        ({"CURATOR_LLM_TIMEOUT_SECS": "0"}, "CURATOR_LLM_TIMEOUT_SECS='0' is invalid"),
        ({"CURATOR_LLM_BACKOFF_SECS": "inf"}, "CURATOR_LLM_BACKOFF_SECS='inf' is invalid: input should be a finite number"),
        ({"CURATOR_LLM_PROVIDER": "bedrock"}, "CURATOR_LLM_PROVIDER='bedrock' is invalid: must be one of openai, azure"),
        ({"CURATOR_LLM_API": "completions"}, "CURATOR_LLM_API='completions' is invalid: must be one of responses, chat"),
        ({"CURATOR_LLM_CONCURRENCY": "0"}, "CURATOR_LLM_CONCURRENCY='0' is invalid"),
        ({"CURATOR_LLM_CONCURRENCY": "two"}, "CURATOR_LLM_CONCURRENCY='two' is invalid"),
        ({"CURATOR_LLM_MAX_OUTPUT_TOKENS": "8"}, "CURATOR_LLM_MAX_OUTPUT_TOKENS='8' is invalid"),
        ({"CURATOR_LLM_ENABLED": "true"}, "neither CURATOR_LLM_BASE_URL nor an API key"),
        ({"CURATOR_LLM_ENABLED": "true", "CURATOR_LLM_PROVIDER": "azure", "CURATOR_LLM_API_KEY": KEY},
         "CURATOR_LLM_PROVIDER=azure needs CURATOR_LLM_BASE_URL"),
    ],
)
def test_invalid_settings_name_the_variable(environ, message):
    with pytest.raises(SettingsError, match=message):
        load_llm_settings(environ)


def test_enabled_with_the_sdks_own_key_variable_is_enough():
    assert load_llm_settings({"CURATOR_LLM_ENABLED": "true", "OPENAI_API_KEY": KEY}).enabled


def test_the_key_is_never_shown(caplog):
    settings = load_llm_settings({"CURATOR_LLM_API_KEY": KEY, "OPENAI_API_KEY": KEY})
    with caplog.at_level(logging.INFO):
        logging.getLogger("test").info("settings: %s %r", settings, settings)
    shown = [repr(settings), str(settings), settings.model_dump_json(), caplog.text]
    assert all(KEY not in text for text in shown)
    with pytest.raises(SettingsError) as error:  # another variable is bad: the key stays hidden
        load_llm_settings({"CURATOR_LLM_API_KEY": KEY, "CURATOR_LLM_TIMEOUT_SECS": "soon"})
    assert KEY not in str(error.value)
    with pytest.raises(SettingsError) as error:  # the key itself is refused: shown as ***
        settings.with_changes(api_key=12345)
    assert str(error.value).startswith("CURATOR_LLM_API_KEY=*** is invalid") and "12345" not in str(error.value)


def test_the_launchpad_offers_no_key():
    for resource in (LLMResource, EmbedderResource):
        fields = resource.to_config_schema().as_field().config_type.fields
        assert fields and not [name for name in fields if "key" in name.lower()], resource


def test_built_in_code_the_settings_are_checked_the_same_way():
    assert LLMSettings(base_url="http://localhost:8000/v1/").base_url == "http://localhost:8000/v1"
    with pytest.raises(ValueError, match="neither CURATOR_LLM_BASE_URL nor an API key"):
        LLMSettings(enabled=True)

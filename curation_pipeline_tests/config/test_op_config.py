"""The launchpad's op config: the jobs bind the settings in force as its values (step_op_config),
and it has the settings' bounds, so a value is refused there for the same reason as in the
environment."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from curation_pipeline.config.op_config import (
    AssociateConfig,
    ConsolidateConfig,
    GraphSyncConfig,
    ReclassifyConfig,
    RevectorizeConfig,
    StaleConfidenceConfig,
    SummarizeConfig,
    step_op_config,
)
from curation_pipeline.config.settings import SettingsError, load_settings
from curation_pipeline.defs.job import STEP_CONFIGS  # the registry's op -> config class

# op config field -> the variable that sets its default
PAIRS = [
    (ReclassifyConfig, "min_epoch_lag", "CURATOR_RECLASSIFY_MIN_EPOCH_LAG"),
    (ReclassifyConfig, "cap", "CURATOR_RECLASSIFY_CAP"),
    (ConsolidateConfig, "similarity_threshold", "CURATOR_SIMILARITY_THRESHOLD"),
    (ConsolidateConfig, "cap", "CURATOR_CONSOLIDATE_CAP"),
    (ConsolidateConfig, "max_chars", "CURATOR_MERGE_MAX_CHARS"),
    (ConsolidateConfig, "max_archive_fraction", "CURATOR_MAX_ARCHIVE_FRACTION"),
    (ConsolidateConfig, "in_database_search_max_changed", "CURATOR_IN_DATABASE_SEARCH_MAX_CHANGED"),
    (SummarizeConfig, "min_chars", "CURATOR_VERBOSE_MIN_CHARS"),
    (SummarizeConfig, "recall_below", "CURATOR_VERBOSE_RECALL_BELOW"),
    (SummarizeConfig, "cap", "CURATOR_SUMMARIZE_CAP"),
    (SummarizeConfig, "summary_chars", "CURATOR_SUMMARY_CHARS"),
    (RevectorizeConfig, "batch_size", "CURATOR_EMBED_BATCH_SIZE"),
    (RevectorizeConfig, "reembed_cap", "CURATOR_REEMBED_CAP"),
    (StaleConfidenceConfig, "stale_after_days", "CURATOR_STALE_AFTER_DAYS"),
    (GraphSyncConfig, "cap", "CURATOR_GRAPH_SYNC_CAP"),
    (AssociateConfig, "threshold", "CURATOR_ASSOCIATION_THRESHOLD"),
    (AssociateConfig, "merge_threshold", "CURATOR_SIMILARITY_THRESHOLD"),
    (AssociateConfig, "cap", "CURATOR_ASSOCIATION_CAP"),
]
# Values around every kind of bound (of the field's type); each is accepted or refused by both.
PROBES = {int: [-1, 0, 1, 2, 3], float: [-1.0, 0.0, 0.5, 1.0, 1.5, float("nan"), float("inf")]}


# A valid value that is no setting's default (0.91 stays below the merge threshold's default).
IN_FORCE = {int: "7", float: "0.91"}
IN_FORCE_OF = {"CURATOR_MERGE_MAX_CHARS": "700"}  # a merge limit is at least step 3's verbose length


@pytest.mark.parametrize(("config", "field", "variable"), PAIRS, ids=[f"{c.__name__}.{f}" for c, f, _ in PAIRS])
def test_the_launchpad_values_are_the_settings_in_force(config, field, variable):
    value = IN_FORCE_OF.get(variable, IN_FORCE[config.model_fields[field].annotation])
    [op] = [op for op, step_config in STEP_CONFIGS.items() if step_config is config]
    in_force = step_op_config(load_settings({variable: value}), STEP_CONFIGS)[op][field]
    assert in_force == type(getattr(config(), field))(value) != getattr(config(), field)


# The association threshold must stay below the merge threshold on both sides: while one is
# probed, the other is set out of the way (op config field, value; its variable).
OUT_OF_THE_WAY = {
    "CURATOR_ASSOCIATION_THRESHOLD": ("merge_threshold", 1.0, "CURATOR_SIMILARITY_THRESHOLD"),
    "CURATOR_SIMILARITY_THRESHOLD": ("threshold", 0.01, "CURATOR_ASSOCIATION_THRESHOLD"),
}


def _op_config_reason(config, values: dict) -> str | None:
    try:
        config(**values)
    except ValidationError as error:
        [problem] = error.errors(include_url=False)
        reason = str(problem["ctx"]["error"]) if problem["type"] == "value_error" else problem["msg"]
        return reason[:1].lower() + reason[1:]
    return None


def _environment_reason(environ: dict) -> str | None:
    try:
        load_settings(environ)
    except SettingsError as error:
        return str(error).split(" is invalid: ", 1)[-1]
    return None


@pytest.mark.parametrize(("config", "field", "variable"), PAIRS, ids=[f"{c.__name__}.{f}" for c, f, _ in PAIRS])
def test_a_value_is_refused_in_the_launchpad_exactly_when_the_variable_refuses_it(config, field, variable):
    for value in PROBES[config.model_fields[field].annotation]:
        values, environ = {field: value}, {variable: str(value)}
        if variable in OUT_OF_THE_WAY:
            other_field, other_value, other_variable = OUT_OF_THE_WAY[variable]
            environ[other_variable] = str(other_value)
            if other_field in config.model_fields:
                values[other_field] = other_value
        assert _op_config_reason(config, values) == _environment_reason(environ), value


def test_the_association_rule_is_the_same_on_both_sides():
    with pytest.raises(ValidationError) as op_error:
        AssociateConfig(threshold=0.9, merge_threshold=0.9)
    with pytest.raises(SettingsError) as env_error:
        load_settings({"CURATOR_ASSOCIATION_THRESHOLD": "0.9", "CURATOR_SIMILARITY_THRESHOLD": "0.9"})
    assert str(env_error.value) in str(op_error.value)


def test_the_llm_resource_refuses_what_the_environment_refuses(monkeypatch):
    from curation_pipeline.config.llm import load_llm_settings
    from curation_pipeline.defs.llm_resource import LLMResource

    monkeypatch.setenv("CURATOR_LLM_CONCURRENCY", "0")
    with pytest.raises(SettingsError, match="CURATOR_LLM_CONCURRENCY"):
        load_llm_settings()
    with pytest.raises(ValidationError, match="concurrency"):
        LLMResource(concurrency=0)


def test_a_trusted_judge_is_a_setting_in_force_in_the_launchpad_and_nonsense_is_refused_by_name():
    [op] = [op for op, step_config in STEP_CONFIGS.items() if step_config is ConsolidateConfig]
    assert step_op_config(load_settings({}), STEP_CONFIGS)[op]["judge_trusted"] is False
    assert step_op_config(load_settings({"CURATOR_JUDGE_TRUSTED": "true"}), STEP_CONFIGS)[op]["judge_trusted"] is True
    with pytest.raises(SettingsError, match="CURATOR_JUDGE_TRUSTED"):
        load_settings({"CURATOR_JUDGE_TRUSTED": "sometimes"})

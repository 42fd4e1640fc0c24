"""Per-op Dagster config, derived from the step settings (steps.py): each field is a step
setting under the op's own name, with the setting's type (so its bound, bounds.py), default and
description. A value is refused here exactly as in the environment, before the step touches
anything.

The defaults are the settings' static ones: importing this module reads no environment. The
values in force come from `step_op_config`, which the jobs bind as their default run config where
the Definitions are built (defs/job.py), so the launchpad shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import dagster as dg
from pydantic import Field, create_model, model_validator

from curation_pipeline.config.bounds import check_association_below_merge, check_judge_band
from curation_pipeline.config.steps import StepSettings

# op config class -> {its field: the step setting it is}
_FIELDS: dict[type[dg.Config], dict[str, str]] = {}


def _derived(name: str, descriptions: Mapping[str, str] | None = None, **fields: str) -> type[dg.Config]:
    """A dg.Config whose `fields` are the named step settings (type, bound, default,
    description); `descriptions` replaces a setting's description where the op reads it
    differently."""
    declared: dict[str, Any] = {}
    for field, setting_name in fields.items():
        setting = StepSettings.model_fields[setting_name]
        kind = Annotated[(setting.annotation, *setting.metadata)] if setting.metadata else setting.annotation
        description = (descriptions or {}).get(field, setting.description)
        declared[field] = (kind, Field(setting.default, description=description))
    model = create_model(f"_{name}Fields", __base__=dg.Config, **declared)
    _FIELDS[model] = dict(fields)
    return model


class ReclassifyConfig(_derived("Reclassify", min_epoch_lag="reclassify_min_epoch_lag", cap="reclassify_cap")):
    """Step 1: reclassify stale nodes."""


class ConsolidateConfig(_derived(
    "Consolidate",
    similarity_threshold="similarity_threshold", cap="consolidate_cap", max_chars="merge_max_chars",
    in_database_search_max_changed="in_database_search_max_changed",
    max_archive_fraction="max_archive_fraction", judge_band_low="judge_band_low",
    update_min_similarity="update_min_similarity", supersede_cap="supersede_cap", judge_cap="judge_cap",
    judge_trusted="judge_trusted", search_max_changed="search_max_changed",
)):
    """Step 2: consolidate duplicates."""

    @model_validator(mode="after")
    def _judge_band_below_merge(self):
        # The job's default config carries the settings in force, so the band is "set" on every
        # run: only a value other than the setting's own default was chosen by someone.
        default = StepSettings.model_fields["judge_band_low"].default
        check_judge_band(self.judge_band_low, self.similarity_threshold,
                         set_explicitly="judge_band_low" in self.model_fields_set and self.judge_band_low != default)
        return self


class SummarizeConfig(_derived(
    "Summarize", min_chars="verbose_min_chars", recall_below="verbose_recall_below", cap="summarize_cap",
    summary_chars="summary_chars",
)):
    """Step 3: summarize verbose nodes."""


class RevectorizeConfig(_derived("Revectorize", batch_size="embed_batch_size", reembed_cap="reembed_cap",
                                 embed_cap="embed_cap")):
    """Step 4: embed (re-embed) nodes."""


class StaleConfidenceConfig(_derived("StaleConfidence", stale_after_days="stale_after_days", cap="stale_cap")):
    """Step 5: mark stale confidence."""


class GraphSyncConfig(_derived("GraphSync", cap="graph_sync_cap", backfill_cap="graph_backfill_cap")):
    """Step 6: graph sync."""


class AssociateConfig(_derived(
    "Associate", {"merge_threshold": "pairs above this are duplicates (step 2), not associations"},
    threshold="association_threshold", merge_threshold="similarity_threshold", cap="association_cap",
    in_database_search_max_changed="in_database_search_max_changed", search_max_changed="search_max_changed",
)):
    """Step 6b: concept associations."""

    @model_validator(mode="after")
    def _below_merge_threshold(self):
        check_association_below_merge(self.threshold, self.merge_threshold)
        return self


def config_fields(config_class: type[dg.Config]) -> dict[str, str]:
    """{op config field: the step setting it is} of one op's config class."""
    return next(fields for model, fields in _FIELDS.items() if issubclass(config_class, model))


def step_op_config(step_settings: StepSettings, configs: Mapping[str, type[dg.Config]]) -> dict[str, dict[str, Any]]:
    """{op name: {field: value}}: the op config of each step of `configs` (op name -> its config
    class, the step registry's: defs/job.py) with the values of `step_settings`."""
    return {op: {field: getattr(step_settings, setting) for field, setting in config_fields(config).items()}
            for op, config in configs.items()}

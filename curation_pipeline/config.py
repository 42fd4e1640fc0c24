"""Per-op Dagster config. Defaults come from settings (environment), so the launchpad shows the
values in force and an operator can override one for a single run."""

from __future__ import annotations

import dagster as dg

from curation_pipeline.settings import load_settings

_defaults = load_settings()


class ReclassifyConfig(dg.Config):
    min_epoch_lag: int = _defaults.reclassify_min_epoch_lag
    cap: int = _defaults.reclassify_cap


class ConsolidateConfig(dg.Config):
    similarity_threshold: float = _defaults.similarity_threshold
    cap: int = _defaults.consolidate_cap
    max_chars: int = _defaults.merge_max_chars


class SummarizeConfig(dg.Config):
    min_chars: int = _defaults.verbose_min_chars
    recall_below: int = _defaults.verbose_recall_below
    cap: int = _defaults.summarize_cap
    summary_chars: int = _defaults.summary_chars


class RevectorizeConfig(dg.Config):
    batch_size: int = _defaults.embed_batch_size


class StaleConfidenceConfig(dg.Config):
    stale_after_days: int = _defaults.stale_after_days


class GraphSyncConfig(dg.Config):
    cap: int = _defaults.graph_sync_cap

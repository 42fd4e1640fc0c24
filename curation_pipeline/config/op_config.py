"""Per-op Dagster config. Defaults come from settings (environment), so the launchpad shows the
values in force and an operator can override one for a single run; out-of-range values are
refused before the step touches anything."""

from __future__ import annotations

import dagster as dg
from pydantic import Field, model_validator

from curation_pipeline.config.settings import load_settings

_defaults = load_settings()


class ReclassifyConfig(dg.Config):
    min_epoch_lag: int = Field(_defaults.reclassify_min_epoch_lag, ge=0, description="epoch lag a never-recalled node must exceed")
    cap: int = Field(_defaults.reclassify_cap, ge=0, description="signals per cycle at most")


class ConsolidateConfig(dg.Config):
    similarity_threshold: float = Field(_defaults.similarity_threshold, gt=0.0, le=1.0, description="cosine a pair must exceed")
    cap: int = Field(_defaults.consolidate_cap, ge=0, description="pairs merged per cycle at most")
    max_chars: int = Field(_defaults.merge_max_chars, ge=1, description="merged text length limit")
    in_database_search_max_changed: int = Field(
        _defaults.in_database_search_max_changed, ge=0,
        description="up to this many changed nodes, pgvector finds their pairs in the database; "
        "more, and the namespace's vectors are compared here in float32 blocks",
    )
    max_archive_fraction: float = Field(
        _defaults.max_archive_fraction, gt=0.0, le=1.0,
        description="share of the namespace's active nodes that one cycle may archive (at least 1)",
    )


class SummarizeConfig(dg.Config):
    min_chars: int = Field(_defaults.verbose_min_chars, ge=0, description="a text longer than this is verbose")
    recall_below: int = Field(_defaults.verbose_recall_below, ge=0, description="verbose nodes recalled fewer times are summarized")
    cap: int = Field(_defaults.summarize_cap, ge=0, description="summaries per cycle at most")
    summary_chars: int = Field(_defaults.summary_chars, ge=2, description="summary length limit, ellipsis included")


class RevectorizeConfig(dg.Config):
    batch_size: int = Field(_defaults.embed_batch_size, ge=1, description="texts per embedder call")
    reembed_cap: int = Field(_defaults.reembed_cap, ge=0, description="nodes embedded by another model re-embedded per cycle at most")


class StaleConfidenceConfig(dg.Config):
    stale_after_days: int = Field(_defaults.stale_after_days, ge=0, description="days without recall before confidence goes stale")


class GraphSyncConfig(dg.Config):
    cap: int = Field(_defaults.graph_sync_cap, ge=0, description="nodes synced per cycle at most")


class AssociateConfig(dg.Config):
    threshold: float = Field(_defaults.association_threshold, gt=0.0, le=1.0,
                             description="cosine a pair must exceed to be linked as sharing a concept")
    merge_threshold: float = Field(_defaults.similarity_threshold, gt=0.0, le=1.0,
                                   description="pairs above this are duplicates (step 2), not associations")
    cap: int = Field(_defaults.association_cap, ge=0, description="edges added per cycle at most")
    in_database_search_max_changed: int = Field(
        _defaults.in_database_search_max_changed, ge=0,
        description="up to this many changed nodes, pgvector finds their pairs in the database",
    )

    @model_validator(mode="after")
    def _below_merge_threshold(self):
        if self.threshold >= self.merge_threshold:
            raise ValueError(
                f"association threshold {self.threshold} must be below the merge threshold "
                f"{self.merge_threshold} (CURATOR_ASSOCIATION_THRESHOLD < CURATOR_SIMILARITY_THRESHOLD)"
            )
        return self

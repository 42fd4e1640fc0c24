"""Per-op Dagster config. Defaults come from the step settings (environment), so the launchpad
shows the values in force and an operator can override one for a single run. The bounds are the
settings' own types (bounds.py): a value is refused here exactly as in the environment, before
the step touches anything."""

from __future__ import annotations

import dagster as dg
from pydantic import Field, model_validator

from curation_pipeline.config.bounds import (
    AtLeastOne,
    Cap,
    Count,
    TextLimit,
    Threshold,
    check_association_below_merge,
)
from curation_pipeline.config.steps import StepSettings

_defaults = StepSettings.from_environment()


class ReclassifyConfig(dg.Config):
    min_epoch_lag: Count = Field(_defaults.reclassify_min_epoch_lag, description="epoch lag a never-recalled node must exceed")
    cap: Cap = Field(_defaults.reclassify_cap, description="signals per cycle at most")


class ConsolidateConfig(dg.Config):
    similarity_threshold: Threshold = Field(_defaults.similarity_threshold, description="cosine a pair must exceed")
    cap: Cap = Field(_defaults.consolidate_cap, description="pairs merged per cycle at most")
    max_chars: AtLeastOne = Field(_defaults.merge_max_chars, description="merged text length limit")
    in_database_search_max_changed: Count = Field(
        _defaults.in_database_search_max_changed,
        description="up to this many changed nodes, pgvector finds their pairs in the database; "
        "more, and the namespace's vectors are compared here in float32 blocks",
    )
    max_archive_fraction: Threshold = Field(
        _defaults.max_archive_fraction,
        description="share of the namespace's active nodes that one cycle may archive (at least 1)",
    )
    judge_band_low: Threshold = Field(
        _defaults.judge_band_low,
        description="pairs above this cosine, up to the merge threshold, are judged by the LLM "
        "(when it is on): same, update, related or distinct",
    )
    update_min_similarity: Threshold = Field(
        _defaults.update_min_similarity,
        description="pairs above this cosine are checked for updates (a newer memory giving a new value)",
    )
    supersede_cap: Cap = Field(_defaults.supersede_cap, description="older memories superseded per cycle at most")
    judge_cap: Cap = Field(_defaults.judge_cap, description="pairs the LLM judges per cycle at most")
    search_max_changed: AtLeastOne = Field(
        _defaults.search_max_changed,
        description="changed nodes whose pairs one cycle searches at most (the rest next cycle)",
    )


class SummarizeConfig(dg.Config):
    min_chars: Count = Field(_defaults.verbose_min_chars, description="a text longer than this is verbose")
    recall_below: Count = Field(_defaults.verbose_recall_below, description="verbose nodes recalled fewer times are summarized")
    cap: Cap = Field(_defaults.summarize_cap, description="summaries per cycle at most")
    summary_chars: TextLimit = Field(_defaults.summary_chars, description="summary length limit, ellipsis included")


class RevectorizeConfig(dg.Config):
    batch_size: AtLeastOne = Field(_defaults.embed_batch_size, description="texts per embedder call")
    reembed_cap: Cap = Field(_defaults.reembed_cap, description="nodes embedded by another model re-embedded per cycle at most")
    embed_cap: Cap = Field(_defaults.embed_cap, description="nodes without a vector embedded per cycle at most")


class StaleConfidenceConfig(dg.Config):
    stale_after_days: Count = Field(_defaults.stale_after_days, description="days without recall before confidence goes stale")
    cap: Cap = Field(_defaults.stale_cap, description="nodes marked stale per cycle at most")


class GraphSyncConfig(dg.Config):
    cap: Cap = Field(_defaults.graph_sync_cap, description="nodes synced per cycle at most, in steady state")
    backfill_cap: Cap = Field(_defaults.graph_backfill_cap,
                              description="while more nodes than `cap` wait: nodes synced per cycle at most")


class AssociateConfig(dg.Config):
    threshold: Threshold = Field(_defaults.association_threshold,
                                 description="cosine a pair must exceed to be linked as sharing a concept")
    merge_threshold: Threshold = Field(_defaults.similarity_threshold,
                                       description="pairs above this are duplicates (step 2), not associations")
    cap: Cap = Field(_defaults.association_cap, description="edges added per cycle at most")
    in_database_search_max_changed: Count = Field(
        _defaults.in_database_search_max_changed,
        description="up to this many changed nodes, pgvector finds their pairs in the database",
    )
    search_max_changed: AtLeastOne = Field(
        _defaults.search_max_changed,
        description="changed nodes whose pairs one cycle searches at most (the rest next cycle)",
    )

    @model_validator(mode="after")
    def _below_merge_threshold(self):
        check_association_below_merge(self.threshold, self.merge_threshold)
        return self

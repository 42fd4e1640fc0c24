"""Every step's thresholds and caps (the reference curator's numbers; docs/architecture.md lists
the steps). Dagster op config (op_config.py) starts from these, so an operator can override a
value for one run in the launchpad without touching the environment."""

from __future__ import annotations

from pydantic import Field, model_validator

from curation_pipeline.config.bounds import (
    AtLeastOne,
    Cap,
    Count,
    TextLimit,
    Threshold,
    check_association_below_merge,
)
from curation_pipeline.config.environment import EnvironmentSettings


class StepSettings(EnvironmentSettings):
    # Step 1: reclassify stale nodes.
    reclassify_min_epoch_lag: Count = Field(100, validation_alias="CURATOR_RECLASSIFY_MIN_EPOCH_LAG")
    reclassify_cap: Cap = Field(50, validation_alias="CURATOR_RECLASSIFY_CAP")
    # Step 2: consolidate duplicates.
    similarity_threshold: Threshold = Field(0.92, validation_alias="CURATOR_SIMILARITY_THRESHOLD")
    consolidate_cap: Cap = Field(20, validation_alias="CURATOR_CONSOLIDATE_CAP")
    merge_max_chars: AtLeastOne = Field(2000, validation_alias="CURATOR_MERGE_MAX_CHARS")
    # At most this share of a namespace's active nodes is archived in one cycle (at least one),
    # so a bad threshold can't archive half a namespace at once.
    max_archive_fraction: Threshold = Field(0.1, validation_alias="CURATOR_MAX_ARCHIVE_FRACTION")
    # Pairs above this (and up to the merge threshold) are judged by the LLM when it is on:
    # same, update, related or distinct.
    judge_band_low: Threshold = Field(0.75, validation_alias="CURATOR_JUDGE_BAND_LOW")
    # Pairs above this are checked for updates offline (a new value shares less of the text:
    # with all-MiniLM-L6-v2, 14 of 110 labelled updates lie between 0.6 and 0.75).
    update_min_similarity: Threshold = Field(0.6, validation_alias="CURATOR_UPDATE_MIN_SIMILARITY")
    # Older memories marked superseded per cycle at most, and pairs sent to the judge.
    supersede_cap: Cap = Field(20, validation_alias="CURATOR_SUPERSEDE_CAP")
    judge_cap: Cap = Field(20, validation_alias="CURATOR_JUDGE_CAP")
    # Incremental step 2: up to this many changed nodes are compared in the database (k x n
    # distances there beat loading n vectors here below roughly 100; benchmarks/curation_cost.py).
    in_database_search_max_changed: Count = Field(100, validation_alias="CURATOR_IN_DATABASE_SEARCH_MAX_CHANGED")
    # Steps 2 and 6b: nodes written since the last pass whose pairs one cycle searches at most
    # (oldest writes first, the rest the next cycles): a bulk load of a large namespace is
    # compared a bounded slice a cycle (k x N products), not all at once.
    search_max_changed: AtLeastOne = Field(5000, validation_alias="CURATOR_SEARCH_MAX_CHANGED")
    # Step 3: summarize verbose nodes.
    verbose_min_chars: Count = Field(500, validation_alias="CURATOR_VERBOSE_MIN_CHARS")
    verbose_recall_below: Count = Field(3, validation_alias="CURATOR_VERBOSE_RECALL_BELOW")
    summarize_cap: Cap = Field(30, validation_alias="CURATOR_SUMMARIZE_CAP")
    summary_chars: TextLimit = Field(200, validation_alias="CURATOR_SUMMARY_CHARS")
    # Step 4: embed (re-embed) nodes.
    embed_batch_size: AtLeastOne = Field(256, validation_alias="CURATOR_EMBED_BATCH_SIZE")
    # Nodes without a vector embedded per cycle at most (oldest first): a namespace loaded without
    # vectors is embedded over several cycles, each bounded in time and memory.
    embed_cap: Cap = Field(5000, validation_alias="CURATOR_EMBED_CAP")
    # Nodes whose vector came from another model than the configured one are re-embedded, at
    # most this many per cycle: a model switch is a migration spread over cycles, not one bill.
    reembed_cap: Cap = Field(1000, validation_alias="CURATOR_REEMBED_CAP")
    # Step 5: mark stale confidence.
    stale_after_days: Count = Field(30, validation_alias="CURATOR_STALE_AFTER_DAYS")
    # Marked stale per cycle at most (oldest first; the reference has no cap, and a normal cycle
    # never reaches this one).
    stale_cap: Cap = Field(10_000, validation_alias="CURATOR_STALE_CAP")
    # Step 6: graph sync.
    graph_sync_cap: Cap = Field(100, validation_alias="CURATOR_GRAPH_SYNC_CAP")
    # While more nodes than that wait (a bulk load, a first sync), the step goes on in batches of
    # 1,000 up to this many nodes a cycle: the graph catches up in cycles, not weeks.
    graph_backfill_cap: Cap = Field(20_000, validation_alias="CURATOR_GRAPH_BACKFILL_CAP")
    # Step 6b: concept associations. Nodes at least this similar (but not similar enough to merge)
    # are linked by a `shares_concept_with` edge; never with the lexical embedder.
    association_threshold: Threshold = Field(0.80, validation_alias="CURATOR_ASSOCIATION_THRESHOLD")
    association_cap: Cap = Field(200, validation_alias="CURATOR_ASSOCIATION_CAP")

    @model_validator(mode="after")
    def _association_below_merge(self) -> StepSettings:
        check_association_below_merge(self.association_threshold, self.similarity_threshold)
        return self

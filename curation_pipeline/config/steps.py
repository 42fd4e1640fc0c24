"""Every step's thresholds and caps (the reference curator's numbers; docs/architecture.md lists
the steps), each declared once here: its type (with its bound, bounds.py), its default, its
description and its environment variable.

The launchpad's op config (op_config.py) is derived from these fields, with these static
defaults, so importing it reads nothing; the values in force are read from the environment where
the Definitions are built and bound there as the jobs' default config (defs/job.py), so an
operator sees them in the launchpad and can override one for a single run.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, model_validator

from curation_pipeline.config.bounds import (
    AtLeastOne,
    Cap,
    Count,
    MergeLimit,
    TextLimit,
    Threshold,
    check_association_below_merge,
    check_judge_band,
    check_merge_limit,
)
from curation_pipeline.config.environment import EnvironmentSettings


def setting(default: Any, variable: str, description: str, *aliases: str) -> Any:
    """A step setting: its default, its variable (then any older names still accepted, the first
    set one wins) and the description the launchpad shows."""
    alias = AliasChoices(variable, *aliases) if aliases else variable
    return Field(default, validation_alias=alias, description=description)


class StepSettings(EnvironmentSettings):
    # Step 1: reclassify stale nodes.
    reclassify_min_epoch_lag: Count = setting(
        100, "CURATOR_RECLASSIFY_MIN_EPOCH_LAG", "epoch lag a never-recalled node must exceed")
    reclassify_cap: Cap = setting(50, "CURATOR_RECLASSIFY_CAP", "signals per cycle at most")
    # Step 2: consolidate duplicates.
    similarity_threshold: Threshold = setting(0.92, "CURATOR_SIMILARITY_THRESHOLD", "cosine a pair must exceed")
    consolidate_cap: Cap = setting(20, "CURATOR_CONSOLIDATE_CAP", "pairs merged per cycle at most")
    merge_max_chars: MergeLimit = setting(
        2000, "CURATOR_MERGE_MAX_CHARS",
        "merged text length limit: a merge that cannot keep every clause within it waits")
    # At most this share of a namespace's active nodes is archived in one cycle (at least one),
    # so a bad threshold can't archive half a namespace at once.
    max_archive_fraction: Threshold = setting(
        0.1, "CURATOR_MAX_ARCHIVE_FRACTION",
        "share of the namespace's active nodes that one cycle may archive (at least 1)")
    judge_band_low: Threshold = setting(
        0.75, "CURATOR_JUDGE_BAND_LOW",
        "pairs above this cosine, up to the merge threshold, are judged by the LLM (when it is on): "
        "same, update, related or distinct")
    # With all-MiniLM-L6-v2, 14 of 110 labelled updates lie between 0.6 and 0.75: a new value
    # shares less of the text.
    update_min_similarity: Threshold = setting(
        0.6, "CURATOR_UPDATE_MIN_SIMILARITY",
        "pairs above this cosine are checked for updates (a newer memory giving a new value)")
    supersede_cap: Cap = setting(20, "CURATOR_SUPERSEDE_CAP", "older memories superseded per cycle at most")
    judge_cap: Cap = setting(20, "CURATOR_JUDGE_CAP", "pairs the LLM judges per cycle at most")
    # Off: the words must find which attribute changed (core/judged_updates.py). On: the judge
    # reads that, and the words check only that a value gave way to one of its kind with nothing
    # lost (core/trusted_updates.py); for a strong model: docs/quality.md gives the price.
    judge_trusted: bool = setting(
        False, "CURATOR_JUDGE_TRUSTED",
        "take the LLM's 'update' when a value gave way to one of its kind and nothing is lost, "
        "without the words finding which attribute changed")
    # Incremental steps 2 and 6b: k x n distances in the database beat loading n vectors here
    # below roughly 100 changed nodes (benchmarks/curation_cost.py).
    in_database_search_max_changed: Count = setting(
        100, "CURATOR_IN_DATABASE_SEARCH_MAX_CHANGED",
        "up to this many changed nodes, pgvector finds their pairs in the database; more, and the "
        "namespace's vectors are compared here in float32 blocks")
    # Steps 2 and 6b, oldest writes first: a bulk load of a large namespace is compared a bounded
    # slice a cycle (k x N products), not all at once.
    search_max_changed: AtLeastOne = setting(
        5000, "CURATOR_SEARCH_MAX_CHANGED",
        "changed nodes whose pairs one cycle searches at most (the rest next cycle)")
    # Step 3: summarize verbose nodes.
    verbose_min_chars: Count = setting(500, "CURATOR_VERBOSE_MIN_CHARS", "a text longer than this is verbose")
    verbose_recall_below: Count = setting(
        3, "CURATOR_VERBOSE_RECALL_BELOW", "verbose nodes recalled fewer times are summarized")
    summarize_cap: Cap = setting(30, "CURATOR_SUMMARIZE_CAP", "summaries per cycle at most")
    summary_chars: TextLimit = setting(200, "CURATOR_SUMMARY_CHARS", "summary length limit, ellipsis included")
    # Step 4: embed (re-embed) nodes.
    embed_batch_size: AtLeastOne = setting(256, "CURATOR_EMBED_BATCH_SIZE", "texts per embedder call")
    # Oldest first: a namespace loaded without vectors is embedded over several cycles, each
    # bounded in time and memory.
    embed_cap: Cap = setting(5000, "CURATOR_EMBED_CAP", "nodes without a vector embedded per cycle at most")
    # A model switch is a migration spread over cycles, not one bill.
    reembed_cap: Cap = setting(
        1000, "CURATOR_REEMBED_CAP", "nodes embedded by another model re-embedded per cycle at most")
    # Step 5: mark stale confidence.
    stale_after_days: Count = setting(
        30, "CURATOR_STALE_AFTER_DAYS", "days without recall before confidence goes stale")
    # Oldest first; the reference has no cap, and a normal cycle never reaches this one.
    stale_cap: Cap = setting(10_000, "CURATOR_STALE_CAP", "nodes marked stale per cycle at most")
    # Step 6: graph sync.
    graph_sync_cap: Cap = setting(100, "CURATOR_GRAPH_SYNC_CAP", "nodes synced per cycle at most, in steady state")
    # In batches of 1,000: after a bulk load or a first sync the graph catches up in cycles, not weeks.
    graph_backfill_cap: Cap = setting(
        20_000, "CURATOR_GRAPH_BACKFILL_CAP", "while more nodes than `cap` wait: nodes synced per cycle at most")
    # Step 6b: concept associations; never with the lexical embedder.
    association_threshold: Threshold = setting(
        0.80, "CURATOR_ASSOCIATION_THRESHOLD",
        "cosine a pair must exceed to be linked as sharing a concept (not similar enough to merge)")
    association_cap: Cap = setting(200, "CURATOR_ASSOCIATION_CAP", "edges added per cycle at most")

    @model_validator(mode="after")
    def _association_below_merge(self) -> StepSettings:
        check_association_below_merge(self.association_threshold, self.similarity_threshold)
        return self

    @model_validator(mode="after")
    def _judge_band_below_merge(self) -> StepSettings:
        check_judge_band(self.judge_band_low, self.similarity_threshold,
                         set_explicitly="judge_band_low" in self.model_fields_set)
        return self

    @model_validator(mode="after")
    def _merges_hold_what_step_3_keeps(self) -> StepSettings:
        check_merge_limit(self.merge_max_chars, self.verbose_min_chars, self.summary_chars)
        return self

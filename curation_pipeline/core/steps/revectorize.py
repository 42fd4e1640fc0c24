"""Step 4 planning: which nodes to embed, in which batches, and whether the embedder fits."""

from __future__ import annotations

import polars as pl

from curation_pipeline.core.vectors import EmbeddingError


def check_embedder_fits(embedder_name: str, embedder_dimension: int, column_dimension: int) -> None:
    """Refuse, before anything is embedded, an embedder whose vectors don't fit the column."""
    if embedder_dimension != column_dimension:
        raise EmbeddingError(
            f"embedder {embedder_name!r} produces {embedder_dimension}-dimensional vectors but the "
            f"memory store's embedding column is vector({column_dimension}) (CURATION_EMBEDDING_DIM, "
            f"fixed when the store was created): choose a model of that width with "
            f"CURATION_EMBEDDER / CURATION_EMBEDDING_MODEL, or use a store of width {embedder_dimension}"
        )


def plan_embedding(missing: pl.DataFrame, outdated: pl.DataFrame) -> pl.DataFrame:
    """What step 4 embeds this cycle: every node without a vector first (it can't be found or
    linked at all), then the capped share of nodes whose vector another model made (until
    re-embedded they are compared with nothing: see steps 2 and 6b). Column `missing` tells which."""
    # Disjoint by construction: a node without a vector has no model to be outdated by.
    return pl.concat([
        missing.with_columns(pl.lit(True).alias("missing")),
        outdated.with_columns(pl.lit(False).alias("missing")),
    ])


def embedding_batches(candidates: pl.DataFrame, batch_size: int) -> list[pl.DataFrame]:
    """The candidates (id, pointer_summary, row_version, ...) in embedder-sized batches, in order."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    return [candidates.slice(start, batch_size) for start in range(0, candidates.height, batch_size)]

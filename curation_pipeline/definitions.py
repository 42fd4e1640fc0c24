"""The one Definitions object of the code location (workspace.yaml loads this module)."""

from __future__ import annotations

import dagster as dg

from curation_pipeline.job import curate_namespace
from curation_pipeline.resources import EmbedderResource, MemoryStore

defs = dg.Definitions(
    jobs=[curate_namespace],
    resources={"memory_store": MemoryStore(), "embedder": EmbedderResource()},
)

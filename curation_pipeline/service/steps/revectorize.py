"""Step 4, `revectorize`: embed every active node that lacks a vector, and re-embed (capped) the
nodes whose vector another model made; report what is still missing or outdated.

Each batch is written in its own short transaction and no transaction is open while the embedder
works, so a slow embedder never keeps an agent waiting on a row. A batch is validated (width,
NaN, infinity, zero) before it is written: a bad vector fails the step and writes nothing of its
batch. An embedder that can't answer this cycle stops the step early, not the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from curation_pipeline.clients.embedders.base import Embedder
from curation_pipeline.config.op_config import RevectorizeConfig
from curation_pipeline.core.step_spec import EMBEDDINGS, HealthCount, StepCounts, StepSpec, SummaryColumn, count
from curation_pipeline.core.steps.revectorize import (
    check_embedder_fits,
    embedding_batches,
    plan_embedding,
)
from curation_pipeline.core.vectors import (
    EmbedderUnavailable,
    EmbeddingError,
    validate_vectors,
)
from curation_pipeline.service.step_run import StepRun
from curation_pipeline.service.steps import summarize
from curation_pipeline.store import actions, candidates


def revectorize(run: StepRun, config, *, embedder: Embedder) -> dict:
    scope = run.scope
    # Before anything is embedded: the embedder's width must be the column's.
    check_embedder_fits(embedder.name, embedder.dimension, run.session.settings.embedding_dim)
    with run.transaction() as conn:
        missing = candidates.missing_embedding_candidates(conn, scope, config.embed_cap)
        outdated = candidates.outdated_embedding_candidates(conn, scope, embedder.name, config.reembed_cap)
    written: set[str] = set()
    attempted, unavailable = 0, None
    for batch in embedding_batches(plan_embedding(missing, outdated), config.batch_size):
        try:
            vectors = embedder.embed(batch["pointer_summary"].to_list())
            validate_vectors(vectors, embedder.dimension, labels=batch["id"].to_list())
        except EmbedderUnavailable as error:
            unavailable = str(error)
            break
        except EmbeddingError as error:
            # The embedder names the row by its place in the batch; the operator needs the node.
            if error.row is None or batch["id"][error.row] in str(error):
                raise
            raise EmbeddingError(f"node {batch['id'][error.row]}: {error}", row=error.row) from None
        attempted += batch.height
        with run.transaction() as conn:
            written.update(actions.store_embeddings(conn, scope, batch, vectors, embedder.name))
    was_missing = set(missing["id"].to_list())
    with run.transaction() as conn:
        counts = {
            "candidates": missing.height,
            "embedded": len(written & was_missing),
            "reembedded": len(written - was_missing),
            "skipped_concurrent": attempted - len(written),
            "still_missing": candidates.count_missing_embeddings(conn, scope),
            "outdated_remaining": candidates.count_outdated_embeddings(conn, scope, embedder.name),
            "embedder": embedder.name,
        }
        if unavailable is not None:
            counts["embedder_unavailable"] = unavailable
        usage = getattr(embedder, "usage", None)  # a remote embedder's requests and waits
        if usage is not None:
            counts.update(embed_requests=usage.requests, embed_retries=usage.retries,
                          embed_waited_secs=round(usage.waited_secs, 3), embed_tokens=usage.prompt_tokens)
        run.finish(conn, counts)
    return counts


@dataclass(frozen=True, kw_only=True)
class RevectorizeCounts(StepCounts):
    embedded: int | None = count("nodes without a vector that got one")
    reembedded: int | None = count("nodes re-embedded because another model made their vector")
    still_missing: int | None = count("active nodes still without a vector")
    outdated_remaining: int | None = count("active nodes whose vector another model made, left for later")
    candidates: int | None = count("nodes without a vector considered")
    skipped_concurrent: int | None = count("embedded nodes an agent changed meanwhile (not written)")
    embedder: str | None = count("the embedder's model name")
    embedder_unavailable: str | None = count("why the embedder could not answer (the step stopped early)")
    embed_requests: int | None = count("requests to a remote embedder")
    embed_retries: int | None = count("retried requests to a remote embedder")
    embed_waited_secs: float | None = count("seconds spent waiting for a remote embedder")
    embed_tokens: int | None = count("prompt tokens a remote embedder counted")


SPEC = StepSpec(
    name="revectorize",
    number="4",
    description="embed active nodes without a vector, re-embed (capped) those of another model.",
    counts=RevectorizeCounts,
    config=RevectorizeConfig,
    after=(summarize.SPEC.name,),
    summary=(SummaryColumn("embedded", ("embedded", "reembedded")),),  # new vectors and a model switch's
    count_order=("embedded", "reembedded", "still_missing", "outdated_remaining", "candidates",
                 "skipped_concurrent", "embedder"),
    health=(HealthCount("re_embedded", ("embedded", "reembedded")),),
    changes_namespace=("embedded", "reembedded"),
    changes_view=EMBEDDINGS,
    run=revectorize,
)

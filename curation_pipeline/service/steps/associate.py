"""Step 6b, `associate_concepts`: link active nodes that are similar (cosine above the
association threshold) but that step 2 will not merge, with `shares_concept_with` edges;
incremental like step 2 (planning: core/steps/associate.py).

Never by the lexical embedder's similarity: it is shared words, and an edge between two
memories that merely use the same words would be noise presented as meaning. Pairs the LLM
judged in step 2 are linked as it said, with any embedder: "related" ones are, "distinct" ones
are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from curation_pipeline.config.op_config import AssociateConfig
from curation_pipeline.core.step_spec import ASSOCIATIONS, GraphMirrorCounts, StepSpec, SummaryColumn, count
from curation_pipeline.core.steps.associate import (
    EDGE_SCHEMA,
    candidate_edges,
    plan_associations,
    without_merges,
)
from curation_pipeline.core.steps.pair_decisions import DISTINCT, RELATED
from curation_pipeline.service.graph_mirror import follow_in_graph_backend
from curation_pipeline.service.similar_pairs import (
    INCREMENTAL_IN_DATABASE,
    search_pairs,
)
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.service.steps import graph_sync, revectorize
from curation_pipeline.store import associations, candidates, judgements, passes

LEXICAL_SKIP = "lexical embedder (its similarity is shared words, not meaning)"


def _judged(found: pl.DataFrame, related: pl.DataFrame, distinct: pl.DataFrame) -> pl.DataFrame:
    """The candidate edges without the pairs the judge called distinct, with those it called
    related (step 2 with the LLM on; store/judgements.py)."""
    kept = found.join(distinct.select("source_id", "target_id"), on=["source_id", "target_id"], how="anti")
    return pl.concat([kept, related.cast(dict(EDGE_SCHEMA))]).unique(["source_id", "target_id"], keep="first",
                                                                      maintain_order=True)


def associate_concepts(run: StepRun, config, *, model: str | None, association_model: str = "") -> dict:
    """`model`: the configured embedder's name, None for the lexical embedder (then only the
    pairs the LLM judged related are linked). `association_model`: the name edges record when
    no semantic model made them (the embedder's)."""
    if model is None:
        return run_phases(run, lambda conn: None, lambda conn, _: _judged_edges_only(conn, run, config,
                                                                                   association_model))
    params = {"threshold": config.threshold, "upper": config.merge_threshold, "model": model}

    def work(conn, _):
        start = passes.begin_pass(conn, run.scope, PASS_COLUMNS, params, max_changed=config.search_max_changed)
        if start.nothing_changed:
            passes.save_pass_state(conn, run.scope, PASS_COLUMNS, start.finished(complete=True))
            return {"pass": "unchanged", "nodes_compared": 0, "edges_added": 0}
        search = search_pairs(
            conn, run.scope, start, model=model, threshold=config.threshold,
            in_database_max_changed=config.in_database_search_max_changed,
            upper=config.merge_threshold, same_memory_type=False,
        )
        pairs = search.pairs
        if search.how != INCREMENTAL_IN_DATABASE:  # the database already left the merges out
            pairs = without_merges(search.nodes, pairs, upper=config.merge_threshold,
                                   vetoed=candidates.vetoed_pairs(conn, run.scope))
        found = _judged(candidate_edges(search.nodes, pairs), judgements.verdict_pairs(conn, run.scope, RELATED),
                        judgements.verdict_pairs(conn, run.scope, DISTINCT))
        plan = plan_associations(found, existing=associations.existing_pairs(conn, run.scope, found),
                                 cap=config.cap)
        counts = {**associations.add_edges(conn, run.scope, plan.edges, model),
                  **follow_in_graph_backend(conn, run)}
        if plan.left_over and start.incremental:
            # Capped: the same changed nodes are searched again next cycle (their added edges are
            # found and skipped), so the backlog drains without a full pass of the namespace.
            passes.save_pass_state(conn, run.scope, PASS_COLUMNS, start.searched_again())
        else:
            passes.save_pass_state(conn, run.scope, PASS_COLUMNS, start.finished(complete=plan.left_over == 0))
        return {"pass": search.how, "nodes_compared": search.compared,
                "pairs_in_band": pairs.height, "pairs_left_over": plan.left_over, **counts}

    return run_phases(run, lambda conn: None, work)


def _judged_edges_only(conn, run: StepRun, config, model: str) -> dict:
    """With the lexical embedder, whose similarity is shared words: only the pairs the LLM
    judged related are linked (their meaning was judged, not their words)."""
    related = judgements.verdict_pairs(conn, run.scope, RELATED)
    if related.is_empty():
        return {"skipped": LEXICAL_SKIP}
    plan = plan_associations(related, existing=associations.existing_pairs(conn, run.scope, related), cap=config.cap)
    counts = {**associations.add_edges(conn, run.scope, plan.edges, model), **follow_in_graph_backend(conn, run)}
    return {"pass": "judged pairs only", "pairs_in_band": related.height, "pairs_left_over": plan.left_over, **counts}


@dataclass(frozen=True, kw_only=True)
class AssociateCounts(GraphMirrorCounts):
    edges_added: int | None = count("shares_concept_with edges added")
    vertices_created: int | None = count("vertices created for edge ends the sync had not reached")
    pairs_in_band: int | None = count("similar pairs found between the association and merge thresholds")
    pairs_left_over: int | None = count("pairs found but left to the next cycle by the cap")
    pass_: str | None = count("how the pairs were searched (full, incremental, unchanged)", key="pass")
    nodes_compared: int | None = count("nodes compared")
    skipped_concurrent: int | None = count("edges whose ends an agent changed meanwhile (not added)")
    skipped: str | None = count("why the step did nothing (the lexical embedder)")


SPEC = StepSpec(
    name="associate_concepts",
    number="6b",
    description=("link similar nodes that step 2 will not merge with `shares_concept_with` edges "
                 "(never with the lexical embedder: its similarity is shared words, not meaning)."),
    counts=AssociateCounts,
    config=AssociateConfig,
    after=(graph_sync.SPEC.name, revectorize.SPEC.name),
    summary=(SummaryColumn("linked", ("edges_added",)),),
    count_order=("edges_added", "vertices_created", "pairs_in_band", "pairs_left_over",
                 "pass", "nodes_compared", "skipped_concurrent", "skipped"),
    changes_namespace=("edges_added", "vertices_created"),
    changes_view=ASSOCIATIONS,
    run=associate_concepts,
)
# Its incremental pass keeps its state in namespace_activity's associate_* columns.
PASS_COLUMNS = "associate"

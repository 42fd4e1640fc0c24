"""Step 6b, `associate_concepts`: link active nodes that are similar (cosine above the
association threshold) but that step 2 will not merge, with `shares_concept_with` edges;
incremental like step 2 (planning: core/steps/associate.py).

Never with the lexical embedder: its similarity is shared words, and an edge between two
memories that merely use the same words would be noise presented as meaning.
"""

from __future__ import annotations

from curation_pipeline.core.steps.associate import (
    candidate_edges,
    plan_associations,
    without_merges,
)
from curation_pipeline.service.graph_mirror import follow_in_graph_backend
from curation_pipeline.service.similar_pairs import (
    INCREMENTAL_IN_DATABASE,
    search_pairs,
)
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.store import associations, candidates, passes

LEXICAL_SKIP = "lexical embedder (its similarity is shared words, not meaning)"


def associate_concepts(run: StepRun, config, *, model: str | None) -> dict:
    """`model`: the configured embedder's name, None for the lexical embedder (no edges)."""
    if model is None:
        return {"skipped": LEXICAL_SKIP}
    params = {"threshold": config.threshold, "upper": config.merge_threshold, "model": model}

    def work(conn, _):
        start = passes.begin_pass(conn, run.scope, params, max_changed=config.search_max_changed)
        if start.nothing_changed:
            passes.save_pass_state(conn, run.scope, start.finished(complete=True))
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
        found = candidate_edges(search.nodes, pairs)
        plan = plan_associations(found, existing=associations.existing_pairs(conn, run.scope, found),
                                 cap=config.cap)
        counts = {**associations.add_edges(conn, run.scope, plan.edges, model),
                  **follow_in_graph_backend(conn, run)}
        if plan.left_over and start.incremental:
            # Capped: the same changed nodes are searched again next cycle (their added edges are
            # found and skipped), so the backlog drains without a full pass of the namespace.
            passes.save_pass_state(conn, run.scope, start.searched_again())
        else:
            passes.save_pass_state(conn, run.scope, start.finished(complete=plan.left_over == 0))
        return {"pass": search.how, "nodes_compared": search.compared,
                "pairs_in_band": pairs.height, "pairs_left_over": plan.left_over, **counts}

    return run_phases(run, lambda conn: None, work)

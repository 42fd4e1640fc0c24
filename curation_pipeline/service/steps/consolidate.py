"""Step 2, `consolidate_duplicates`: merge near-duplicate pairs within a namespace, memory type
and embedding model (the configured one: other vectors wait for step 4 to re-embed them).

load (pass state, pair search, merge plan: core/steps/consolidate.py) -> the LLM's merged texts,
judged by the fact guard, with no transaction open (service/llm_rewrite.py) -> apply under the
rows' versions, and save where the next pass starts.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from curation_pipeline.clients.llm import LLMClient
from curation_pipeline.core.steps.consolidate import archive_allowance, select_merges
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.core.steps.incremental import PassStart
from curation_pipeline.service.llm_rewrite import rewrite_merges
from curation_pipeline.service.similar_pairs import PairSearch, search_pairs
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.store import actions, candidates, passes


@dataclass
class _Planned:
    start: PassStart
    search: PairSearch | None = None  # None: nothing changed since a complete pass
    plan: pl.DataFrame | None = None
    left_over: int = 0
    allowance: int = 0
    llm_counts: dict | None = None


def consolidate_duplicates(run: StepRun, config, *, model: str, llm: LLMClient | None) -> dict:
    """`model` is the configured embedder's name: only its vectors are compared (building an
    embedder loads no model, so a broken embedder fails step 4, not this step)."""
    params = {"similarity_threshold": config.similarity_threshold, "model": model}

    def load(conn) -> _Planned:
        start = passes.begin_pass(conn, run.scope, params, max_changed=config.search_max_changed)
        if start.nothing_changed:
            return _Planned(start)
        allowance = archive_allowance(candidates.count_active(conn, run.scope), config.max_archive_fraction)
        search = search_pairs(
            conn, run.scope, start, model=model, threshold=config.similarity_threshold,
            in_database_max_changed=config.in_database_search_max_changed,
        )
        result = select_merges(search.nodes, search.pairs, cap=min(config.cap, allowance),
                               max_chars=config.max_chars, vetoed=candidates.vetoed_pairs(conn, run.scope))
        return _Planned(start, search, result.plan, result.left_over, allowance)

    def rewrite(planned: _Planned) -> _Planned:
        if planned.search is not None:
            planned.plan, planned.llm_counts = rewrite_merges(llm, planned.plan, planned.search.nodes,
                                                              max_chars=config.max_chars)
        return planned

    def apply(conn, planned: _Planned) -> dict:
        if planned.search is None:
            repaired = _repair_chains(conn, run, planned.start)
            passes.save_pass_state(conn, run.scope, planned.start.finished(complete=True))
            return {"pass": "unchanged", "nodes_compared": 0, "focus_nodes": 0, **actions.no_merges(),
                    "chains_repaired": repaired}
        counts = actions.apply_merges(conn, run.scope, planned.plan, planned.search.nodes)
        repaired = _repair_chains(conn, run, planned.start)
        if planned.left_over and planned.start.incremental:
            # Capped: the same changed nodes are searched again next cycle (a full pass of the
            # namespace would cost its whole k x N product to find what these already hold).
            passes.save_pass_state(conn, run.scope, planned.start.searched_again())
        else:
            passes.save_pass_state(conn, run.scope, planned.start.finished(complete=planned.left_over == 0))
        return {"pass": planned.search.how, "nodes_compared": planned.search.compared,
                "focus_nodes": planned.search.focus_nodes, "archive_allowance": planned.allowance,
                "pairs_left_over": planned.left_over, **counts, "chains_repaired": repaired,
                **(planned.llm_counts or {})}

    return run_phases(run, load, apply, prepare=rewrite if llm is not None else None)


def _repair_chains(conn, run: StepRun, start: PassStart) -> int:
    """After the merges (which re-point what they can see themselves): archived nodes written
    since the pass started whose keeper is archived go to their chain's end; the first time, in
    the whole namespace (chains broken before this rule existed)."""
    if passes.chains_checked(conn, run.scope):
        return actions.repair_chains(conn, run.scope, start.position)
    repaired = actions.repair_chains(conn, run.scope, SyncPosition())
    passes.mark_chains_checked(conn, run.scope)
    return repaired

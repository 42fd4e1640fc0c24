"""Step 2, `consolidate_duplicates`: within a namespace, memory type and embedding model (the
configured one: other vectors wait for step 4 to re-embed them), supersede the memories a newer
one updates and merge the near-duplicates; with the LLM on, judge the similar pairs in between.

Why supersession lives in this step and not in an op of its own: the updates to find are
among exactly the pairs this step already searches (an update is a similar pair), and the
decision is one decision per pair: an update must never be merged, so merging and superseding
have to look at a pair together, once. A separate op would search the same pairs a second time
and would still have to run first and hand this one its verdicts.

load (pass state, the pair search down to the judge band) -> decide with no transaction open
(core/steps/pair_decisions.py; the LLM's verdicts and merged texts, judged by the fact guard:
service/llm_rewrite.py) -> apply under the rows' versions, and save where the next pass starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from curation_pipeline.clients.llm import LLMClient, StepTally
from curation_pipeline.config.op_config import ConsolidateConfig
from curation_pipeline.core.context_updates import CONTEXT_WINDOW, needs_context
from curation_pipeline.core.coverage import Semantic
from curation_pipeline.core.step_spec import MERGES, HealthCount, LLMCounts, StepSpec, SummaryColumn, count
from curation_pipeline.core.steps.consolidate import CONSOLIDATION_SCHEMA, archive_allowance
from curation_pipeline.core.steps.graph_sync import SyncPosition
from curation_pipeline.core.steps.incremental import PassStart
from curation_pipeline.core.steps.pair_decisions import (
    JUDGE_SCHEMA,
    SUPERSESSION_SCHEMA,
    PairDecisions,
    apply_verdicts,
    decide_pairs,
    without_hidden_clauses,
)
from curation_pipeline.core.subjects import subject_keys
from curation_pipeline.core.supersession import still_supersedes
from curation_pipeline.service.llm_rewrite import judge_pairs, rewrite_merges
from curation_pipeline.service.similar_pairs import (
    PairSearch,
    search_pairs,
    with_context_pairs,
    with_subject_pairs,
)
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.store import (
    actions,
    candidates,
    context_pairs,
    judgements,
    passes,
    subject_index,
    supersessions,
)

# The subject index (store/subject_index.py): partners per searched node at most, the share of a
# namespace above which a key is too common to follow, and the keys' version (a new one means
# one full pass, which rewrites every node's keys).
SUBJECT_PARTNERS = 8
SUBJECT_MAX_SHARE = 0.05
SUBJECT_INDEX_VERSION = 2


@dataclass
class _Planned:
    start: PassStart
    search: PairSearch | None = None  # None: nothing changed since a complete pass
    vetoed: pl.DataFrame | None = None
    allowance: int = 0
    decisions: PairDecisions | None = None
    merges: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=CONSOLIDATION_SCHEMA))
    supersessions: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SUPERSESSION_SCHEMA))
    verdict_rows: list[dict] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    hiding: int = 0  # offline supersessions held back: their successor would not say an older clause


def consolidate_duplicates(run: StepRun, config, *, model: str, llm: LLMClient | None,
                           semantic: Semantic | None = None) -> dict:
    """`model` is the configured embedder's name: only its vectors are compared (building an
    embedder loads no model, so a broken embedder fails step 4, not this step). `semantic`: the
    embedder's judgement of what a text already says (None: by words)."""
    judge_low = min(config.judge_band_low, config.similarity_threshold)
    lowest = min(config.update_min_similarity, judge_low)
    params = {"similarity_threshold": config.similarity_threshold, "judge_band_low": judge_low,
              "update_min_similarity": lowest, "model": model, "subjects": SUBJECT_INDEX_VERSION}

    def load(conn) -> _Planned:
        start = passes.begin_pass(conn, run.scope, PASS_COLUMNS, params, max_changed=config.search_max_changed)
        if start.nothing_changed:
            return _Planned(start)
        allowance = archive_allowance(candidates.count_active(conn, run.scope), config.max_archive_fraction)
        search = search_pairs(
            conn, run.scope, start, model=model, threshold=lowest,
            in_database_max_changed=config.in_database_search_max_changed,
        )
        # Pairs that share a subject however far apart their wordings are: the keys of what this
        # pass searches are rewritten first (every node on a full pass).
        focus = sorted(start.changed) if start.incremental else None
        subject_index.refresh_keys(conn, run.scope, focus, subject_keys)
        search = with_subject_pairs(conn, run.scope, search, subject_index.pairs_by_subject(
            conn, run.scope, focus, model=model, per_node=SUBJECT_PARTNERS, max_share=SUBJECT_MAX_SHARE))
        # A memory that names no subject ("Make that 150k.") with the one written just before it.
        search = with_context_pairs(conn, run.scope, search, context_pairs.previous_pairs(
            conn, run.scope, focus, model=model, window=CONTEXT_WINDOW, needs_context=needs_context))
        vetoed = candidates.vetoed_pairs(conn, run.scope)
        if llm is not None:
            # A pair judged at these very versions is not asked again: its verdict stood.
            vetoed = pl.concat([vetoed, judgements.judged_pairs(conn, run.scope, search.nodes)])
        return _Planned(start, search, vetoed, allowance)

    def _ask_the_llm(planned: _Planned, client: LLMClient, *, merge_cap: int) -> None:
        tally = StepTally()
        nodes, decisions = planned.search.nodes, planned.decisions
        verdicts, judge_counts = judge_pairs(client, decisions.to_judge, tally)
        outcome = apply_verdicts(
            nodes, decisions.to_judge, verdicts, merge_cap=merge_cap - planned.merges.height,
            supersede_cap=config.supersede_cap - planned.supersessions.height,
            max_chars=config.max_chars, semantic=semantic, trusted=config.judge_trusted,
        )
        judged, hiding = without_hidden_clauses(outcome.supersessions, nodes, semantic)
        planned.supersessions = pl.concat([planned.supersessions, judged])
        merges = pl.concat([planned.merges, outcome.merges])
        planned.merges, llm_counts = rewrite_merges(client, merges, nodes, max_chars=config.max_chars,
                                                    semantic=semantic, tally=tally)
        planned.verdict_rows = _verdict_rows(decisions.to_judge, verdicts, nodes, judged, planned.merges)
        planned.counts = {**judge_counts, "judge_updates_refused": outcome.refused_updates + hiding,
                          "judge_same_refused": outcome.refused_same, **llm_counts}

    def decide(planned: _Planned) -> _Planned:
        if planned.search is None:
            return planned
        merge_cap = min(config.cap, planned.allowance)
        decisions = decide_pairs(
            planned.search.nodes, planned.search.pairs, merge_threshold=config.similarity_threshold,
            judge_band_low=judge_low, merge_cap=merge_cap, supersede_cap=config.supersede_cap,
            judge_cap=config.judge_cap if llm is not None else 0, max_chars=config.max_chars,
            vetoed=planned.vetoed, semantic=semantic, by_subject=planned.search.by_subject,
            by_context=planned.search.by_context, trusted=config.judge_trusted,
        )
        planned.decisions = decisions
        planned.merges = decisions.merges.plan
        planned.supersessions, planned.hiding = without_hidden_clauses(decisions.supersessions, planned.search.nodes,
                                                                       semantic)
        if llm is not None:
            _ask_the_llm(planned, llm, merge_cap=merge_cap)
        return planned

    def apply(conn, planned: _Planned) -> dict:
        if planned.search is None:
            repaired = _repair_chains(conn, run, planned.start)
            undone = _recheck_supersessions(conn, run, planned.start)
            passes.save_pass_state(conn, run.scope, PASS_COLUMNS, planned.start.finished(complete=True))
            return {"pass": "unchanged", "nodes_compared": 0, "focus_nodes": 0, **actions.no_merges(),
                    "chains_repaired": repaired, "supersessions_undone": undone}
        decisions, search = planned.decisions, planned.search
        superseded = actions.apply_supersessions(conn, run.scope, planned.supersessions, search.nodes)
        counts = actions.apply_merges(conn, run.scope, planned.merges, search.nodes)
        counts.update(superseded=superseded["superseded"], carried_into=superseded["carried_into"],
                      skipped_concurrent=counts["skipped_concurrent"] + superseded["skipped_concurrent"])
        repaired = _repair_chains(conn, run, planned.start)
        undone = _recheck_supersessions(conn, run, planned.start)
        judgements.record_judgements(conn, run.scope, planned.verdict_rows, llm.model if llm else "")
        if decisions.left_over and planned.start.incremental:
            # Capped: the same changed nodes are searched again next cycle (a full pass of the
            # namespace would cost its whole k x N product to find what these already hold).
            passes.save_pass_state(conn, run.scope, PASS_COLUMNS, planned.start.searched_again())
        else:
            passes.save_pass_state(conn, run.scope, PASS_COLUMNS, planned.start.finished(complete=decisions.left_over == 0))
        return {"pass": search.how, "nodes_compared": search.compared, "focus_nodes": search.focus_nodes,
                "pairs_compared": search.pairs.height, "archive_allowance": planned.allowance,
                "pairs_left_over": decisions.left_over, "updates_partial": decisions.partial_updates,
                "updates_held": decisions.updates_held + planned.hiding, "look_alikes": decisions.look_alikes,
                "speakers_apart": decisions.speakers_apart, "too_long_to_compare": decisions.too_long,
                **counts, "chains_repaired": repaired, "supersessions_undone": undone, **planned.counts}

    return run_phases(run, load, apply, prepare=decide)


def _repair_chains(conn, run: StepRun, start: PassStart) -> int:
    """After the merges (which re-point what they can see themselves): archived nodes written
    since the pass started whose keeper is archived go to their chain's end; the first time, in
    the whole namespace (chains broken before this rule existed)."""
    if passes.chains_checked(conn, run.scope):
        return actions.repair_chains(conn, run.scope, start.position)
    repaired = actions.repair_chains(conn, run.scope, SyncPosition())
    passes.mark_chains_checked(conn, run.scope)
    return repaired


def _recheck_supersessions(conn, run: StepRun, start: PassStart) -> int:
    """Put back the older memories whose successor no longer says the newer value (edited,
    moved out of the namespace, archived): see store/supersessions.py."""
    undone = []
    for row in supersessions.supersessions_to_recheck(conn, run.scope, start.position):
        if row["problem"] is not None:
            undone.append({**row, "why": f"its successor was {row['problem']}"})
        elif not still_supersedes(row["older_text"], row["successor_text"], row["made"]):
            undone.append({**row, "why": "its successor no longer says the newer value"})
    return supersessions.restore_superseded(conn, run.scope, undone)


def _verdict_rows(judged: pl.DataFrame, verdicts: dict, nodes: pl.DataFrame, supersessions: pl.DataFrame,
                  merges: pl.DataFrame) -> list[dict]:
    """One pair_judgements row per verdict, with what came of it."""
    versions = dict(zip(nodes["id"].to_list(), nodes["row_version"].to_list()))
    superseded = set(zip(supersessions["older_id"].to_list(), supersessions["newer_id"].to_list()))
    merged = {frozenset(pair) for pair in zip(merges["keeper_id"].to_list(), merges["absorbed_id"].to_list())}
    rows = []
    for row in judged.cast(dict(JUDGE_SCHEMA)).iter_rows(named=True):
        pair = (row["older_id"], row["newer_id"])
        verdict = verdicts.get(pair)
        if verdict is None:
            continue
        result = ("superseded" if pair in superseded else "merged" if frozenset(pair) in merged
                  else "refused" if verdict == "update" else "none")
        rows.append({"older_id": pair[0], "newer_id": pair[1], "older_version": versions[pair[0]],
                     "newer_version": versions[pair[1]], "similarity": row["similarity"],
                     "verdict": verdict, "outcome": result})
    return rows


@dataclass(frozen=True, kw_only=True)
class ConsolidateCounts(LLMCounts):
    pairs_merged: int | None = count("near-duplicate pairs merged")
    superseded: int | None = count("memories marked superseded by a newer one")
    carried_into: int | None = count("newer memories that took over the clauses of the one they superseded")
    nodes_archived: int | None = count("nodes archived by the merges")
    keepers_rewritten: int | None = count("keepers whose text the merge changed")
    repointed: int | None = count("archived nodes re-pointed at their keeper's keeper")
    omitted_sentences: int | None = count("sentences of an absorbed text the offline merge left out")
    updates_partial: int | None = count("updates found that change only part of the older memory")
    updates_held: int | None = count("updates held back (the caps, or a guard)")
    look_alikes: int | None = count("similar pairs that look alike but say different things")
    judged: int | None = count("similar pairs the LLM judged")
    judge_same: int | None = count("pairs the LLM judged to say the same")
    judge_update: int | None = count("pairs the LLM judged an update")
    judge_related: int | None = count("pairs the LLM judged related (linked by step 6b)")
    judge_distinct: int | None = count("pairs the LLM judged distinct")
    judge_updates_refused: int | None = count("updates the LLM found that the guards refused")
    judge_same_refused: int | None = count("'same' verdicts whose merge the guards refused")
    judge_no_verdict: int | None = count("pairs the LLM gave no verdict for")
    pairs_left_over: int | None = count("duplicate pairs found but left to the next cycle by the caps")
    archive_allowance: int | None = count("at most this many nodes could be archived this cycle")
    pass_: str | None = count("how the pairs were searched (full, incremental, unchanged)", key="pass")
    pairs_compared: int | None = count("similar pairs found")
    nodes_compared: int | None = count("nodes compared")
    focus_nodes: int | None = count("changed nodes the search started from")
    skipped_concurrent: int | None = count("planned pairs an agent changed meanwhile (left alone)")
    chains_repaired: int | None = count("archived nodes whose keeper was archived, re-pointed to the chain's end")
    supersessions_undone: int | None = count(
        "older memories put back: their successor was edited, moved or archived and no longer says the newer value")
    speakers_apart: int | None = count("similar pairs of two speakers' turns (never merged, superseded or judged)")
    too_long_to_compare: int | None = count("similar pairs too long to compare clause by clause (left as they are)")
    llm_fallbacks: list | None = count("a few merges the LLM did not write, with why")


SPEC = StepSpec(
    name="consolidate_duplicates",
    number="2",
    description=("supersede memories a newer one updates, merge near-duplicate pairs (cosine > "
                 "threshold) within a namespace, memory type and embedding model; with the LLM on, "
                 "it judges the similar pairs below the threshold and merges the texts where the "
                 "fact guard accepts."),
    counts=ConsolidateCounts,
    config=ConsolidateConfig,
    summary=(SummaryColumn("merged", ("pairs_merged",)), SummaryColumn("superseded", ("superseded",))),
    count_order=("pairs_merged", "superseded", "carried_into", "nodes_archived", "keepers_rewritten", "repointed",
                 "omitted_sentences", "updates_partial", "updates_held", "judged",
                 "judge_same", "judge_update", "judge_related", "judge_distinct",
                 "judge_updates_refused", "judge_same_refused", "judge_no_verdict", "pairs_left_over",
                 "archive_allowance", "pass", "pairs_compared", "nodes_compared",
                 "focus_nodes", "skipped_concurrent", "supersessions_undone", "speakers_apart",
                 "too_long_to_compare"),
    health=(HealthCount("merged", ("pairs_merged",)), HealthCount("superseded", ("superseded",)),
            HealthCount("judged", ("judged",)), HealthCount("duplicate_pairs_left", ("pairs_left_over",))),
    uses_llm=True,
    changes_namespace=("pairs_merged", "nodes_archived", "keepers_rewritten", "repointed", "superseded",
                       "carried_into", "supersessions_undone"),
    changes_view=MERGES,
    run=consolidate_duplicates,
)
# Its incremental pass keeps its state in namespace_activity's consolidate_* columns.
PASS_COLUMNS = "consolidate"

"""Step 3, `summarize_verbose`: condense verbose nodes; the full text is kept in revisions.

With the LLM path on, a summary the fact guard accepted replaces the text; without it the text
is cut at a word boundary (planning: core/steps/summarize.py, LLM pass: service/llm_rewrite.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from curation_pipeline.clients.llm import LLMClient
from curation_pipeline.config.op_config import SummarizeConfig
from curation_pipeline.core.coverage import Semantic
from curation_pipeline.core.step_spec import SUMMARIES, HealthCount, LLMCounts, StepSpec, SummaryColumn, count
from curation_pipeline.core.steps.summarize import plan_summaries
from curation_pipeline.service.llm_rewrite import rewrite_summaries
from curation_pipeline.service.step_run import StepRun, run_phases
from curation_pipeline.service.steps import consolidate
from curation_pipeline.store import actions, candidates


def summarize_verbose(run: StepRun, config, *, llm: LLMClient | None, semantic: Semantic | None = None) -> dict:
    def load(conn):
        loaded = candidates.verbose_candidates(conn, run.scope, config.min_chars,
                                              recall_below=config.recall_below, limit=config.cap)
        plan = plan_summaries(loaded, min_chars=config.min_chars, recall_below=config.recall_below,
                              cap=config.cap, summary_chars=config.summary_chars)
        return loaded, plan, {}

    def rewrite(planned):
        loaded, plan, _ = planned
        plan, llm_counts = rewrite_summaries(llm, plan, loaded, max_chars=llm.settings.summary_chars,
                                             semantic=semantic)
        return loaded, plan, llm_counts

    def apply(conn, planned):
        loaded, plan, llm_counts = planned
        return {"candidates": loaded.height, **actions.apply_summaries(conn, run.scope, plan, loaded),
                **llm_counts}

    return run_phases(run, load, apply, prepare=rewrite if llm is not None else None)


@dataclass(frozen=True, kw_only=True)
class SummarizeCounts(LLMCounts):
    summarized: int | None = count("verbose nodes condensed")
    candidates: int | None = count("verbose, little-recalled nodes considered")
    skipped_concurrent: int | None = count("planned nodes an agent changed meanwhile (left alone)")
    llm_left_unchanged: int | None = count("planned nodes the LLM path left as they were")
    llm_not_summarized: list | None = count("a few of those, with why")


SPEC = StepSpec(
    name="summarize_verbose",
    number="3",
    description=("condense verbose nodes (an LLM summary the fact guard accepted; without the LLM "
                 "path: cut at a word boundary). The full text is kept in revisions."),
    counts=SummarizeCounts,
    config=SummarizeConfig,
    after=(consolidate.SPEC.name,),
    summary=(SummaryColumn("summarized", ("summarized",)),),
    count_order=("summarized", "candidates", "skipped_concurrent"),
    health=(HealthCount("summarized", ("summarized",)),),
    uses_llm=True,
    changes_namespace=("summarized",),
    changes_view=SUMMARIES,
    run=summarize_verbose,
)

"""The LLM pass between planning and applying steps 2 and 3.

The planners stay pure and offline; these functions take their plans, ask the LLM for a better
text per planned row, judge each answer with the fact guard and return the plan to apply plus
the step's LLM counts. They run before the step's writes, so no row is locked while the service
works, and an outage can only make a row fall back, never half-apply anything.

Up to `CURATOR_LLM_CONCURRENCY` requests are in flight at once (a thread pool: the SDK call is
blocking, and the answer cache opens its own short connections). Each thread only asks and
judges; the tally and the plan are put together afterwards in the step's thread, in plan order,
so the result does not depend on which answer came first.

- Judge (step 2): a verdict ("same", "update", "related", "distinct") for each similar pair in
  the band below the merge threshold; core/steps/pair_decisions.apply_verdicts turns them into
  merges and supersessions. It shares the client's budget, cache, breaker and concurrency.
- Merge (step 2): an accepted answer replaces the offline merged text (method `llm`); a rejected
  or missing one keeps the offline merge, which says every fact (method `offline`, with the
  guard's or the service's reason). Pairs whose keeper text would not change (a pinned keeper,
  a pure duplicate) are not sent: there is nothing to merge. The request carries both dates.
- Summary (step 3): an accepted answer replaces the text (method `llm`). A rejected answer, or
  no answer at all (outage, breaker, budget), leaves the node as it is: the offline summary is a
  truncation that drops facts from the active memory, which the LLM path exists to prevent. The
  reason is recorded in the cycle row (`llm_not_summarized`). Without the LLM path the offline
  truncation applies, as in the reference.

Each row's outcome travels to the revision reason as the JSON column `llm_reason`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import polars as pl

from curation_pipeline.clients.llm import CACHED, TOO_LONG, Completion, LLMClient, StepTally
from curation_pipeline.core.coverage import Semantic
from curation_pipeline.core.fact_guard import Verdict, judge, parse_verdict
from curation_pipeline.core.prompts import (
    JUDGE_VERDICTS,
    Prompt,
    judge_prompt,
    merge_prompt,
    summary_prompt,
)
from curation_pipeline.core.text import clip

_NOTES_KEPT = 30  # the step caps are 20 and 30, so every note of a default cycle fits
_CLAUSES_KEPT = 20  # clauses listed per revision (covered or said by other words, left out)
# A reason kept in a revision and the cycle row is at most this long: the guard may quote an
# answer's words, and the service's errors quote what it sent.
_REASON_CHARS = 500


def _texts(loaded: pl.DataFrame) -> dict[str, str]:
    return dict(zip(loaded["id"].to_list(), loaded["pointer_summary"].fill_null("").to_list()))


@dataclass
class _Asked:
    completion: Completion
    verdict: Verdict | None  # None: no answer
    reason: dict


def _ask(client: LLMClient, prompt: Prompt, *, inputs: list[str], semantic: Semantic | None) -> _Asked:
    """One request, judged by the fact guard (in a worker thread: touches nothing shared but
    the client and the embedder's memo of vectors)."""
    field, max_chars = prompt.field, prompt.max_chars
    completion = client.complete(prompt)
    reason = {"model": completion.model or client.model,
              "llm_input_tokens": completion.input_tokens,
              "llm_output_tokens": completion.output_tokens}
    if completion.outcome == CACHED:
        reason["llm_cached"] = True
    if completion.outcome == TOO_LONG:  # an answer, judged at a glance: far beyond the limit
        verdict = Verdict(False, completion.error or "the answer is too long")
        reason.update(guard=verdict.label, guard_reason=verdict.reason)
        return _Asked(completion, verdict, reason)
    if completion.text is None:
        reason.update(llm_outcome=completion.outcome, llm_error=clip(completion.error or "", _REASON_CHARS) or None)
        return _Asked(completion, None, reason)
    verdict = judge(completion.text, field=field, inputs=inputs, max_chars=max_chars, semantic=semantic)
    reason.update(guard=verdict.label, guard_reason=clip(verdict.reason, _REASON_CHARS))
    if verdict.accepted and verdict.covered:
        reason["covered"] = list(verdict.covered)[:_CLAUSES_KEPT]
    if verdict.accepted and verdict.said_as:
        reason["said_as"] = list(verdict.said_as)[:_CLAUSES_KEPT]
    if verdict.accepted and verdict.left_out:
        reason["left_out"] = list(verdict.left_out)[:_CLAUSES_KEPT]
    return _Asked(completion, verdict, reason)


def _count(tally: StepTally, asked: _Asked) -> None:
    tally.add(asked.completion)
    if asked.verdict is None:
        tally.unavailable += 1
    elif asked.verdict.accepted:
        tally.accepted += 1
    else:
        tally.rejected += 1


Job = TypeVar("Job")


def _in_parallel(client: LLMClient, ask: Callable[[Job], _Asked], jobs: Sequence[Job]) -> list[_Asked]:
    """`ask` over `jobs`, up to the client's concurrency at once; results in the jobs' order."""
    workers = min(client.concurrency, len(jobs))
    if workers <= 1:
        return [ask(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
        return list(pool.map(ask, jobs))


def judge_pairs(client: LLMClient, pairs: pl.DataFrame, tally: StepTally) -> tuple[dict, dict]:
    """Step 2's judge: a verdict for each pair in the band (pair_decisions.JUDGE_SCHEMA), as
    {(older_id, newer_id): verdict}, and the judge's counts. A pair without a valid answer
    (outage, budget, an answer outside the schema) gets no verdict: nothing happens to it."""
    rows = list(pairs.iter_rows(named=True))

    def ask(row: dict) -> Completion:
        return client.complete(judge_prompt(
            row["older_text"] or "", row["newer_text"] or "", older_written=row["older_created_at"],
            newer_written=row["newer_created_at"], max_output_tokens=client.settings.max_output_tokens))

    verdicts: dict[tuple[str, str], str] = {}
    counts = {"judged": 0, **{f"judge_{v}": 0 for v in JUDGE_VERDICTS}, "judge_no_verdict": 0}
    for row, completion in zip(rows, _in_parallel(client, ask, rows)):
        tally.add(completion)
        verdict = parse_verdict(completion.text)
        if verdict is None:
            counts["judge_no_verdict"] += 1
            continue
        verdicts[row["older_id"], row["newer_id"]] = verdict
        counts["judged"] += 1
        counts[f"judge_{verdict}"] += 1
    return verdicts, counts


def rewrite_merges(client: LLMClient | None, plan: pl.DataFrame, loaded: pl.DataFrame,
                   *, max_chars: int, semantic: Semantic | None = None,
                   tally: StepTally | None = None) -> tuple[pl.DataFrame, dict]:
    """Step 2's plan with LLM merged texts where the guard accepted them. `tally`: the step's,
    when the judge already used the client this step."""
    if client is None:
        return plan, {}
    tally = tally or StepTally()
    texts = _texts(loaded)
    written = dict(zip(loaded["id"].to_list(), loaded["created_at"].to_list()))
    planned = list(plan.iter_rows(named=True))
    # Pairs whose keeper text would not change (pinned keeper, pure duplicate) are not sent.
    to_send = [row for row in planned if row["keeper_text_changed"]]

    def ask(row: dict) -> _Asked:
        keeper, absorbed = texts[row["keeper_id"]], texts[row["absorbed_id"]]
        prompt = merge_prompt(keeper, absorbed, max_chars=max_chars,
                              max_output_tokens=client.settings.max_output_tokens,
                              keeper_written=written.get(row["keeper_id"]),
                              absorbed_written=written.get(row["absorbed_id"]))
        return _ask(client, prompt, inputs=[keeper, absorbed], semantic=semantic)

    answers = iter(_in_parallel(client, ask, to_send))  # in the order of `to_send`
    rows = []
    for row in planned:
        if not row["keeper_text_changed"]:
            rows.append({**row, "llm_reason": None})
            continue
        asked = next(answers)
        _count(tally, asked)
        verdict, reason, keeper = asked.verdict, asked.reason, texts[row["keeper_id"]]
        if verdict is not None and verdict.accepted:
            # Sentence counts describe the offline merge; the guard vouches for the LLM's.
            row = {**row, "merged_text": verdict.text, "keeper_text_changed": verdict.text != keeper,
                   "added_sentences": None, "omitted_sentences": 0}
            reason["method"] = "llm"
        else:
            reason["method"] = "offline"
            tally.notes.append({"keeper_id": row["keeper_id"], "absorbed_id": row["absorbed_id"],
                                **_why_not(reason)})
        rows.append({**row, "llm_reason": json.dumps(reason)})
    schema = {**plan.schema, "llm_reason": pl.String}
    return pl.DataFrame(rows, schema=schema), {**tally.counts(client), **_notes("llm_fallbacks", tally)}


def rewrite_summaries(client: LLMClient | None, plan: pl.DataFrame, loaded: pl.DataFrame,
                      *, max_chars: int, semantic: Semantic | None = None) -> tuple[pl.DataFrame, dict]:
    """Step 3's plan: with the LLM path on, only the rows with an accepted LLM summary."""
    if client is None:
        return plan, {}
    tally = StepTally()
    texts = _texts(loaded)
    planned = list(plan.iter_rows(named=True))

    def ask(row: dict) -> _Asked:
        original = texts[row["id"]]
        prompt = summary_prompt(original, max_chars=max_chars,
                                max_output_tokens=client.settings.max_output_tokens)
        return _ask(client, prompt, inputs=[original], semantic=semantic)

    rows = []
    for row, asked in zip(planned, _in_parallel(client, ask, planned)):
        _count(tally, asked)
        verdict, reason = asked.verdict, asked.reason
        if verdict is not None and verdict.accepted:
            rows.append({**row, "summary": verdict.text, "llm_reason": json.dumps({**reason, "method": "llm"})})
        else:
            tally.notes.append({"id": row["id"], **_why_not(reason)})
    schema = {**plan.schema, "llm_reason": pl.String}
    counts = {**tally.counts(client), "llm_left_unchanged": len(plan) - len(rows),
              **_notes("llm_not_summarized", tally)}
    return pl.DataFrame(rows, schema=schema), counts


def _why_not(reason: dict) -> dict:
    if "guard_reason" in reason:
        return {"guard": "rejected", "reason": reason["guard_reason"]}
    return {"llm_outcome": reason.get("llm_outcome"), "reason": reason.get("llm_error")}


def _notes(key: str, tally: StepTally) -> dict:
    return {key: tally.notes[:_NOTES_KEPT]} if tally.notes else {}

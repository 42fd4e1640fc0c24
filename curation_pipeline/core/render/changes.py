"""A run's changes and its cycle as tables: table rows for the Dagster UI (which shows them inline
in the run's event log), plain text for the CLI preview.

Input is what `store.revisions` returns (embeddings reduced to present/absent) and the cycle of
core/cycles.py. Which table shows a step's changes is the step's own choice (`StepSpec.changes_view`);
the functions take the specs and name no step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from curation_pipeline.core import step_spec as views
from curation_pipeline.core.cycles import Cycle
from curation_pipeline.core.render.tables import headline
from curation_pipeline.core.step_spec import StepSpec
from curation_pipeline.core.steps.associate import ASSOCIATION_LABEL
from curation_pipeline.core.text import clip

# Columns a curation step can change, in the order a reader wants them.
CHANGE_COLUMNS = ("pointer_summary", "confidence", "archived_at", "merged_into", "superseded_by",
                  "valid_until", "embedding", "embedding_model")
MAX_ROWS = 50


def changed_columns(revision: Mapping) -> dict[str, tuple]:
    before, after = revision["before"], revision["after"]
    return {c: (before.get(c), after.get(c)) for c in CHANGE_COLUMNS if before.get(c) != after.get(c)}


def _cell(value, limit: int = 200) -> str:
    """A value on one line, clipped (the CLI preview, a vertex's columns)."""
    text = "∅" if value is None else str(value)
    return clip(text, limit).replace("\n", " ")


def _whole(value) -> str:
    """A table cell holding the whole value (a text uncut)."""
    return "∅" if value is None else str(value)


def history_command(node_id: str) -> str:
    """The CLI command that shows a node's changes whole, for when the event log cuts a long row."""
    return f"curation-pipeline history {node_id}"


def _showing(specs: Sequence[StepSpec], view: str) -> set[str]:
    """The names of the steps whose changes are shown as `view`."""
    return {spec.name for spec in specs if spec.changes_view == view}


# A keeper whose text a merge left as it was: it said every clause of the absorbed text already.
UNCHANGED = "(unchanged: the keeper already said every clause)"
# A keeper the run did not rewrite, recorded before its merges said its text (store/actions.py,
# keeper_text): no revision of this run to read its text from.
NOT_REWRITTEN = "(not rewritten by this run: its history shows its text)"


def merge_texts(changes: Sequence[Mapping], specs: Sequence[StepSpec]) -> list[tuple[str, str, float, str, str, str]]:
    """(keeper, absorbed, similarity, keeper's old text, absorbed text, merged text) per merged
    pair, every text whole (the row's before holds the old texts)."""
    merging = _showing(specs, views.MERGES)
    before = {c["node_id"]: c["before"].get("pointer_summary") for c in changes if c["step"] in merging}
    # A keeper the merge left as it was: its text as the absorbed node's revision says it.
    kept = {(c["reason"] or {}).get("keeper_id"): (c["reason"] or {}).get("keeper_text")
            for c in changes if c["step"] in merging and (c["reason"] or {}).get("keeper_text")}
    return [(keeper, absorbed, sim, before.get(keeper) or kept.get(keeper) or NOT_REWRITTEN,
             before.get(absorbed) or "", text)
            for keeper, absorbed, sim, text in merge_rows(changes, specs)]


def merge_rows(changes: Sequence[Mapping], specs: Sequence[StepSpec]) -> list[tuple[str, str, float, str]]:
    """(keeper, absorbed, similarity, merged text or UNCHANGED) per merged pair. The text is
    the merge's own: a preview's changes also hold the later steps' (a summary of the keeper)."""
    merging = _showing(specs, views.MERGES)
    texts = {
        c["node_id"]: c["after"]["pointer_summary"]
        for c in changes if c["step"] in merging and "pointer_summary" in changed_columns(c)
    }
    pairs = {}
    for change in changes:
        reason = change["reason"] or {}
        if "keeper_id" in reason and change["node_id"] == reason.get("absorbed_id"):
            keeper = reason["keeper_id"]
            pairs[(keeper, change["node_id"])] = (reason.get("similarity"), texts.get(keeper, UNCHANGED))
    return [(keeper, absorbed, sim, text) for (keeper, absorbed), (sim, text) in pairs.items()]


def supersession_rows(changes: Sequence[Mapping], specs: Sequence[StepSpec]) -> list[tuple[str, str, float, str, str]]:
    """(superseded node, its successor, similarity, what changed, its text) per supersession."""
    merging = _showing(specs, views.MERGES)
    rows = []
    for change in changes:
        reason = change["reason"] or {}
        if change["step"] in merging and "superseded_by" in reason:
            changed = "; ".join(", ".join(u.get("changed", [])) for u in reason.get("changes") or []) or reason.get("method", "")
            rows.append((change["node_id"], reason["superseded_by"], reason.get("similarity") or 0.0, changed,
                         change["before"].get("pointer_summary") or ""))
    return rows


def _similarity(edge: Mapping) -> str:
    similarity = (edge.get("properties") or {}).get("similarity")
    return f"{similarity:.4f}" if isinstance(similarity, (int, float)) else "–"


# The vertex columns a sync can change, in the order a reader wants them.
VERTEX_COLUMNS = ("archived", "pinned", "heat", "summary")


def vertex_change(vertex: Mapping) -> str:
    """A vertex the graph sync created ("created: ...") or changed (old → new per column)."""
    before, after = vertex["before"], vertex["after"]
    if before is None:
        return "created: " + ", ".join(f"{col} {_cell(after.get(col), 60)}" for col in VERTEX_COLUMNS)
    return "; ".join(f"{col}: {_cell(before.get(col), 60)} → {_cell(after.get(col))}"
                     for col in VERTEX_COLUMNS if before.get(col) != after.get(col))


@dataclass(frozen=True)
class ChangeTable:
    """What a step changed, as a table the run page shows inline: its columns (name, Dagster
    column type, meaning) and one row per change, every text whole. The UI shows the first
    MAX_ROWS rows (`shown`); `history_command` shows any node's changes in full."""

    columns: tuple[tuple[str, str, str], ...]
    rows: tuple[dict, ...]

    @property
    def shown(self) -> tuple[dict, ...]:
        return self.rows[:MAX_ROWS]

    @property
    def not_shown(self) -> int:
        return max(0, len(self.rows) - MAX_ROWS)


_HISTORY = ("whole history", "string", "the command that shows every change to the node, whole")
_NODE = ("node", "string", "the memory node's id")
_SIMILARITY = ("similarity", "string", "cosine similarity of the pair's embeddings")


def step_tables(spec: StepSpec, changes: Sequence[Mapping], signals: Sequence[Mapping] = (),
                edges: Sequence[Mapping] = (), vertices: Sequence[Mapping] = ()) -> dict[str, ChangeTable]:
    """What one step changed (or, in a preview, would change), as tables by metadata key:
    `changes`, and for the step that merges also `supersessions`."""
    view = spec.changes_view
    if view == views.MERGES:
        return {"changes": _merge_table(changes, spec), "supersessions": _supersession_table(changes, spec)}
    if view == views.GRAPH:
        rows = [{"node": v["node_id"], "graph change": vertex_change(v)} for v in vertices]
        rows += [{"node": e["source"], "graph change": f"edge {e['label']} → {e['target']}"} for e in edges]
        columns = (_NODE, ("graph change", "string", "the vertex created or changed, or the edge written"))
    elif view == views.ASSOCIATIONS:
        rows = [{"node": e["source"], "shares a concept with": e["target"], "similarity": _similarity(e)}
                for e in edges]
        columns = (_NODE, ("shares a concept with", "string", "the node it is now linked to"), _SIMILARITY)
    elif view == views.SIGNALS:
        rows = [{"node": s["memory_id"], "text": _whole(s["content_snapshot"])} for s in signals]
        columns = (_NODE, ("text", "string", "the node's text, signalled reclassify_pending for the agent"))
    else:
        rows = [{"node": c["node_id"], "column": column, "before": _whole(old), "after": _whole(new),
                 "whole history": history_command(c["node_id"])}
                for c in changes for column, (old, new) in changed_columns(c).items()]
        columns = (_NODE, ("column", "string", "the column the step changed"),
                   ("before", "string", "its value before the run, whole"),
                   ("after", "string", "its value after the run, whole"), _HISTORY)
    return {"changes": ChangeTable(columns, tuple(rows))}


def _merge_table(changes: Sequence[Mapping], spec: StepSpec) -> ChangeTable:
    columns = (("keeper", "string", "the node that stays and now says both"),
               ("absorbed", "string", "the node merged into the keeper (archived, restorable)"),
               _SIMILARITY,
               ("keeper's text before", "string", "the keeper's text before the merge, whole"),
               ("absorbed text", "string", "the absorbed node's text, whole"),
               ("merged text", "string", "the keeper's text after the merge, whole"), _HISTORY)
    rows = [{"keeper": keeper, "absorbed": absorbed, "similarity": f"{sim or 0.0:.4f}",
             "keeper's text before": kept, "absorbed text": gone, "merged text": text,
             "whole history": history_command(keeper)}
            for keeper, absorbed, sim, kept, gone, text in merge_texts(changes, [spec])]
    return ChangeTable(columns, tuple(rows))


def _supersession_table(changes: Sequence[Mapping], spec: StepSpec) -> ChangeTable:
    columns = (("superseded", "string", "the older node, no longer current (its valid_until is set)"),
               ("current", "string", "the newer node that gives the current value"),
               _SIMILARITY,
               ("what changed", "string", "the values the newer node changed"),
               ("superseded text", "string", "the older node's text, whole"),
               ("current text", "string", "the newer node's text, if this run changed it too"),
               _HISTORY)
    newer = {c["node_id"]: c["before"].get("pointer_summary") for c in changes}
    rows = [{"superseded": old, "current": successor, "similarity": f"{sim:.4f}",
             "what changed": what or "–", "superseded text": text,
             "current text": newer.get(successor) or "(not changed by this run)",
             "whole history": history_command(old)}
            for old, successor, sim, what, text in supersession_rows(changes, [spec])]
    return ChangeTable(columns, tuple(rows))


PREVIEW_NOTE = "preview, nothing written"


def preview_text(key: str, preview: Mapping, specs: Sequence[StepSpec]) -> str:
    """The CLI's rendering of a namespace's preview (`specs`: the registry's steps)."""
    changes, signals = preview.get("changes", []), preview.get("signals", [])
    summarizing, marking, embedding = (_showing(specs, view) for view in (views.SUMMARIES, views.STALE, views.EMBEDDINGS))
    lines = [f"== {key}: what a real run would do"]
    for keeper, absorbed, sim, text in merge_rows(changes, specs):
        lines.append(f"  merge {absorbed} into {keeper} (similarity {sim:.4f})")
        lines.append(f"    -> {_cell(text, 160)}")
    for old, successor, sim, what, _ in supersession_rows(changes, specs):
        lines.append(f"  supersede {old} by {successor} (similarity {sim:.4f}): {what}")
    for change in changes:
        if change["step"] in summarizing:
            old, new = changed_columns(change)["pointer_summary"]
            lines.append(f"  summarize {change['node_id']} ({len(old)} -> {len(new)} chars): {_cell(new, 120)}")
        elif change["step"] in marking:
            lines.append(f"  mark stale {change['node_id']}")
    embedded = sum(1 for c in changes if c["step"] in embedding)
    if embedded:
        lines.append(f"  embed {embedded} node(s)")
    for signal in signals:
        lines.append(f"  signal {signal['signal_type']} for {signal['memory_id']}")
    for edge in preview.get("edges", []):
        if edge["label"] == ASSOCIATION_LABEL:
            lines.append(f"  link {edge['source']} and {edge['target']} (similarity {_similarity(edge)})")
    if len(lines) == 1:
        lines.append("  nothing to do")
    return "\n".join(lines)


# A step's counts in the order a reader wants them: what it did first, then what it looked at
# (`StepSpec.count_order`). Counts not listed follow, the LLM's in LLM_COUNT_ORDER, then the rest
# alphabetically.
LLM_COUNT_ORDER = ("llm_model", "llm_requests", "llm_accepted", "llm_rejected", "llm_unavailable",
                   "llm_cache_hits", "llm_input_tokens", "llm_output_tokens", "llm_waited_secs",
                   "llm_breaker_open")


def ordered_counts(spec: StepSpec, counts: Mapping) -> list[tuple[str, object]]:
    """The step's reported counts as (name, value) in a stable order (see `StepSpec.count_order`)."""
    listed = [key for key in dict.fromkeys((*spec.count_order, *LLM_COUNT_ORDER)) if key in counts]
    rest = sorted(key for key in counts if key not in listed)
    return [(key, counts[key]) for key in (*listed, *rest)]


# The cycle table's columns: (name, Dagster column type, description).
CYCLE_COLUMNS = (
    ("step", "string", "the step, numbered as in the job"),
    ("status", "string", "succeeded, failed or not run"),
    ("run", "string", "the run that ran the step (a re-execution takes the steps its parent finished)"),
    ("result", "string", "the step's main count"),
    ("counts", "string", "every count of the step"),
)


def cycle_rows(cycle: Cycle, this_run_id: str, specs: Sequence[StepSpec]) -> list[dict]:
    """One row per step of the cycle (see CYCLE_COLUMNS), in the registry's order."""
    rows = []
    for spec in specs:
        result = cycle.steps[spec.name]
        run = result.run_id or "–"
        if cycle.reexecuted and result.run_id == this_run_id:
            run += " (this run)"
        details = ", ".join(f"{key}={value}" for key, value in ordered_counts(spec, result.counts.as_dict()))
        rows.append({
            "step": spec.label,
            "status": result.status,
            "run": run,
            "result": headline(spec, result.counts) if result.status == "succeeded" else (result.error or "–"),
            "counts": details or "–",
        })
    return rows


def cycle_outcome(cycle: Cycle) -> str:
    """The cycle's overall outcome in one line, naming the runs it took."""
    if not cycle.reexecuted:
        return cycle.status
    failed = ", ".join(cycle.errors()) or "none"
    return (f"{cycle.status} over {len(cycle.run_ids)} runs (first {cycle.run_ids[0]}, last "
            f"{cycle.run_ids[-1]}); failed steps: {failed}")

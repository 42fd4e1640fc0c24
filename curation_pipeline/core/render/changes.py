"""A run's changes and its cycle as tables: markdown and table rows for the Dagster UI, plain text
for the CLI preview.

Input is what `store.revisions` returns (embeddings reduced to present/absent) and the cycle of
core/cycles.py. Which table shows a step's changes is the step's own choice (`StepSpec.changes_view`);
the functions take the specs and name no step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
    text = "∅" if value is None else str(value)
    return clip(text, limit).replace("|", "\\|").replace("\n", " ")


def full_cell(value) -> str:
    """A markdown table cell holding the whole text: `|` escaped, line breaks as <br>."""
    text = "∅" if value is None else str(value)
    return text.replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")


def history_command(node_id: str) -> str:
    """The CLI command that shows a node's changes whole, for when the event log cuts a long row."""
    return f"`curation-pipeline history {node_id}`"


def _showing(specs: Sequence[StepSpec], view: str) -> set[str]:
    """The names of the steps whose changes are shown as `view`."""
    return {spec.name for spec in specs if spec.changes_view == view}


def merge_texts(changes: Sequence[Mapping], specs: Sequence[StepSpec]) -> list[tuple[str, str, float, str, str, str]]:
    """(keeper, absorbed, similarity, keeper's old text, absorbed text, merged text) per merged
    pair, every text whole (the row's before holds the old texts)."""
    merging = _showing(specs, views.MERGES)
    before = {c["node_id"]: c["before"].get("pointer_summary") for c in changes if c["step"] in merging}
    return [(keeper, absorbed, sim, before.get(keeper) or "", before.get(absorbed) or "", text)
            for keeper, absorbed, sim, text in merge_rows(changes, specs)]


def merge_rows(changes: Sequence[Mapping], specs: Sequence[StepSpec]) -> list[tuple[str, str, float, str]]:
    """(keeper, absorbed, similarity, merged text or '(unchanged)') per merged pair. The text is
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
            pairs[(keeper, change["node_id"])] = (reason.get("similarity"), texts.get(keeper, "(unchanged)"))
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


def _column_changes(change: Mapping) -> str:
    """Each changed column, old → new; a text change shows both texts whole."""
    parts = []
    for col, (old, new) in changed_columns(change).items():
        if col == "pointer_summary":
            parts.append(full_cell(f"pointer_summary: was: {old}\nnow: {new}"))
        else:
            parts.append(f"{col}: {_cell(old, 60)} → {_cell(new)}")
    return "; ".join(parts)


PREVIEW_NOTE = "preview, nothing written"


def step_markdown(spec: StepSpec, changes: Sequence[Mapping], signals: Sequence[Mapping] = (),
                  edges: Sequence[Mapping] = (), vertices: Sequence[Mapping] = (), *,
                  preview: bool = False) -> str:
    """What one step changed (or, in a preview, would change), as a markdown table."""
    table = _step_table(spec, changes, signals, edges, vertices)
    return f"**{PREVIEW_NOTE.capitalize()}:** what a real run would change.\n\n{table}" if preview else table


def _step_table(spec: StepSpec, changes: Sequence[Mapping], signals: Sequence[Mapping],
                edges: Sequence[Mapping], vertices: Sequence[Mapping]) -> str:
    view = spec.changes_view
    if view == views.GRAPH:
        rows = [(v["node_id"], vertex_change(v)) for v in vertices]
        rows += [(e["source"], f"edge {e['label']} → {e['target']}") for e in edges]
        header = ("node", "graph change")
    elif view == views.ASSOCIATIONS:
        rows = [(e["source"], e["target"], _similarity(e)) for e in edges]
        header = ("node", "shares a concept with", "similarity")
    elif view == views.SIGNALS:
        rows = [(s["memory_id"], _cell(s["content_snapshot"], 120)) for s in signals]
        header = ("node", "signal reclassify_pending for")
    elif view == views.MERGES:
        rows = [("merged into", keeper, absorbed, f"{sim:.4f}",
                 full_cell(f"keeper was: {kept}\nabsorbed: {gone}\nmerged: {text}"), history_command(keeper))
                for keeper, absorbed, sim, kept, gone, text in merge_texts(changes, [spec])]
        newer = {c["node_id"]: c["before"].get("pointer_summary") for c in changes}
        rows += [("superseded by", successor, old, f"{sim:.4f}",
                  full_cell(f"old: {text}\nnewer: {newer.get(successor) or '(not changed by this run)'}"
                            + (f"\nchanged: {what}" if what else "")), history_command(old))
                 for old, successor, sim, what, text in supersession_rows(changes, [spec])]
        header = ("change", "kept / current", "absorbed / superseded", "similarity", "text", "whole history")
    else:
        rows = [(c["node_id"], _column_changes(c), history_command(c["node_id"])) for c in changes]
        header = ("node", "change", "whole history")
    if not rows:
        return "_no changes_"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        lines.append(f"\n_{len(rows) - MAX_ROWS} more not shown_")
    return "\n".join(lines)


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

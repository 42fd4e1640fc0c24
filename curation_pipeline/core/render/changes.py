"""A run's changes as tables: markdown for the Dagster UI, plain text for the CLI preview.

Input is what `store.revisions.run_changes` returns (embeddings reduced to present/absent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# Columns a curation step can change, in the order a reader wants them.
CHANGE_COLUMNS = ("pointer_summary", "confidence", "archived_at", "merged_into", "embedding",
                  "embedding_model")
MAX_ROWS = 50


def changed_columns(revision: Mapping) -> dict[str, tuple]:
    before, after = revision["before"], revision["after"]
    return {c: (before.get(c), after.get(c)) for c in CHANGE_COLUMNS if before.get(c) != after.get(c)}


def _cell(value, limit: int = 200) -> str:
    text = "∅" if value is None else str(value)
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("|", "\\|").replace("\n", " ")


def merge_rows(changes: Sequence[Mapping]) -> list[tuple[str, str, float, str]]:
    """(keeper, absorbed, similarity, merged text or '(unchanged)') per merged pair."""
    texts = {
        c["node_id"]: c["after"]["pointer_summary"]
        for c in changes if "pointer_summary" in changed_columns(c)
    }
    pairs = {}
    for change in changes:
        reason = change["reason"] or {}
        if "keeper_id" in reason and change["node_id"] == reason.get("absorbed_id"):
            keeper = reason["keeper_id"]
            pairs[(keeper, change["node_id"])] = (reason.get("similarity"), texts.get(keeper, "(unchanged)"))
    return [(keeper, absorbed, sim, text) for (keeper, absorbed), (sim, text) in pairs.items()]


def _similarity(edge: Mapping) -> str:
    similarity = (edge.get("properties") or {}).get("similarity")
    return f"{similarity:.4f}" if isinstance(similarity, (int, float)) else "–"


def step_markdown(step: str, changes: Sequence[Mapping], signals: Sequence[Mapping] = (),
                  edges: Sequence[Mapping] = ()) -> str:
    """What one step changed (or would change), as a markdown table."""
    if step == "associate_concepts":
        rows = [(e["source"], e["target"], _similarity(e)) for e in edges]
        header = ("node", "shares a concept with", "similarity")
    elif step == "reclassify_stale":
        rows = [(s["memory_id"], _cell(s["content_snapshot"], 120)) for s in signals]
        header = ("node", "signal reclassify_pending for")
    elif step == "consolidate_duplicates":
        rows = [(keeper, absorbed, f"{sim:.4f}", _cell(text)) for keeper, absorbed, sim, text in merge_rows(changes)]
        header = ("keeper", "absorbed", "similarity", "merged text")
    else:
        rows = [
            (c["node_id"], "; ".join(f"{col}: {_cell(old, 60)} → {_cell(new)}"
                                    for col, (old, new) in changed_columns(c).items()))
            for c in changes
        ]
        header = ("node", "change")
    if not rows:
        return "_no changes_"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        lines.append(f"\n_{len(rows) - MAX_ROWS} more not shown_")
    return "\n".join(lines)


def preview_text(key: str, preview: Mapping) -> str:
    """The CLI's rendering of a namespace's preview."""
    changes, signals = preview.get("changes", []), preview.get("signals", [])
    lines = [f"== {key}: what a real run would do"]
    for keeper, absorbed, sim, text in merge_rows(changes):
        lines.append(f"  merge {absorbed} into {keeper} (similarity {sim:.4f})")
        lines.append(f"    -> {_cell(text, 160)}")
    for change in changes:
        if change["step"] == "summarize_verbose":
            old, new = changed_columns(change)["pointer_summary"]
            lines.append(f"  summarize {change['node_id']} ({len(old)} -> {len(new)} chars): {_cell(new, 120)}")
        elif change["step"] == "mark_stale_confidence":
            lines.append(f"  mark stale {change['node_id']}")
    embedded = sum(1 for c in changes if c["step"] == "revectorize")
    if embedded:
        lines.append(f"  embed {embedded} node(s)")
    for signal in signals:
        lines.append(f"  signal {signal['signal_type']} for {signal['memory_id']}")
    for edge in preview.get("edges", []):
        if edge["label"] == "shares_concept_with":
            lines.append(f"  link {edge['source']} and {edge['target']} (similarity {_similarity(edge)})")
    if len(lines) == 1:
        lines.append("  nothing to do")
    return "\n".join(lines)


# The steps of a cycle in the order an operator reads them (step 7 closes it and is not listed).
CYCLE_STEPS = (
    "reclassify_stale",
    "consolidate_duplicates",
    "summarize_verbose",
    "revectorize",
    "mark_stale_confidence",
    "sync_graph",
    "associate_concepts",
)


def cycle_markdown(metadata: Mapping) -> str:
    """The cycle's per-step counts as a markdown table for the Dagster UI."""
    lines = ["| step | status | counts |", "|---|---|---|"]
    for step in CYCLE_STEPS:
        entry = dict(metadata.get("steps", {}).get(step) or {"status": "not run"})
        status = entry.pop("status")
        details = ", ".join(f"{key}={value}" for key, value in entry.items())
        lines.append(f"| {step} | {status} | {details} |")
    return "\n".join(lines)

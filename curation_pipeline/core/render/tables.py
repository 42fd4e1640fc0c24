"""Plain-text tables for the CLI: counts per namespace and step, from cycle rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# (column title, step, count keys, summed): the one number per step an operator looks at first.
SUMMARY_COLUMNS: tuple[tuple[str, str, str | tuple[str, ...]], ...] = (
    ("signals", "reclassify_stale", "signals_created"),
    ("merged", "consolidate_duplicates", "pairs_merged"),
    ("summarized", "summarize_verbose", "summarized"),
    ("embedded", "revectorize", ("embedded", "reembedded")),  # new vectors and a model switch's
    ("stale", "mark_stale_confidence", "marked_stale"),
    ("graph", "sync_graph", "nodes_considered"),
    ("linked", "associate_concepts", "edges_added"),
)


def cycle_table(cycles: Sequence[tuple[str, str, Mapping | None]]) -> str:
    """One line per (partition key, run status, cycle metadata); failed steps show as FAILED."""
    header = ["namespace", "run", "cycle", *(title for title, _, _ in SUMMARY_COLUMNS)]
    lines = [header]
    for key, run_status, metadata in cycles:
        steps = (metadata or {}).get("steps", {})
        cells = [key, run_status, (metadata or {}).get("status", "-")]
        for _, step, count in SUMMARY_COLUMNS:
            entry = steps.get(step)
            if entry is None or "skipped" in entry:  # not run, or off (6b with a lexical embedder)
                cells.append("-")
            elif entry.get("status") == "failed":
                cells.append("FAILED")
            else:
                keys = (count,) if isinstance(count, str) else count
                cells.append(str(sum(int(entry.get(key) or 0) for key in keys)))
        lines.append(cells)
    return _table(lines[0], lines[1:])


def failures(cycles: Sequence[tuple[str, str, Mapping | None]]) -> list[str]:
    """One line per failed step, with its error."""
    lines = []
    for key, _, metadata in cycles:
        for step, error in ((metadata or {}).get("errors") or {}).items():
            lines.append(f"{key} {step}: {error}")
    return lines


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [list(header), *[[str(cell) for cell in row] for row in rows]]
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    rendered = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in lines]
    rendered.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(rendered)


def undo_table(reports: Sequence) -> str:
    """One line per namespace an undo touched."""
    return _table(
        ["namespace", "restored", "already", "conflicts", "signals", "vertices", "edges"],
        [
            (f"{r.tenant_id}/{r.namespace}", len(r.nodes_restored), r.nodes_already_undone,
             len(r.conflicts), r.signals_withdrawn + r.signals_restored, r.vertices_restored,
             r.edges_retracted + r.edges_restored)
            for r in reports
        ],
    )

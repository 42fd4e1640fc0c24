"""Plain-text tables for the CLI: counts per namespace and step, the health of recorded cycles,
recent runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from curation_pipeline.core.health import HEALTH_FIELDS
from curation_pipeline.core.partition_keys import display_key, partition_key

# (column title, step, count keys, summed): the one number per step an operator looks at first.
SUMMARY_COLUMNS: tuple[tuple[str, str, str | tuple[str, ...]], ...] = (
    ("signals", "reclassify_stale", "signals_created"),
    ("merged", "consolidate_duplicates", "pairs_merged"),
    ("superseded", "consolidate_duplicates", "superseded"),
    ("summarized", "summarize_verbose", "summarized"),
    ("embedded", "revectorize", ("embedded", "reembedded")),  # new vectors and a model switch's
    ("stale", "mark_stale_confidence", "marked_stale"),
    ("graph", "sync_graph", "nodes_considered"),
    ("linked", "associate_concepts", "edges_added"),
)


def _main_count(counts: Mapping, count: str | tuple[str, ...]) -> int:
    keys = (count,) if isinstance(count, str) else count
    return sum(int(counts.get(key) or 0) for key in keys)


def headline(step: str, counts: Mapping) -> str:
    """The step's one number an operator looks at first (SUMMARY_COLUMNS), e.g. "merged: 2"."""
    if counts.get("skipped"):
        return f"off: {counts['skipped']}"
    for title, column_step, count in SUMMARY_COLUMNS:
        if column_step == step:
            return f"{title}: {_main_count(counts, count)}"
    return "–"


def cycle_table(cycles: Sequence[tuple[str, str, str, Mapping | None]]) -> str:
    """One line per (partition key, run id, run status, cycle metadata); failed steps show as
    FAILED. The run id is last: it is what `undo --run` takes."""
    header = ["namespace", "run", "cycle", *(title for title, _, _ in SUMMARY_COLUMNS), "run id"]
    lines = [header]
    for key, run_id, run_status, metadata in cycles:
        steps = (metadata or {}).get("steps", {})
        cells = [key, run_status, (metadata or {}).get("status", "-")]
        for _, step, count in SUMMARY_COLUMNS:
            entry = steps.get(step)
            if entry is None or "skipped" in entry:  # not run, or off (6b with a lexical embedder)
                cells.append("-")
            elif entry.get("status") == "failed":
                cells.append("FAILED")
            else:
                cells.append(str(_main_count(entry, count)))
        lines.append([*cells, run_id])
    return _table(lines[0], lines[1:])


def failures(cycles: Sequence[tuple[str, str, str, Mapping | None]]) -> list[str]:
    """One line per failed step, with its error."""
    lines = []
    for key, _, _, metadata in cycles:
        for step, error in ((metadata or {}).get("errors") or {}).items():
            lines.append(f"{key} {step}: {error}")
    return lines


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def health_table(cycles: Sequence[Mapping]) -> str:
    """One line per recorded cycle (store.health.recorded_cycles): its health numbers in the
    order of HEALTH_FIELDS, and the checks that failed."""
    header = ["namespace", "finished", *(f.title for f in HEALTH_FIELDS), "failed checks", "run id"]
    rows = []
    for cycle in cycles:
        health = cycle["health"] or {}
        failed = [check["name"] for check in cycle["checks"] if not check.get("passed")]
        rows.append([
            partition_key(cycle["tenant_id"], cycle["namespace"]),
            _when(cycle.get("finished_at")),
            *(_number(health.get(f.key)) for f in HEALTH_FIELDS),
            ", ".join(failed) or "none",
            cycle["run_id"],
        ])
    return _table(header, rows)


def _when(value) -> str:
    """A timestamp to the second, as the store gave it (ISO text or a datetime)."""
    if value is None:
        return "-"
    text = value.isoformat(sep=" ") if hasattr(value, "isoformat") else str(value).replace("T", " ")
    return text[:19]


UNDO_COUNTS = (("restored", "nodes_restored"), ("conflicts", "conflicts"),
               ("signals", "signals_withdrawn"), ("edges", "edges_retracted"))


def run_counts(action: str, metadata: Mapping) -> str:
    """A run's key counts in one cell: a cycle's main count per step, an undo's restored rows."""
    if action == "curation_undo":
        cells = []
        for title, key in UNDO_COUNTS:
            value = metadata.get(key) or 0
            cells.append(f"{title}={len(value) if isinstance(value, list) else value}")
        return " ".join(cells)
    steps = metadata.get("steps") or {}
    cells = []
    for title, step, count in SUMMARY_COLUMNS:
        entry = steps.get(step)
        if entry is None or "skipped" in entry:
            continue
        if entry.get("status") == "failed":
            cells.append(f"{title}=FAILED")
            continue
        cells.append(f"{title}={_main_count(entry, count)}")
    return " ".join(cells) or "-"


def runs_table(runs: Sequence[Mapping]) -> str:
    """One line per run and namespace: id, partition, kind, status, start, duration, counts and
    whether it was a preview. Each run is a mapping with those keys (cli/main.py builds them)."""
    header = ["run id", "partition", "kind", "status", "started", "secs", "preview", "counts"]
    rows = [
        [run["run_id"], run["partition"], run["kind"], run["status"], _when(run["started_at"]),
         _number(run["duration_s"]), "yes" if run["preview"] else "no", run["counts"]]
        for run in runs
    ]
    return _table(header, rows)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [list(header), *[[str(cell) for cell in row] for row in rows]]
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    rendered = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in lines]
    rendered.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(rendered)


def undo_table(reports: Sequence) -> str:
    """One line per namespace an undo touched (`forced`: rows restored over a change since;
    `held`: rows left alone because restoring them would strand a merged node's text)."""
    return _table(
        ["namespace", "status", "restored", "forced", "already", "conflicts", "held", "signals", "vertices", "edges"],
        [
            (display_key(r.tenant_id, r.namespace), r.status, len(r.nodes_restored), len(r.forced), r.nodes_already_undone,
             len(r.conflicts), len(r.held), r.signals_withdrawn + r.signals_restored, r.vertices_restored,
             r.edges_retracted + r.edges_restored)
            for r in reports
        ],
    )

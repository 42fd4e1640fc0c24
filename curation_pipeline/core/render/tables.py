"""Plain-text tables for the CLI: counts per namespace and step, the health of recorded cycles,
recent runs."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

from curation_pipeline.core.health import health_fields
from curation_pipeline.core.partition_keys import display_key, partition_key
from curation_pipeline.core.step_spec import StepCounts, StepSpec, SummaryColumn


def summary_columns(specs: Sequence[StepSpec]) -> list[tuple[StepSpec, SummaryColumn]]:
    """The one number per step an operator looks at first (`StepSpec.summary`), in step order."""
    return [(spec, column) for spec in specs for column in spec.summary]


def headline(spec: StepSpec, counts: StepCounts) -> str:
    """The step's first summary number, e.g. "merged: 2" (or why it was off)."""
    if "skipped" in counts.names() and counts.value("skipped"):
        return f"off: {counts.value('skipped')}"
    if not spec.summary:
        return "–"
    column = spec.summary[0]
    return f"{column.title}: {counts.total(*column.counts)}"


def _entry_cell(entry: Mapping | None) -> str | None:
    """None for a step not run or off (6b with a lexical embedder), "FAILED", or "" (its counts)."""
    if entry is None or "skipped" in entry:
        return None
    return "FAILED" if entry.get("status") == "failed" else ""


def _counts(spec: StepSpec, entry: Mapping) -> StepCounts:
    return spec.read({key: value for key, value in entry.items() if key not in ("status", "error")})


def cycle_table(cycles: Sequence[tuple[str, str, str, Mapping | None]], specs: Sequence[StepSpec]) -> str:
    """One line per (partition key, run id, run status, cycle metadata); failed steps show as
    FAILED. The run id is last: it is what `undo --run` takes."""
    columns = summary_columns(specs)
    header = ["namespace", "run", "cycle", *(column.title for _, column in columns), "run id"]
    lines = [header]
    for key, run_id, run_status, metadata in cycles:
        steps = (metadata or {}).get("steps", {})
        cells = [key, run_status, cycle_state(run_status, metadata)]
        for spec, column in columns:
            entry = steps.get(spec.name)
            state = _entry_cell(entry)
            if state is None:
                cells.append("-")
            elif state:
                cells.append(state)
            else:
                cells.append(str(_counts(spec, entry).total(*column.counts)))
        lines.append([*cells, run_id])
    return _table(lines[0], lines[1:])


ENDED_RUN = ("FAILURE", "CANCELED")


def cycle_state(run_status: str, metadata: Mapping | None) -> str:
    """The cycle's status, as its row says; a cycle whose run ended without closing it (its
    process killed) is `unfinished`, not `running`."""
    status = (metadata or {}).get("status", "-")
    return "unfinished" if status == "running" and run_status in ENDED_RUN else status


def run_end_line(key: str, run_id: str, run_status: str, metadata: Mapping | None, failure: str | None,
                 will_retry: bool) -> str | None:
    """What happened to a run that ended without success, beyond its steps' own errors (which
    `failures` lists): why Dagster ended it, what stands of its cycle, and what comes next."""
    if run_status not in ENDED_RUN:
        return None
    unfinished = cycle_state(run_status, metadata) == "unfinished"
    if not unfinished and (metadata or {}).get("errors"):
        return None  # a step failed and said why (`failures`)
    why = (failure or "no reason recorded").strip().rstrip(".")
    what = ("its cycle did not finish: the steps it finished stand (each wrote in its own "
            "transaction), the others did not run" if unfinished else "its cycle did not finish")
    nxt = ("the daemon retries it from the failed step as a new run (tagged curation/trigger=retry, "
           f"curation/retry_of={run_id}; `curation-pipeline runs` lists it)" if will_retry
           else f"run it again with `curation-pipeline run --partition {key}`")
    return f"{key}: run {run_id} ended {run_status}: {why}; {what}; {nxt}"


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


# The numbers that describe the namespace as a cycle (or an undo) left it; the others count what
# the cycle did. Shown as two groups, so "superseded" (memories a newer one supersedes, now) and
# "superseded" (marked so this cycle) never sit side by side unexplained.
STATE_KEYS = ("active_nodes", "archived_nodes", "pinned_nodes", "superseded_nodes", "stale_share",
              "embedding_backlog", "association_edges")
STATE_GROUP = "the namespace after each cycle or undo"
WORK_GROUP = "what each cycle did"
_TITLES = {"superseded_nodes": "superseded"}  # the group says which superseded it is
DEFAULT_WIDTH = 120  # when the output is no terminal (a pipe, a file, cron)


def _cell(field, value) -> str:
    if value is None:
        return "-"
    if field.unit == "share":  # in percent, as the UI shows it
        return f"{100 * float(value):.1f}"
    if field.unit == "seconds":
        return f"{float(value):.1f}"
    return _number(value)


def health_table(cycles: Sequence[Mapping], specs: Sequence[StepSpec], width: int = DEFAULT_WIDTH) -> str:
    """Each recorded cycle or undo (store.health.recorded_cycles) in two groups of columns: the
    namespace as it left it, then what the cycle did (an undo did no curation: `-` and 0s);
    shares in percent. Each group is cut into tables no wider than `width`, each repeating the
    namespace, kind and time, so no line wraps. The run id and the failed checks close the
    first group; a legend of the columns follows."""
    fields = health_fields(specs)
    state = [f for f in fields if f.key in STATE_KEYS]
    work = [f for f in fields if f.key not in STATE_KEYS]
    keys = [[partition_key(c["tenant_id"], c["namespace"]), c.get("kind", "cycle"), _when(c.get("finished_at")),
             short_run_id(c["run_id"])] for c in cycles]
    key_header = ["namespace", "kind", "finished", "run"]
    checks = [", ".join(check["name"] for check in c["checks"] if not check.get("passed"))
              or ("none" if c.get("kind", "cycle") == "cycle" else "-") for c in cycles]
    blocks = []
    for group, group_fields in ((STATE_GROUP, state), (WORK_GROUP, work)):
        columns = [(_TITLES.get(f.key, f.title), [_cell(f, (c["health"] or {}).get(f.key)) for c in cycles])
                   for f in group_fields]
        if group == STATE_GROUP:
            columns.append(("failed checks", checks))
        for n, chunk in enumerate(_fit(key_header, keys, columns, width)):
            header = key_header + [title for title, _ in chunk]
            rows = [key + [values[i] for _, values in chunk] for i, key in enumerate(keys)]
            blocks.append(f"{group}{' (continued)' if n else ''}:\n{_table(header, rows)}")
    return "\n\n".join([*blocks, _legend(fields, width)])


def short_run_id(run_id: str) -> str:
    """A run id as the Dagster UI shows it (its first 8 characters; an `undo-` id keeps its
    prefix too): `undo --run` takes it as long as no other run starts with it."""
    prefix = "undo-" if run_id.startswith("undo-") else ""
    return prefix + run_id[len(prefix):len(prefix) + 8]


def _fit(key_header, keys, columns, width):
    """`columns` cut into runs whose table, after the key columns, fits in `width`."""
    def column_width(title, values):
        return max(len(title), *(len(v) for v in values)) if values else len(title)

    key_width = sum(column_width(t, [k[i] for k in keys]) + 2 for i, t in enumerate(key_header))
    chunks, current, used = [], [], key_width
    for title, values in columns:
        needed = column_width(title, values) + 2
        if current and used + needed > width:
            chunks.append(current)
            current, used = [], key_width
        current.append((title, values))
        used += needed
    return [*chunks, current] if current else chunks


def _legend(fields, width: int) -> str:
    lines = textwrap.wrap("columns (run: the start of the run id, which `undo --run` takes; an undo "
                          "curates nothing, so it did 0):", width)
    for f in sorted(fields, key=lambda f: f.key not in STATE_KEYS):
        title = _TITLES.get(f.key, f.title)
        group = "after" if f.key in STATE_KEYS else "did"
        unit = ", in percent" if f.unit == "share" else ""
        lines += textwrap.wrap(f"{title:<10} ({group}) {f.meaning}{unit}", width, initial_indent="  ",
                               subsequent_indent=" " * 4)
    return "\n".join(lines)


def _when(value) -> str:
    """A timestamp to the second, as the store gave it (ISO text or a datetime)."""
    if value is None:
        return "-"
    text = value.isoformat(sep=" ") if hasattr(value, "isoformat") else str(value).replace("T", " ")
    return text[:19]


UNDO_COUNTS = (("restored", "nodes_restored"), ("conflicts", "conflicts"),
               ("signals", "signals_withdrawn"), ("edges", "edges_retracted"))


def run_counts(action: str, metadata: Mapping, specs: Sequence[StepSpec]) -> str:
    """A run's key counts in one cell: a cycle's main count per step, an undo's restored rows."""
    if action == "curation_undo":
        cells = []
        for title, key in UNDO_COUNTS:
            value = metadata.get(key) or 0
            cells.append(f"{title}={len(value) if isinstance(value, list) else value}")
        return " ".join(cells)
    steps = metadata.get("steps") or {}
    cells = []
    for spec, column in summary_columns(specs):
        entry = steps.get(spec.name)
        state = _entry_cell(entry)
        if state is None:
            continue
        cells.append(f"{column.title}={state or _counts(spec, entry).total(*column.counts)}")
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

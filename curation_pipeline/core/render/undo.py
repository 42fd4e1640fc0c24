"""One line per row an undo forced, left alone or held back: what the CLI prints and the Dagster
undo job logs. Reports are store.undo.UndoReport (read by attribute only)."""

from __future__ import annotations

from collections.abc import Sequence


def forced_lines(reports: Sequence) -> list[str]:
    """Every row restored over a change someone made since (`--force`)."""
    return [
        f"forced: {row['kind']} {row['id']} ({', '.join(row['changed_since'])} had changed since)"
        for report in reports for row in report.forced
    ]


def left_alone_lines(reports: Sequence) -> list[str]:
    """Every row left as it is: changed since (a conflict), or held back to keep merges whole."""
    lines = [
        f"left alone: {row['kind']} {row['id']} changed since ({', '.join(row['changed_since'])}){changed_by(row)};"
        " --force restores it anyway"
        for report in reports for row in report.conflicts
    ]
    lines += [f"left alone: {row['kind']} {row['id']}: {held_reason(row)}"
              for report in reports for row in report.held]
    lines += [f"left alone: {row['kind']} {row['id']}: moved to {row['moved_to']} since;"
              " an undo writes only in the namespace the run curated, even with --force"
              for report in reports for row in getattr(report, "moved", ())]
    return lines


def changed_by(row: dict) -> str:
    """Who changed a row since: the later runs (an undo of them comes first), or an agent.
    Only node conflicts know it (`changed_by`); other rows say nothing more."""
    if "changed_by" not in row:
        return ""
    runs = row["changed_by"]
    if not runs:
        return " by an agent (no curation run changed it since)"
    several = len(runs) > 1
    return (f" by run{'s' if several else ''} {', '.join(runs)}"
            f" (undo {'them' if several else 'it'} first to restore this row)")


def nothing_to_undo(run_id: str, undos: Sequence[str]) -> str:
    by = f" was already undone by {', '.join(undos)}" if undos else "'s changes are already as before it"
    return f"nothing to undo: run {run_id}{by}"


def status_line(reports: Sequence) -> str:
    """The undo's outcome in one line: `partial` says rows were left alone (listed above)."""
    left = sum(len(r.conflicts) + len(r.held) + len(getattr(r, "moved", ())) for r in reports)
    undo_id = reports[0].undo_id
    if left:
        return f"undo {undo_id} is partial: {left} row(s) left alone (listed above)"
    return f"undo {undo_id} succeeded: everything the run changed is restored"


def held_reason(row: dict) -> str:
    nodes = ", ".join(row["nodes"])
    several = len(row["nodes"]) > 1
    if row["reason"] == "merged_since":
        runs = [run for run in row["runs"] if run]
        by = f", by run{'s' if len(runs) > 1 else ''} {', '.join(runs)}" if runs else ""
        first = (f"; undo run{'s' if len(runs) > 1 else ''} {', '.join(runs)} first" if runs
                 else "; undo the change that merged them first")
        return (f"node{'s' if several else ''} {nodes} {'were' if several else 'was'} merged into it"
                f" since{by}{first}")
    if row["reason"] == "written_into_since":
        return (f"node{'s' if several else ''} {nodes} {'were' if several else 'was'} written into it, archived,"
                f" after the run started, and only what the run merged in says {'them' if several else 'it'};"
                " putting its old text back would leave that text in no active node")
    if row["reason"] == "merged_into_since":
        runs = [run for run in row["runs"] if run]
        by = f", by run {runs[0]}" if runs else ""
        first = f"; undo run {runs[0]} first" if runs else "; undo the change that merged it first"
        return (f"it was merged into {nodes} since{by}; putting its old text back would leave that text"
                f" in no active node{first}")
    if row["reason"] == "node_changed":
        return (f"its text changed after it was taken out of its keeper {nodes}; archiving it again"
                " would hide that text in a node no active node holds")
    if row["reason"] == "keeper_changed":
        return (f"its keeper {nodes} no longer has the text it was merged into; archiving it again"
                " would leave its text in no active node")
    if row["reason"] == "successor_moved":
        return (f"its successor {nodes} moved to {row.get('moved_to', 'another namespace')} since; superseding it by"
                " a memory of another namespace would cross namespaces")
    if row["reason"] == "keeper_moved":
        return (f"its keeper {nodes} moved to {row.get('moved_to', 'another namespace')} since; archiving it into a node"
                " of another namespace would cross namespaces")
    return (f"restoring it would leave an archived node pointing at an archived node ({nodes});"
            " no active node would hold its text")

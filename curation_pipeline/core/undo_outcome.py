"""What an undo did in a namespace, as one status (pure): read from its report, or from the
report kept in its `curation_undo` activity row (`runs` shows it).

- `partial`: it left a row alone (changed since, held back to keep a merge whole, or moved to
  another namespace); the CLI exits 1.
- `nothing`: it changed nothing and left nothing alone (the run was already undone): such an
  undo is not recorded at all.
- `success`: it restored everything the run changed.
"""

from __future__ import annotations

from collections.abc import Mapping

LEFT_ALONE = ("conflicts", "held", "moved")
DID_SOMETHING = ("nodes_restored", "signals_withdrawn", "signals_restored", "vertices_restored",
                 "edges_retracted", "edges_restored", "merges_vetoed", "vetoes_lifted")


def undo_status(report: Mapping) -> str:
    if any(report.get(field) for field in LEFT_ALONE):
        return "partial"
    if not any(report.get(field) for field in DID_SOMETHING):
        return "nothing"
    return "success"

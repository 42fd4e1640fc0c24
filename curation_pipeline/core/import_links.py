"""The rules of an import that span lines: ids, and where archived nodes are merged into. Pure.

Each line is first validated on its own (``core/jsonl_rows.py``). These rules need the other
lines, and the nodes already in the store:

* an id may appear once in the file, and must not exist in the store yet (errors);
* an archived node's ``merged_into`` names a node that exists, in the file or in the store
  (an error otherwise: the store's foreign key would refuse it);
* the curator's own rule, that following ``merged_into`` ends at an **active** node of the
  node's tenant and namespace, is a **warning**: a store agents write to holds links that break
  it (a keeper an agent moved to another namespace or archived, a cycle set by hand), and an
  export of that store must import as it is. The line is imported; the warning names it.
* a superseded node's ``superseded_by`` names a node that exists, in the file or in the store
  (an error: a foreign key again); one of another namespace is a warning, for the same reason.

``check_links`` reports every line that breaks a rule, naming the line, never only a node id.
Its errors are already the fixpoint that ``--skip-invalid`` needs: a line is accepted only if
its whole chain is made of accepted lines and stored nodes, so skipping the lines with an error
leaves no accepted line pointing at a skipped one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from curation_pipeline.core.jsonl_rows import LineError

__all__ = ["LinkCheck", "NodeLink", "check_links"]

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, slots=True)
class NodeLink:
    """What these rules need of one node. ``line`` is ``None`` for a node already in the store."""

    id: uuid.UUID | None
    tenant_id: str
    namespace: str
    archived: bool
    merged_into: uuid.UUID | None
    line: int | None = None
    superseded_by: uuid.UUID | None = None

    @classmethod
    def of_row(cls, line: int, row: Mapping[str, Any]) -> NodeLink:
        """The link of a normalised row (``core/jsonl_rows.py``) found on ``line``."""
        return cls(row["id"], row["tenant_id"], row["namespace"], row["archived_at"] is not None,
                   row["merged_into"], line, row.get("superseded_by"))

    @property
    def label(self) -> str:
        if self.id is None:
            return f"line {self.line}"
        where = "in the store" if self.line is None else f"line {self.line}"
        return f"{self.id} ({where})"


@dataclass(frozen=True)
class LinkCheck:
    """What ``check_links`` found, each list in line order: errors refuse their line, warnings
    (keeper chains that do not end at an active node of the namespace) do not."""

    errors: list[LineError]
    warnings: list[LineError]


def check_links(
    file_nodes: Iterable[NodeLink],
    stored: Mapping[uuid.UUID, NodeLink],
    *,
    invalid_lines: Mapping[uuid.UUID, int] | None = None,
) -> LinkCheck:
    """Every error and warning of these rules, in line order.

    ``file_nodes``: the links of the file's valid lines (a line with neither an id nor a
    ``merged_into`` may be left out). ``stored``: the store's nodes among the file's ids and the
    file's merge targets, with their own keeper chains. ``invalid_lines``: ids named on lines
    that failed validation, so that a node merged into one is told which line to fix.
    """
    errors: list[LineError] = []
    accepted: dict[uuid.UUID, NodeLink] = {}
    unimportable = dict(invalid_lines or {})
    chained: list[NodeLink] = []
    superseded: list[NodeLink] = []

    for node in sorted(file_nodes, key=lambda link: link.line or 0):
        if node.id is not None:
            if node.id in stored:
                errors.append(LineError(node.line, "id", f"{node.id} already exists in the store"))
                unimportable.setdefault(node.id, node.line)
                continue
            if node.id in accepted:
                errors.append(LineError(
                    node.line, "id", f"duplicate id {node.id} (first seen on line {accepted[node.id].line})"
                ))
                continue
            accepted[node.id] = node
        if node.merged_into is not None:
            chained.append(node)
        if node.superseded_by is not None:
            superseded.append(node)

    chains = _KeeperChains(accepted, stored, unimportable)
    warnings: list[LineError] = []
    for node in chained:
        problem = chains.problem_of(node)
        if problem is not None:
            kind, reason = problem
            (errors if kind == ERROR else warnings).append(LineError(node.line, "merged_into", reason))
    for node in superseded:
        problem = _successor_problem(node, accepted, stored, unimportable)
        if problem is not None:
            kind, reason = problem
            (errors if kind == ERROR else warnings).append(LineError(node.line, "superseded_by", reason))
    errors.sort(key=lambda error: error.line)
    warnings.sort(key=lambda warning: warning.line)
    return LinkCheck(errors, warnings)


Problem = tuple[str, str]  # (ERROR or WARNING, reason)


def _successor_problem(node: NodeLink, accepted: Mapping[uuid.UUID, NodeLink], stored: Mapping[uuid.UUID, NodeLink],
                       unimportable: Mapping[uuid.UUID, int]) -> Problem | None:
    """What ``node``'s ``superseded_by`` runs into: an error if it names no node of the file or
    the store (the foreign key would refuse it), a warning if it names one of another namespace
    (the curator never supersedes across namespaces, but an agent may have moved the successor)."""
    successor = accepted.get(node.superseded_by) or stored.get(node.superseded_by)
    if successor is None:
        if node.superseded_by in unimportable:
            return ERROR, f"{node.superseded_by} is only on line {unimportable[node.superseded_by]}, which cannot be imported"
        return ERROR, f"{node.superseded_by} does not exist (neither in this file nor in the store)"
    if (successor.tenant_id, successor.namespace) != (node.tenant_id, node.namespace):
        return WARNING, (f"{successor.label} belongs to another namespace "
                         f"(tenant {successor.tenant_id!r}, namespace {successor.namespace!r})")
    return None


class _KeeperChains:
    """Follows ``merged_into`` links, each node once (chains may be a million lines long, so no
    recursion), remembering for each node what a node merged into it runs into (``None``: its
    chain ends at an active node of its namespace): an error (its chain reaches a node that
    cannot be imported) or a warning (it ends elsewhere)."""

    def __init__(self, accepted: Mapping[uuid.UUID, NodeLink], stored: Mapping[uuid.UUID, NodeLink],
                 unimportable: Mapping[uuid.UUID, int]) -> None:
        self.accepted, self.stored, self.unimportable = accepted, stored, unimportable
        self.as_target: dict[object, Problem | None] = {}  # node key -> what merging into it meets
        self.own: dict[object, Problem] = {}  # node key -> the node's own error or warning

    @staticmethod
    def _key(node: NodeLink) -> object:
        return node.id if node.id is not None else ("line", node.line)

    def _find(self, node_id: uuid.UUID) -> NodeLink | None:
        return self.accepted.get(node_id) or self.stored.get(node_id)

    def problem_of(self, start: NodeLink) -> Problem | None:
        """Why ``start`` (an archived node with a ``merged_into``) is refused or warned about,
        or ``None``."""
        self._walk(start)
        return self.own.get(self._key(start))

    def _refuse(self, node: NodeLink, problem: Problem) -> None:
        kind, _ = problem
        self.own[self._key(node)] = problem
        if node.line is None:  # a stored node is in the store whatever its chain: a warning
            self.as_target[self._key(node)] = (
                WARNING, f"{node.label} is archived, and its keeper chain does not end at an active node")
        elif kind == ERROR:
            self.as_target[self._key(node)] = (ERROR, f"{node.label} cannot be imported (see its line)")
        else:
            self.as_target[self._key(node)] = (
                WARNING, f"{node.label}'s keeper chain does not end at an active node of its namespace")

    def _walk(self, start: NodeLink) -> None:
        path: list[NodeLink] = []  # nodes whose verdict waits for the next node's
        position: dict[object, int] = {}
        crossing: dict[object, str] = {}  # path nodes merged into another namespace
        node = start
        while self._key(node) not in self.as_target:
            key = self._key(node)
            if key in position:  # back at a node of this path: a cycle
                cycle = path[position[key]:]
                description = " -> ".join(member.label for member in [*cycle, cycle[0]])
                for member in cycle:
                    self.own[self._key(member)] = (WARNING, f"merge cycle: {description}")
                    self.as_target[self._key(member)] = (WARNING, f"{member.label} is in a merge cycle")
                del path[position[key]:]
                break
            if not node.archived:
                self.as_target[key] = None
                break
            if node.merged_into is None:
                self.as_target[key] = (WARNING, (
                    f"{node.label} is archived and merged into nothing, so the keeper chain "
                    "does not end at an active node"
                ))
                break
            target = self._find(node.merged_into)
            if target is None:
                self._refuse(node, (ERROR, self._missing(node.merged_into)))
                break
            if (target.tenant_id, target.namespace) != (node.tenant_id, node.namespace):
                # A warning, unless the target itself cannot be imported: walk on to know.
                crossing[key] = (f"{target.label} belongs to another namespace "
                                 f"(tenant {target.tenant_id!r}, namespace {target.namespace!r})")
            position[key] = len(path)
            path.append(node)
            node = target
        # Each node left on the path is merged into the next one, whose verdict is now known.
        for member in reversed(path):
            why_not = self.as_target[self._key(self._find(member.merged_into))]
            crossed = crossing.get(self._key(member))
            if crossed is not None and (why_not is None or why_not[0] == WARNING):
                self._refuse(member, (WARNING, crossed))
            elif why_not is None:
                self.as_target[self._key(member)] = None
            else:
                self._refuse(member, why_not)

    def _missing(self, target: uuid.UUID) -> str:
        if target in self.unimportable:
            return f"{target} is only on line {self.unimportable[target]}, which cannot be imported"
        return f"{target} does not exist (neither in this file nor in the store)"

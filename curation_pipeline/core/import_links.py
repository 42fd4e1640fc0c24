"""The rules of an import that span lines: ids, and where archived nodes are merged into. Pure.

Each line is first validated on its own (``core/jsonl_rows.py``). These rules need the other
lines, and the nodes already in the store:

* an id may appear once in the file, and must not exist in the store yet;
* an archived node's ``merged_into`` names a node of the same tenant and namespace, in the file
  or in the store, and following ``merged_into`` from there ends at an **active** node: every
  archived node's keeper chain ends at an active node of its namespace (a cycle never does);
* a superseded node's ``superseded_by`` names a node of the same tenant and namespace, in the
  file or in the store.

``check_links`` reports every line that breaks a rule, naming the line, never only a node id.
Its answer is already the fixpoint that ``--skip-invalid`` needs: a line is accepted only if
its whole chain is made of accepted lines and stored nodes, so skipping the reported lines
leaves no accepted line pointing at a skipped one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from curation_pipeline.core.jsonl_rows import LineError

__all__ = ["NodeLink", "check_links"]


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


def check_links(
    file_nodes: Iterable[NodeLink],
    stored: Mapping[uuid.UUID, NodeLink],
    *,
    invalid_lines: Mapping[uuid.UUID, int] | None = None,
) -> list[LineError]:
    """Every error of these rules, in line order.

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
    for node in chained:
        reason = chains.problem_of(node)
        if reason is not None:
            errors.append(LineError(node.line, "merged_into", reason))
    for node in superseded:
        reason = _successor_problem(node, accepted, stored, unimportable)
        if reason is not None:
            errors.append(LineError(node.line, "superseded_by", reason))
    errors.sort(key=lambda error: error.line)
    return errors


def _successor_problem(node: NodeLink, accepted: Mapping[uuid.UUID, NodeLink], stored: Mapping[uuid.UUID, NodeLink],
                       unimportable: Mapping[uuid.UUID, int]) -> str | None:
    """Why ``node``'s ``superseded_by`` cannot be: it names no node of the file or the store, or
    one of another namespace (a supersession never crosses namespaces)."""
    successor = accepted.get(node.superseded_by) or stored.get(node.superseded_by)
    if successor is None:
        if node.superseded_by in unimportable:
            return f"{node.superseded_by} is only on line {unimportable[node.superseded_by]}, which cannot be imported"
        return f"{node.superseded_by} does not exist (neither in this file nor in the store)"
    if (successor.tenant_id, successor.namespace) != (node.tenant_id, node.namespace):
        return (f"{successor.label} belongs to another namespace "
                f"(tenant {successor.tenant_id!r}, namespace {successor.namespace!r})")
    return None


class _KeeperChains:
    """Follows ``merged_into`` links, each node once (chains may be a million lines long, so no
    recursion), remembering for each node why a node merged into it cannot be (``None``: its
    chain ends at an active node)."""

    def __init__(self, accepted: Mapping[uuid.UUID, NodeLink], stored: Mapping[uuid.UUID, NodeLink],
                 unimportable: Mapping[uuid.UUID, int]) -> None:
        self.accepted, self.stored, self.unimportable = accepted, stored, unimportable
        self.as_target: dict[object, str | None] = {}  # node key -> why nothing can merge into it
        self.own: dict[object, str] = {}  # node key -> why the node itself is refused

    @staticmethod
    def _key(node: NodeLink) -> object:
        return node.id if node.id is not None else ("line", node.line)

    def _find(self, node_id: uuid.UUID) -> NodeLink | None:
        return self.accepted.get(node_id) or self.stored.get(node_id)

    def problem_of(self, start: NodeLink) -> str | None:
        """Why ``start`` (an archived node with a ``merged_into``) is refused, or ``None``."""
        self._walk(start)
        return self.own.get(self._key(start))

    def _refuse(self, node: NodeLink, reason: str) -> None:
        self.own[self._key(node)] = reason
        self.as_target[self._key(node)] = (
            f"{node.label} cannot be imported (see its line)" if node.line is not None
            else f"{node.label} is archived, and its keeper chain does not end at an active node"
        )

    def _walk(self, start: NodeLink) -> None:
        path: list[NodeLink] = []  # nodes whose verdict waits for the next node's
        position: dict[object, int] = {}
        node = start
        while self._key(node) not in self.as_target:
            key = self._key(node)
            if key in position:  # back at a node of this path: a cycle
                cycle = path[position[key]:]
                description = " -> ".join(member.label for member in [*cycle, cycle[0]])
                for member in cycle:
                    self.own[self._key(member)] = f"merge cycle: {description}"
                    self.as_target[self._key(member)] = f"{member.label} is in a merge cycle"
                del path[position[key]:]
                break
            if not node.archived:
                self.as_target[key] = None
                break
            if node.merged_into is None:
                self.as_target[key] = (
                    f"{node.label} is archived and merged into nothing, so the keeper chain "
                    "would not end at an active node"
                )
                break
            target = self._find(node.merged_into)
            if target is None:
                self._refuse(node, self._missing(node.merged_into))
                break
            if (target.tenant_id, target.namespace) != (node.tenant_id, node.namespace):
                self._refuse(node, (
                    f"{target.label} belongs to another namespace "
                    f"(tenant {target.tenant_id!r}, namespace {target.namespace!r})"
                ))
                break
            position[key] = len(path)
            path.append(node)
            node = target
        # Each node left on the path is merged into the next one, whose verdict is now known.
        for member in reversed(path):
            why_not = self.as_target[self._key(self._find(member.merged_into))]
            if why_not is None:
                self.as_target[self._key(member)] = None
            else:
                self._refuse(member, why_not)

    def _missing(self, target: uuid.UUID) -> str:
        if target in self.unimportable:
            return f"{target} is only on line {self.unimportable[target]}, which cannot be imported"
        return f"{target} does not exist (neither in this file nor in the store)"

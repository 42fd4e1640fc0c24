"""The rules between an import's lines: ids and merge targets (errors), keeper chains that do not
end at an active node of their namespace (warnings: the store holds such links, so an export of
it must import) (no database)."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from curation_pipeline.core.import_links import NodeLink, check_links
from curation_pipeline.core.jsonl_rows import LineError

A, B, C, D = (uuid.UUID(int=n) for n in (0xA, 0xB, 0xC, 0xD))


def active(node_id, line=None, namespace="n") -> NodeLink:
    return NodeLink(node_id, "acme", namespace, False, None, line)


def merged(node_id, into, line=None, namespace="n") -> NodeLink:
    return NodeLink(node_id, "acme", namespace, True, into, line)


def errors_of(*file_nodes: NodeLink, stored: tuple[NodeLink, ...] = (), invalid_lines=None) -> list[tuple[int, str, str]]:
    found = check_links(file_nodes, {node.id: node for node in stored}, invalid_lines=invalid_lines).errors
    return [(error.line, error.column, error.reason) for error in found]


def warnings_of(*file_nodes: NodeLink, stored: tuple[NodeLink, ...] = ()) -> list[tuple[int, str, str]]:
    checked = check_links(file_nodes, {node.id: node for node in stored})
    assert checked.errors == []  # a warning never refuses a line
    return [(warning.line, warning.column, warning.reason) for warning in checked.warnings]


def test_a_consistent_file_has_no_errors() -> None:
    assert errors_of(active(A, 1), merged(B, A, 2), merged(C, B, 3)) == []


def test_a_chain_may_end_at_a_stored_node() -> None:
    stored = (merged(C, D), active(D))
    assert errors_of(merged(A, C, 1), merged(B, D, 2), stored=stored) == []


def test_a_node_merged_into_itself_through_another_line_is_a_cycle_naming_both_lines() -> None:
    assert warnings_of(merged(A, B, 1), merged(B, A, 2)) == [
        (1, "merged_into", f"merge cycle: {A} (line 1) -> {B} (line 2) -> {A} (line 1)"),
        (2, "merged_into", f"merge cycle: {A} (line 1) -> {B} (line 2) -> {A} (line 1)"),
    ]


def test_a_line_merged_into_a_cycle_is_warned_about_with_the_cycle() -> None:
    assert warnings_of(merged(D, A, 1), merged(A, B, 2), merged(B, C, 3), merged(C, A, 4), active(uuid.uuid4(), 5)) == [
        (1, "merged_into", f"{A} (line 2) is in a merge cycle"),
        (2, "merged_into", f"merge cycle: {A} (line 2) -> {B} (line 3) -> {C} (line 4) -> {A} (line 2)"),
        (3, "merged_into", f"merge cycle: {A} (line 2) -> {B} (line 3) -> {C} (line 4) -> {A} (line 2)"),
        (4, "merged_into", f"merge cycle: {A} (line 2) -> {B} (line 3) -> {C} (line 4) -> {A} (line 2)"),
    ]


def test_a_missing_target_names_the_line_and_every_one_is_listed() -> None:
    assert errors_of(merged(A, C, 1), active(B, 2), merged(None, D, 3)) == [
        (1, "merged_into", f"{C} does not exist (neither in this file nor in the store)"),
        (3, "merged_into", f"{D} does not exist (neither in this file nor in the store)"),
    ]


def test_a_target_on_an_invalid_line_says_which_line() -> None:
    assert errors_of(merged(A, C, 1), invalid_lines={C: 7}) == [
        (1, "merged_into", f"{C} is only on line 7, which cannot be imported"),
    ]


def test_a_target_in_another_namespace_or_tenant_is_a_warning() -> None:
    # What an agent moving a keeper leaves in the store: an export of it must import.
    other_tenant = NodeLink(D, "globex", "n", False, None)
    assert warnings_of(active(A, 1, namespace="other"), merged(B, A, 2), merged(C, D, 3), stored=(other_tenant,)) == [
        (2, "merged_into", f"{A} (line 1) belongs to another namespace (tenant 'acme', namespace 'other')"),
        (3, "merged_into", f"{D} (in the store) belongs to another namespace (tenant 'globex', namespace 'n')"),
    ]


def test_a_chain_that_does_not_end_at_an_active_node_is_a_warning() -> None:
    archived_alone = NodeLink(A, "acme", "n", True, None, 1)  # archived, merged into nothing: fine itself
    assert warnings_of(archived_alone, merged(B, A, 2), merged(C, B, 3)) == [
        (2, "merged_into", f"{A} (line 1) is archived and merged into nothing, so the keeper chain does not end at an active node"),
        (3, "merged_into", f"{B} (line 2)'s keeper chain does not end at an active node of its namespace"),
    ]


def test_a_broken_chain_in_the_store_warns_about_what_joins_it() -> None:
    stored = (merged(C, D), NodeLink(D, "acme", "n", True, None))
    assert warnings_of(merged(A, C, 1), stored=stored) == [
        (1, "merged_into", f"{C} (in the store) is archived, and its keeper chain does not end at an active node"),
    ]


def test_an_id_already_in_the_store_is_an_error_of_its_line() -> None:
    assert errors_of(active(A, 1), active(B, 2), stored=(active(B),)) == [(2, "id", f"{B} already exists in the store")]


def test_a_line_merged_into_an_id_that_is_already_stored_joins_the_stored_node() -> None:
    # The file's line 1 is refused (the id exists); line 2's target is the stored node.
    assert errors_of(active(A, 1), merged(B, A, 2), stored=(active(A),)) == [
        (1, "id", f"{A} already exists in the store"),
    ]


def test_a_duplicate_id_points_to_the_first_line() -> None:
    assert errors_of(active(A, 1), active(B, 2), active(A, 3)) == [(3, "id", f"duplicate id {A} (first seen on line 1)")]


def test_a_chain_a_million_lines_long_needs_no_recursion() -> None:
    ids = [uuid.UUID(int=n + 1) for n in range(200_000)]
    nodes = [merged(ids[n], ids[n + 1], n + 1) for n in range(len(ids) - 1)] + [active(ids[-1], len(ids))]
    assert check_links(reversed(nodes), {}) == check_links([], {})
    broken = nodes[:-1]  # the active end is gone: every line is refused
    assert len(check_links(broken, {}).errors) == len(broken)
    archived_end = [*nodes[:-1], NodeLink(ids[-1], "acme", "n", True, None, len(ids))]
    assert len(check_links(archived_end, {}).warnings) == len(broken)


def test_errors_come_in_line_order() -> None:
    found = check_links([merged(B, D, 5), active(A, 9), active(A, 2)], {}).errors
    assert [error.line for error in found] == [5, 9]
    assert all(isinstance(error, LineError) for error in found)


# ---- the fixpoint: skipping the refused lines leaves a consistent file ----------------------

_POOL = [uuid.UUID(int=n + 1) for n in range(12)]


@st.composite
def files(draw):
    """Random lines over a small pool of ids (so there are duplicates, cycles, chains, misses),
    two namespaces, and a few stored nodes."""
    lines = []
    for line in range(1, draw(st.integers(0, 14)) + 1):
        node_id = draw(st.one_of(st.none(), st.sampled_from(_POOL)))
        namespace = draw(st.sampled_from(["n", "n", "n", "m"]))
        kind = draw(st.sampled_from(["active", "merged", "merged", "archived"]))
        target = draw(st.sampled_from(_POOL)) if kind == "merged" else None
        lines.append(NodeLink(node_id, "acme", namespace, kind != "active", target, line))
    stored = {}
    for node_id in draw(st.lists(st.sampled_from(_POOL), max_size=4, unique=True)):
        kind = draw(st.sampled_from(["active", "merged"]))
        target = draw(st.sampled_from(_POOL)) if kind == "merged" else None
        stored[node_id] = NodeLink(node_id, "acme", draw(st.sampled_from(["n", "m"])), kind != "active", target)
    return lines, stored


def _ends_at_an_active_node(node: NodeLink, nodes: dict) -> bool:
    seen = set()
    while node.merged_into is not None:
        if node.id in seen:
            return False
        seen.add(node.id)
        target = nodes.get(node.merged_into)
        if target is None or (target.tenant_id, target.namespace) != (node.tenant_id, node.namespace):
            return False
        node = target
    return not node.archived


@settings(max_examples=400, deadline=None)
@given(files())
def test_skipping_the_refused_lines_leaves_nothing_to_refuse(case) -> None:
    lines, stored = case
    refused = {error.line for error in check_links(lines, stored).errors}
    kept = [node for node in lines if node.line not in refused]
    checked = check_links(kept, stored)
    assert checked.errors == []
    # Every kept merge names a node that is there; exactly those whose chain does not end at an
    # active node of their namespace are warned about.
    nodes = {**stored, **{node.id: node for node in kept if node.id is not None}}
    assert all(node.merged_into in nodes for node in kept if node.merged_into is not None)
    assert {warning.line for warning in checked.warnings} == {
        node.line for node in kept if node.merged_into is not None and not _ends_at_an_active_node(node, nodes)}

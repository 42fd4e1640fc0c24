"""The promises "nothing is lost, nothing is half-done", as checks over the real store.

Each check returns a list of problems (empty: the promise holds), so a driver can report all of
them at once with its seed and last action. `AgentRecord` is what the agents wrote, kept by the
test itself (never read back from the store), which is what the sentence checks compare with.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import psycopg

from curation_pipeline.core.coverage import KeptText, clauses_of
from curation_pipeline.core.text import (
    normalise_sentence,
    sentence_keys,
    split_sentences,
    strip_merge_markers,
)

# Every table whose rows must never disappear, with its key.
KEYED_TABLES = {
    "memory_nodes": "id", "node_revisions": "id", "graph_revisions": "id", "signal_revisions": "id",
    "training_signals": "id", "graph_vertices": "node_id", "graph_edges": "id", "activity_log": "id",
    "merge_vetoes": "id", "memory_access": "node_id",
}
# Curator steps whose revisions keep the text they replaced readable (a summary's full text, a
# keeper's text before a merge): following them back from a text finds what it still stands for.
CONTENT_KEEPING_STEPS = ("consolidate_duplicates", "summarize_verbose")


@dataclass
class AgentRecord:
    """What the agents last wrote into each node, and every edit they made (before -> after)."""

    written: dict[str, str] = field(default_factory=dict)
    partition: dict[str, tuple[str, str]] = field(default_factory=dict)
    edits: list[tuple[str, str, str]] = field(default_factory=list)
    archived_into: dict[str, str] = field(default_factory=dict)  # nodes written archived (an import)
    archived_by_agent: set[str] = field(default_factory=set)  # nodes an agent archived (no keeper)

    def wrote(self, node_id: str, partition: tuple[str, str], text: str, before: str | None = None) -> None:
        if before is not None:
            self.edits.append((node_id, before, text))
        self.written[node_id] = text
        self.partition[node_id] = partition


# --------------------------------------------------------------------------- no row deleted


def row_keys(conn: psycopg.Connection) -> dict[str, set[str]]:
    return {
        table: {row[0] for row in conn.execute(f"SELECT {key}::text FROM {table}").fetchall()}
        for table, key in KEYED_TABLES.items()
    }


def deleted_rows(before: Mapping[str, set[str]], after: Mapping[str, set[str]]) -> list[str]:
    return [f"{table}: {len(before[table] - after[table])} row(s) deleted, e.g. {sorted(before[table] - after[table])[:3]}"
            for table in before if before[table] - after[table]]


# --------------------------------------------------------------------------- keeper chains


def _nodes(conn: psycopg.Connection) -> dict[str, dict]:
    rows = conn.execute(
        "SELECT id::text, tenant_id, namespace, archived_at IS NOT NULL, merged_into::text, pointer_summary"
        " FROM memory_nodes"
    ).fetchall()
    return {node_id: {"partition": (tenant, namespace), "archived": archived, "keeper": keeper, "text": text}
            for node_id, tenant, namespace, archived, keeper, text in rows}


def chain_end(nodes: Mapping[str, dict], node_id: str) -> str | None:
    """The active node an archived node's keeper chain ends at (None: it ends nowhere)."""
    seen = {node_id}
    current = node_id
    while nodes[current]["archived"]:
        keeper = nodes[current]["keeper"]
        if keeper is None or keeper in seen or keeper not in nodes:
            return None
        if nodes[keeper]["partition"] != nodes[node_id]["partition"]:
            return None
        seen.add(keeper)
        current = keeper
    return current


def broken_chains(conn: psycopg.Connection) -> list[str]:
    """Archived nodes whose keeper chain does not end at an active node of their namespace
    (archived nodes with no keeper at all, e.g. imported that way, are not merges)."""
    nodes = _nodes(conn)
    return [f"archived node {node_id} -> {node['keeper']}: its chain ends at no active node of its namespace"
            for node_id, node in sorted(nodes.items())
            if node["archived"] and node["keeper"] is not None and chain_end(nodes, node_id) is None]


def vectors_without_model(conn: psycopg.Connection) -> list[str]:
    """Nodes holding a vector but no model name. The soak's agents never write one (they insert
    without a vector and clear both columns when they edit), so any such row is the curator's
    doing: half of one value (core/undo_policy.TOGETHER)."""
    rows = conn.execute("SELECT id::text FROM memory_nodes WHERE embedding IS NOT NULL AND embedding_model IS NULL"
                        " ORDER BY id").fetchall()
    return [f"node {node_id} holds a vector without the name of its model" for (node_id,) in rows]


# --------------------------------------------------------------------------- every sentence kept


class _Lineage:
    """Where each text of a node came from: curator revisions and agent edits, before -> after."""

    def __init__(self, conn: psycopg.Connection, record: AgentRecord) -> None:
        self.content_keeping: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.any_change: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        rows = conn.execute(
            "SELECT node_id::text, step, before->>'pointer_summary', after->>'pointer_summary' FROM node_revisions"
            " WHERE before->>'pointer_summary' IS DISTINCT FROM after->>'pointer_summary'"
        ).fetchall()
        for node_id, step, before, after in rows:
            self.any_change[node_id][after].add(before)
            if step in CONTENT_KEEPING_STEPS:
                self.content_keeping[node_id][after].add(before)
        for node_id, before, after in record.edits:
            self.any_change[node_id][after].add(before)
            self.content_keeping[node_id][after].add(before)  # agents only replace their own sentences
        self.former_keepers: dict[str, set[str]] = defaultdict(set)
        for node_id, keeper in conn.execute(
            "SELECT node_id::text, after->>'merged_into' FROM node_revisions WHERE after->>'merged_into' IS NOT NULL"
        ).fetchall():
            self.former_keepers[node_id].add(keeper)
        self.omitted = {row[0] for row in conn.execute(
            "SELECT DISTINCT reason->>'absorbed_id' FROM node_revisions"
            " WHERE step = 'consolidate_duplicates' AND (reason->>'omitted_sentences')::int > 0"
        ).fetchall()}

    def texts(self, node_id: str, text: str, *, through_undos: bool) -> set[str]:
        """`text`, and every text it was made from by a step that keeps the old text readable
        (through_undos: by any recorded change)."""
        edges = (self.any_change if through_undos else self.content_keeping)[node_id]
        seen, frontier = {text}, [text]
        while frontier:
            for before in edges.get(frontier.pop(), ()):
                if before is not None and before not in seen:
                    seen.add(before)
                    frontier.append(before)
        return seen

    def held(self, node_id: str, text: str, *, through_undos: bool) -> set[str]:
        """The sentences `text` still stands for (see `texts`)."""
        return set().union(*(sentence_keys(t) for t in self.texts(node_id, text, through_undos=through_undos)))


def _said(missing: set[str], written: str, texts: set[str]) -> set[str]:
    """The missing sentences (normalised) of `written` that `texts` say in other words: every
    clause covered, with all its markers (core/coverage.py, by words)."""
    said = KeptText.of(sorted(texts))
    originals = {normalise_sentence(s): s for s in split_sentences(strip_merge_markers(written))}
    return {key for key in missing if key in originals
            and all(c.covered for c in said.cover_all(clauses_of([originals[key]])))}


def lost_sentences(conn: psycopg.Connection, record: AgentRecord) -> list[str]:
    """Every sentence an agent wrote must be in active memory: in the active node it wrote it to,
    or, if that node is archived, in (or said in other words by) the active node its chain ends
    at, or recorded as left out (a merge that omitted sentences, a summary's full text, a forced
    undo's previous text)."""
    nodes = _nodes(conn)
    lineage = _Lineage(conn, record)
    problems = []
    for node_id, written in sorted(record.written.items()):
        node = nodes[node_id]
        own = sentence_keys(written)
        if not node["archived"]:
            missing = own - lineage.held(node_id, node["text"], through_undos=True)
        else:
            end = chain_end(nodes, node_id)
            if end is None:
                continue  # reported by broken_chains
            in_node = sentence_keys(node["text"])
            missing = set()
            if node_id not in lineage.omitted:
                into_keeper = (own & in_node) - lineage.held(end, nodes[end]["text"], through_undos=False)
                # A former keeper (the merge that archived it repointed this node to its own
                # keeper) that was summarized first keeps its full text in its revisions: what the
                # summary cut is recorded there.
                for keeper in lineage.former_keepers[node_id] - {end}:
                    into_keeper -= (lineage.held(keeper, nodes[keeper]["text"], through_undos=False)
                                    - sentence_keys(nodes[keeper]["text"]))
                # A merge says each fact once: a sentence the keeper says in its own words is kept.
                missing |= into_keeper - _said(into_keeper, written, lineage.texts(end, nodes[end]["text"],
                                                                                    through_undos=False))
            missing |= (own - in_node) - lineage.held(node_id, node["text"], through_undos=True)
        problems += [f"node {node_id} ({'archived into ' + str(node['keeper']) if node['archived'] else 'active'}):"
                     f" sentence {sentence!r} is in no active node and recorded nowhere" for sentence in sorted(missing)]
    return problems


# --------------------------------------------------------------------------- partitions


_PARTITION_DIGEST = """
SELECT tenant_id, namespace, md5(string_agg(row_text, '|' ORDER BY row_text)) FROM (
    SELECT tenant_id, namespace, to_jsonb(m)::text AS row_text FROM memory_nodes m
    UNION ALL SELECT tenant_id, namespace, 'node_revision ' || id FROM node_revisions
    UNION ALL SELECT tenant_id, namespace, 'graph_revision ' || id FROM graph_revisions
    UNION ALL SELECT tenant_id, namespace, 'signal_revision ' || id FROM signal_revisions
    UNION ALL SELECT tenant_id, namespace, to_jsonb(s)::text FROM training_signals s
    UNION ALL SELECT tenant_id, namespace, to_jsonb(v)::text FROM graph_vertices v
    UNION ALL SELECT tenant_id, namespace, to_jsonb(e)::text FROM graph_edges e
    UNION ALL SELECT tenant_id, namespace, to_jsonb(v)::text FROM merge_vetoes v
    UNION ALL SELECT tenant_id, namespace, to_jsonb(a)::text FROM activity_log a
    UNION ALL SELECT tenant_id, namespace, to_jsonb(n)::text FROM namespace_activity n
) everything GROUP BY 1, 2
"""


def partition_digests(conn: psycopg.Connection) -> dict[tuple[str, str], str]:
    """One digest per (tenant, namespace) of every row that belongs to it."""
    return {(tenant, namespace): digest for tenant, namespace, digest in conn.execute(_PARTITION_DIGEST).fetchall()}


def changed_elsewhere(before: Mapping, after: Mapping, acted_on: Iterable[tuple[str, str]]) -> list[str]:
    allowed = set(acted_on)
    return [f"partition {key[0]}:{key[1]} changed, though the action was on {sorted(allowed)}"
            for key in sorted(set(before) | set(after)) if key not in allowed and before.get(key) != after.get(key)]


# --------------------------------------------------------------------------- after undoing everything


def not_as_agents_wrote(conn: psycopg.Connection, record: AgentRecord,
                        kept_for_imports: Iterable[str] = ()) -> list[str]:
    """After every run has been undone: each node is as its agent last wrote it: active with its
    text, or (written archived, by an import) archived into the keeper it was written with.

    `kept_for_imports`: keepers whose undo was held back because a node imported into them
    after a run started is said only by what that run merged in (no import is undone). Each
    still says every sentence its agent wrote, and more."""
    nodes = _nodes(conn)
    kept_for_imports = set(kept_for_imports)
    problems = []
    for node_id, written in sorted(record.written.items()):
        node = nodes[node_id]
        if node_id in record.archived_into:
            if not node["archived"] or node["keeper"] != record.archived_into[node_id]:
                problems.append(f"node {node_id} was imported archived into {record.archived_into[node_id]}, "
                                f"is now {'archived into ' + str(node['keeper']) if node['archived'] else 'active'}")
            continue
        if node["archived"] and node_id not in record.archived_by_agent:
            problems.append(f"node {node_id} is still archived (into {node['keeper']})")
        elif node_id in kept_for_imports:
            if missing := sentence_keys(written) - sentence_keys(node["text"]):
                problems.append(f"node {node_id}, held back for an import, lost {sorted(missing)}")
        elif node["text"] != written:
            problems.append(f"node {node_id} reads {node['text']!r}, its agent last wrote {written!r}")
    return problems

"""The knowledge graph mirrored into Apache AGE (openCypher), kept small.

graph_vertices / graph_edges / graph_revisions stay the system of record (history and undo read
them); AGE is a read-side mirror. Any step or undo that changed the graph tables calls
mirror_step() afterwards in the same transaction, so AGE commits or rolls back with them.

What AGE requires (apache/age src/backend/parser/cypher_analyze.c; AGE manual, "Prepared
statements"): the query is a dollar-quoted string constant in the SQL text, so Cypher text is
built only from constants and allow-listed labels, never from values; the third argument is a
Param node, so the params map goes as a bare %s (psycopg 3 sends $1 with the unknown type, and the
server types it agtype; a ::agtype cast or client-side binding is refused). $name in Cypher reads
that map. UNWIND takes any expression (age_unnest(), maps since AGE 1.3.0, #736), so UNWIND $rows
works. MERGE then SET on new entities needs AGE with #1721 (vertices) and #2019/#2067 (edges,
2024-08); a key repeated within one UNWIND batch still misbehaves (issue 1709, noted in
regress/sql/cypher_merge.sql), so rows are deduplicated first.
"""

from __future__ import annotations

import json

import psycopg

GRAPH_NAME = "curation_memory"
VERTEX_LABEL = "Memory"
BACKENDS = ("auto", "postgres", "age")
# Labels end up in the query text (Cypher labels cannot be parameters): only these, ever.
EDGE_LABELS = {"merged_into": "MERGED_INTO", "shares_concept_with": "SHARES_CONCEPT_WITH",
               "supersedes": "SUPERSEDES"}
_PG_LABELS = {age: pg for pg, age in EDGE_LABELS.items()}
VERTEX_KEYS = ("node_id", "tenant_id", "namespace", "heat", "pinned", "summary", "archived")
EDGE_KEYS = ("edge_id", "tenant_id", "namespace", "source_id", "target_id", "properties", "retracted")
_EDGE_COLUMNS = (*EDGE_KEYS[:5], "label", *EDGE_KEYS[5:])


class GraphBackendError(ValueError):
    pass


def age_available(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'age')").fetchone()[0]


def choose_backend(conn: psycopg.Connection, setting: str) -> str:
    """The graph backend for CURATION_GRAPH_BACKEND: 'postgres' or 'age'."""
    value = (setting or "").strip().lower()
    if value not in BACKENDS:
        raise GraphBackendError(
            f"CURATION_GRAPH_BACKEND={setting!r} is not valid; use one of: {', '.join(BACKENDS)}"
        )
    if value == "postgres":
        return "postgres"
    if age_available(conn):
        return "age"
    if value == "auto":
        return "postgres"
    major = conn.info.server_version // 10000
    raise GraphBackendError(
        "CURATION_GRAPH_BACKEND=age, but the Apache AGE extension is not installed in this"
        f" database. Install the AGE package built for this server's PostgreSQL major version"
        f" ({major}; AGE packages are built per major version), then run CREATE EXTENSION age;"
        " in the target database. Or set CURATION_GRAPH_BACKEND=auto or postgres."
    )


def prepare_session(conn: psycopg.Connection) -> None:
    """Make cypher() usable in the current transaction and ensure the graph exists.

    LOAD installs AGE's parser hook (calling an AGE function would load the library too late,
    after parsing). Transformed Cypher resolves agtype operators through search_path: ag_catalog
    is appended to the operator's path for this transaction only, so the store's own tables and
    pgvector resolve as before in the statements that follow. A non-superuser needs age in
    $libdir/plugins or session_preload_libraries for LOAD."""
    conn.execute("LOAD 'age'")
    conn.execute("SELECT set_config('search_path', current_setting('search_path') || ', ag_catalog', true)")
    if _graph_exists(conn):
        return
    # Two first runs at once would both create the graph; the lock orders them (first time only).
    conn.execute("SELECT pg_advisory_xact_lock(hashtext('ag_graph:' || %s))", (GRAPH_NAME,))
    if not _graph_exists(conn):
        conn.execute("SELECT ag_catalog.create_graph(%s)", (GRAPH_NAME,))
        conn.execute("SELECT ag_catalog.create_vlabel(%s, %s)", (GRAPH_NAME, VERTEX_LABEL))
        # MATCH/MERGE by {node_id: ...} is a containment test on the label's properties: without
        # this index every mirrored row would scan every vertex of every tenant.
        conn.execute(f'CREATE INDEX IF NOT EXISTS memory_properties ON {GRAPH_NAME}."{VERTEX_LABEL}" USING gin (properties)')


def _graph_exists(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT 1 FROM ag_catalog.ag_graph WHERE name = %s", (GRAPH_NAME,)).fetchone() is not None


def cypher_statement(cypher: str, columns: tuple[str, ...] = ("r",)) -> str:
    """The SQL calling ag_catalog.cypher(); its only placeholder is the agtype params map."""
    if "$$" in cypher or "%" in cypher:  # would end the dollar quote / clash with placeholders
        raise ValueError("Cypher text must not contain '$$' or '%'")
    cols = ", ".join(f"{name} ag_catalog.agtype" for name in columns)
    return f"SELECT * FROM ag_catalog.cypher('{GRAPH_NAME}', $$\n{cypher}\n$$, %s) AS ({cols})"


def _unique_rows(rows, key: str, keys: tuple[str, ...]) -> list[dict]:
    """Only the known keys of each row (nothing else reaches AGE), the last row per key."""
    return list({row[key]: {k: row[k] for k in keys} for row in rows}.values())


def upsert_vertices_cypher(rows) -> tuple[str, dict]:
    cypher = (
        f"UNWIND $rows AS r MERGE (v:{VERTEX_LABEL} {{node_id: r.node_id}})"
        " SET v.tenant_id = r.tenant_id, v.namespace = r.namespace, v.heat = r.heat,"
        " v.pinned = r.pinned, v.summary = r.summary, v.archived = r.archived"
        " RETURN v.node_id"
    )
    return cypher, {"rows": _unique_rows(rows, "node_id", VERTEX_KEYS)}


def edge_label(label: str) -> str:
    try:
        return EDGE_LABELS[label]
    except KeyError:
        raise ValueError(f"edge label {label!r} is not mirrored to AGE; allowed: {sorted(EDGE_LABELS)}") from None


def upsert_edges_cypher(rows) -> list[tuple[str, dict]]:
    """One statement per label. Endpoints must be in the row's tenant and namespace, so a bad row
    can never join two tenants' vertices; an edge whose endpoints are missing is not written."""
    by_label: dict[str, list] = {}
    for row in rows:
        by_label.setdefault(edge_label(row["label"]), []).append(row)
    statements = []
    for label, group in sorted(by_label.items()):
        cypher = (
            f"UNWIND $rows AS r"
            f" MATCH (a:{VERTEX_LABEL} {{node_id: r.source_id}}), (b:{VERTEX_LABEL} {{node_id: r.target_id}})"
            " WHERE a.tenant_id = b.tenant_id AND a.namespace = b.namespace"
            " AND a.tenant_id = r.tenant_id AND a.namespace = r.namespace"
            f" MERGE (a)-[e:{label} {{edge_id: r.edge_id}}]->(b)"
            " SET e.properties = r.properties, e.retracted = r.retracted"
            " RETURN e.edge_id"
        )
        statements.append((cypher, {"rows": _unique_rows(group, "edge_id", EDGE_KEYS)}))
    return statements


NEIGHBOURHOOD_COLUMNS = ("vertex", "label", "edge_id", "outgoing", "retracted", "properties", "other")


def neighbourhood_cypher(node_id: str) -> tuple[str, dict]:
    # Retracted edges are filtered in Python, not by a WHERE on the OPTIONAL MATCH: the vertex row
    # must come back even when every edge is retracted.
    cypher = (
        f"MATCH (v:{VERTEX_LABEL} {{node_id: $node_id}})"
        f" OPTIONAL MATCH (v)-[e]-(o:{VERTEX_LABEL})"
        " RETURN properties(v), type(e), e.edge_id, start_id(e) = id(v), e.retracted,"
        " e.properties, properties(o)"
    )
    return cypher, {"node_id": str(node_id)}


def step_rows(
    conn: psycopg.Connection, run_id: str, step: str, tenant_id: str, namespace: str
) -> tuple[list[dict], list[dict]]:
    """(vertex rows, edge rows) for what graph_revisions says this run and step touched, as they
    are now. Endpoints of touched edges come along, so an edge never waits for a vertex AGE lacks
    (a MATCH on a missing vertex would silently skip it)."""
    touched = conn.execute(
        "SELECT kind, vertex_id::text, edge_id FROM graph_revisions"
        " WHERE run_id = %s AND step = %s AND tenant_id = %s AND namespace = %s",
        (run_id, step, tenant_id, namespace),
    ).fetchall()
    edge_ids = sorted({edge_id for kind, _, edge_id in touched if kind == "edge"})
    edges = [
        dict(zip(_EDGE_COLUMNS, row))
        for row in conn.execute(
            "SELECT id, tenant_id, namespace, source_id::text, target_id::text, label, properties,"
            " retracted_at IS NOT NULL FROM graph_edges WHERE id = ANY(%s::bigint[]) ORDER BY id",
            (edge_ids,),
        ).fetchall()
    ]
    vertex_ids = {vertex_id for kind, vertex_id, _ in touched if kind == "vertex"}
    vertex_ids |= {edge[end] for edge in edges for end in ("source_id", "target_id")}
    vertices = [
        dict(zip(VERTEX_KEYS, row))
        for row in conn.execute(
            "SELECT node_id::text, tenant_id, namespace, heat, pinned, summary, archived"
            " FROM graph_vertices WHERE node_id = ANY(%s::uuid[]) ORDER BY node_id",
            (sorted(vertex_ids),),
        ).fetchall()
    ]
    return vertices, edges


def _run(conn: psycopg.Connection, cypher: str, params: dict, columns=("r",)) -> list[tuple]:
    # prepare=False: AGE turns Cypher into SQL at parse time against the graph's labels as they
    # are then; a server-side prepared statement would keep that older translation.
    return conn.execute(cypher_statement(cypher, columns), (json.dumps(params),), prepare=False).fetchall()


def mirror_step(conn: psycopg.Connection, run_id: str, step: str, tenant_id: str, namespace: str) -> dict:
    """Mirror the graph changes of one run's step into AGE (call inside the step's transaction).
    An edge label AGE does not know raises: the transaction rolls back rather than diverge."""
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.INTRANS:
        # SET LOCAL would not stick, and AGE could commit apart from the graph tables.
        raise GraphBackendError("mirror_step must run inside the transaction that changed the graph")
    vertices, edges = step_rows(conn, run_id, step, tenant_id, namespace)
    if not vertices and not edges:
        return {"age_vertices": 0, "age_edges": 0}
    edge_statements = upsert_edges_cypher(edges)  # checks the labels before anything is written
    prepare_session(conn)
    written_vertices = len(_run(conn, *upsert_vertices_cypher(vertices))) if vertices else 0
    written_edges = sum(len(_run(conn, cypher, params)) for cypher, params in edge_statements)
    if written_edges != len(edges):  # an endpoint AGE lacks: roll back rather than diverge
        raise GraphBackendError(f"AGE wrote {written_edges} of {len(edges)} edges of {run_id}/{step}")
    return {"age_vertices": written_vertices, "age_edges": written_edges}


def follow_step(conn: psycopg.Connection, run_id: str, step: str, tenant_id: str, namespace: str,
                setting: str) -> dict:
    """The AGE backend follows the tables: when CURATION_GRAPH_BACKEND picks AGE, mirror what
    this run's step changed in the graph tables; with the Postgres backend, do nothing."""
    if choose_backend(conn, setting) != "age":
        return {}
    return mirror_step(conn, run_id, step, tenant_id, namespace)


def age_neighbourhood(conn: psycopg.Connection, node_id: str) -> dict | None:
    """Like graph.neighbourhood: the vertex and its live edges, or None without a vertex."""
    with conn.transaction():  # a transaction of its own (or a savepoint) for SET LOCAL
        prepare_session(conn)
        found = _run(conn, *neighbourhood_cypher(node_id), NEIGHBOURHOOD_COLUMNS)
    # agtype prints scalars and maps as JSON text.
    rows = [[None if cell is None else json.loads(cell) for cell in row] for row in found]
    if not rows:
        return None
    vertex = {key: rows[0][0].get(key) for key in VERTEX_KEYS}
    edges = sorted((
        (_PG_LABELS.get(label, label), edge_id, outgoing, properties, other)
        for _, label, edge_id, outgoing, retracted, properties, other in rows
        if label is not None and not retracted
    ), key=lambda edge: (edge[0], edge[1]))
    return {
        "vertex": vertex,
        "edges": [
            {"label": label, "source": vertex["node_id"] if outgoing else other["node_id"],
             "target": other["node_id"] if outgoing else vertex["node_id"],
             "properties": properties or {}, "other_summary": other["summary"],
             "other_archived": other["archived"]}
            for label, _, outgoing, properties, other in edges
        ],
    }

-- recall: the query an agent should use. It ranks current_memory by similarity to a question,
-- records an access for each node it returns, and moves the namespace's activity clock.
--
-- Recorded accesses live in a side table, not in memory_nodes: an update of a node bumps its
-- row_version, and the curator only writes a row whose row_version is the one it loaded, so a
-- node read on every cycle could never be merged or summarized. A node's recall is its stored
-- columns (what an agent's own UPDATE, a merge or an import wrote) plus its recorded accesses:
-- memory_recall says it, and steps 1, 3 and 5, the health numbers, export and history read it.
-- No foreign key to memory_nodes: its check would lock the node FOR KEY SHARE and wait behind a
-- curator transaction holding the node FOR UPDATE (nodes are never deleted, and recall only
-- records ids it has just read).
CREATE TABLE IF NOT EXISTS memory_access (
    node_id          uuid PRIMARY KEY,
    recall_count     bigint NOT NULL CHECK (recall_count >= 0),
    last_recalled_at timestamptz NOT NULL
);

-- A node's recall: stored columns plus recorded accesses (the count capped to the column's type).
CREATE OR REPLACE VIEW memory_recall AS
    SELECT m.id,
           least(m.recall_count::bigint + coalesce(a.recall_count, 0), 2147483647)::integer AS recall_count,
           greatest(m.last_recalled_at, a.last_recalled_at) AS last_recalled_at
    FROM memory_nodes m LEFT JOIN memory_access a ON a.node_id = m.id;

-- current_memory shows the same recall (the columns and their types as sql/010 made them).
CREATE OR REPLACE VIEW current_memory AS
    SELECT m.id, m.tenant_id, m.namespace, m.memory_type, m.pointer_summary, m.embedding, m.embedding_model,
           m.base_utility, m.heat, m.pinned,
           least(m.recall_count::bigint + coalesce(a.recall_count, 0), 2147483647)::integer AS recall_count,
           greatest(m.last_recalled_at, a.last_recalled_at) AS last_recalled_at,
           m.epoch, m.confidence, m.created_at, m.updated_at
    FROM memory_nodes m LEFT JOIN memory_access a ON a.node_id = m.id
    WHERE m.archived_at IS NULL AND m.superseded_by IS NULL;

-- Step 5 reads the nodes whose stored last recall is old through memory_nodes_last_seen, then
-- leaves out the ones with a recent recorded access: this index answers that per node.
CREATE INDEX IF NOT EXISTS memory_access_last_recalled ON memory_access (node_id, last_recalled_at);

-- recall(tenant, namespace, query vector, k, memory types, confidences, model, recency weight)
--   The k current memories (active, not superseded, with a vector) of the namespace closest to
--   the query vector (cosine), optionally only of the given memory types or confidences, and
--   only vectors of the given embedding model (a vector of another model means something else).
--   recency_weight (0 to 1, default 0: off) blends in how recently a node was read:
--       score = (1 - w) * similarity + w * exp(-days since last access (or creation) / 30)
--   a bounded factor that re-orders, never filters anything out.
--   Each returned node's access is recorded (count + 1, time now), and the namespace's clock moves;
--   record => false (an operator's look, `curation-pipeline recall`) records nothing, moves nothing.
CREATE OR REPLACE FUNCTION recall(
    tenant text, namespace text, query vector, k integer DEFAULT 5,
    memory_types text[] DEFAULT NULL, confidences text[] DEFAULT NULL,
    model text DEFAULT NULL, recency_weight double precision DEFAULT 0, record boolean DEFAULT true
) RETURNS TABLE (
    id uuid, pointer_summary text, memory_type text, confidence text, similarity double precision,
    score double precision, recall_count integer, last_recalled_at timestamptz, created_at timestamptz,
    supersedes uuid[]
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    moment timestamptz := clock_timestamp();
BEGIN
    IF query IS NULL THEN
        RAISE EXCEPTION 'recall: the query vector is NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF k IS NULL OR k < 1 OR k > 1000 THEN
        RAISE EXCEPTION 'recall: k must be between 1 and 1000, got %', k USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF recency_weight IS NULL OR recency_weight < 0 OR recency_weight > 1 THEN
        RAISE EXCEPTION 'recall: recency_weight must be between 0 and 1, got %', recency_weight
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
    WITH ranked AS (
        SELECT m.id, m.pointer_summary, m.memory_type, m.confidence, m.created_at,
               m.recall_count AS stored_count, m.last_recalled_at AS stored_last,
               a.recall_count AS access_count, a.last_recalled_at AS access_last,
               1 - (m.embedding <=> recall.query) AS similarity,
               (1 - recall.recency_weight) * (1 - (m.embedding <=> recall.query))
               + recall.recency_weight * exp(-greatest(extract(epoch FROM moment - coalesce(
                     greatest(m.last_recalled_at, a.last_recalled_at), m.created_at)), 0) / 86400.0 / 30)
                 AS score
        FROM memory_nodes m LEFT JOIN memory_access a ON a.node_id = m.id
        WHERE m.tenant_id = recall.tenant AND m.namespace = recall.namespace
          AND m.archived_at IS NULL AND m.superseded_by IS NULL AND m.embedding IS NOT NULL
          AND (recall.memory_types IS NULL OR m.memory_type = ANY (recall.memory_types))
          AND (recall.confidences IS NULL OR m.confidence = ANY (recall.confidences))
          AND (recall.model IS NULL OR m.embedding_model = recall.model)
        ORDER BY score DESC, m.id
        LIMIT k
    ),
    recorded AS (
        -- In id order: concurrent recalls lock the access rows in one order.
        INSERT INTO memory_access AS acc (node_id, recall_count, last_recalled_at)
        SELECT r.id, 1, moment FROM ranked r WHERE recall.record ORDER BY r.id
        ON CONFLICT (node_id) DO UPDATE
            SET recall_count = acc.recall_count + 1,
                last_recalled_at = greatest(acc.last_recalled_at, EXCLUDED.last_recalled_at)
        RETURNING acc.node_id, acc.recall_count, acc.last_recalled_at
    )
    SELECT r.id, r.pointer_summary, r.memory_type, r.confidence, r.similarity, r.score,
           least(r.stored_count::bigint + coalesce(c.recall_count, r.access_count, 0), 2147483647)::integer,
           greatest(r.stored_last, coalesce(c.last_recalled_at, r.access_last)), r.created_at,
           coalesce((SELECT array_agg(o.id ORDER BY o.valid_until, o.id) FROM memory_nodes o
                     WHERE o.superseded_by = r.id), '{}')
    FROM ranked r LEFT JOIN recorded c ON c.node_id = r.id
    ORDER BY r.score DESC, r.id;
    IF record THEN
        PERFORM note_activity(ARRAY[tenant], ARRAY[namespace]);  -- the clock moves at commit (sql/015)
    END IF;
END $$;

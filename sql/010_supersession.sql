-- Supersession: a newer memory that gives a new value for what an older one says supersedes it.
-- The older one stays (active, recallable, never deleted) with confidence 'superseded', the id
-- of its successor and the time it stopped being current; `current_memory` leaves it out.

ALTER TABLE memory_nodes ADD COLUMN IF NOT EXISTS superseded_by uuid REFERENCES memory_nodes (id);
ALTER TABLE memory_nodes ADD COLUMN IF NOT EXISTS valid_until timestamptz;

-- 'superseded' joins the confidence levels, and a node says so only with a successor. What
-- makes a node superseded is `superseded_by` (an agent that re-confirms an old value clears it).
ALTER TABLE memory_nodes DROP CONSTRAINT IF EXISTS memory_nodes_confidence_check;
ALTER TABLE memory_nodes ADD CONSTRAINT memory_nodes_confidence_check
    CHECK (confidence IN ('default', 'verified', 'stale', 'superseded'));
ALTER TABLE memory_nodes DROP CONSTRAINT IF EXISTS memory_nodes_superseded_check;
ALTER TABLE memory_nodes ADD CONSTRAINT memory_nodes_superseded_check
    CHECK ((confidence <> 'superseded' OR superseded_by IS NOT NULL) AND superseded_by IS DISTINCT FROM id);

-- A merge re-points the nodes superseded by the node it archives to its keeper: found by this
-- index, which holds only superseded nodes.
CREATE INDEX IF NOT EXISTS memory_nodes_superseded_by
    ON memory_nodes (superseded_by) WHERE superseded_by IS NOT NULL;

-- What an agent's recall should read: the active memories that nothing has superseded.
--     SELECT id, pointer_summary FROM current_memory
--     WHERE tenant_id = $1 AND namespace = $2 ORDER BY embedding <=> $3 LIMIT 5;
-- Columns are listed, not `*`: a view keeps the columns it was made with, and a later migration
-- that adds one replaces the view on purpose.
CREATE OR REPLACE VIEW current_memory AS
    SELECT id, tenant_id, namespace, memory_type, pointer_summary, embedding, embedding_model,
           base_utility, heat, pinned, recall_count, last_recalled_at, epoch, confidence,
           created_at, updated_at
    FROM memory_nodes
    WHERE archived_at IS NULL AND superseded_by IS NULL;

-- The judge's verdicts on pairs (step 2 with the LLM on), one per pair and pair of row versions:
-- a pair is not asked again while both nodes are as they were, and step 6b links the pairs it
-- called "related" and leaves the "distinct" ones unlinked.
CREATE TABLE IF NOT EXISTS pair_judgements (
    tenant_id    text NOT NULL,
    namespace    text NOT NULL,
    older_id     uuid NOT NULL REFERENCES memory_nodes (id),
    newer_id     uuid NOT NULL REFERENCES memory_nodes (id),
    older_version bigint NOT NULL,
    newer_version bigint NOT NULL,
    similarity   double precision NOT NULL,  -- the embedder's cosine of the pair when judged
    verdict      text NOT NULL CHECK (verdict IN ('same', 'update', 'related', 'distinct')),
    -- What came of it: superseded, merged, refused (an "update" the texts give no reason for),
    -- or none.
    outcome      text NOT NULL,
    model        text NOT NULL,
    run_id       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (older_id, newer_id, older_version, newer_version)
);
CREATE INDEX IF NOT EXISTS pair_judgements_ns ON pair_judgements (tenant_id, namespace, verdict);

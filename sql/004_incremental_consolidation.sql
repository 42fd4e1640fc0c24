-- A cycle's cost follows what changed: step 2 compares only nodes changed since its last complete
-- pass against the rest, and the other steps' loads use partial indexes.

-- Step 2's cursor over changed nodes (like step 6's, see steps/graph_sync.py), whether the last
-- pass left no mergeable pair behind (only then may the next one look at changed nodes only),
-- and the settings that pass used (a changed threshold means a full pass).
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS consolidate_txid xid8 NOT NULL DEFAULT '0';
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS consolidate_pending xid8[] NOT NULL DEFAULT '{}';
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS consolidate_complete boolean NOT NULL DEFAULT false;
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS consolidate_params jsonb;

-- Step 3: verbose nodes (a threshold above 500 can still use it).
CREATE INDEX IF NOT EXISTS memory_nodes_verbose
    ON memory_nodes (tenant_id, namespace)
    WHERE archived_at IS NULL AND char_length(pointer_summary) > 500;
-- Step 5: nodes that may go stale, by the time they were last seen.
CREATE INDEX IF NOT EXISTS memory_nodes_last_seen
    ON memory_nodes (tenant_id, namespace, (coalesce(last_recalled_at, created_at)))
    WHERE archived_at IS NULL AND confidence = 'default';

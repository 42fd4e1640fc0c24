-- Integrity, round two.

-- Step 2 re-points an archived node whose keeper is itself archived to its chain's end, looking
-- only at nodes written since its last pass (store/actions.repair_chains). Chains broken before
-- this column existed (or in a namespace never curated since) are looked for once in the whole
-- namespace; then this is set.
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS consolidate_chains_checked boolean NOT NULL DEFAULT false;

-- Step 1 compares each node's epoch with the namespace's. When no agent reported that
-- (namespace_activity.current_epoch NULL: rows an agent's own SQL wrote), it is the nodes'
-- highest epoch: with this index one probe at the end of a range, instead of a scan of the
-- namespace every cycle.
CREATE INDEX IF NOT EXISTS memory_nodes_epoch ON memory_nodes (tenant_id, namespace, epoch);

-- Steps 2 and 6b search at most CURATOR_SEARCH_MAX_CHANGED changed nodes a cycle: their position
-- may stop inside a transaction's rows (a bulk load), so it names the last node searched too.
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS consolidate_node_id uuid;
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS associate_node_id uuid;

-- Step 2 reads a memory that names no subject of its own ("Make that 150k.") with the memory
-- written just before it in its namespace and memory type (store/context_pairs.py).
CREATE INDEX IF NOT EXISTS memory_nodes_written_order
    ON memory_nodes (tenant_id, namespace, memory_type, created_at)
    WHERE archived_at IS NULL AND superseded_by IS NULL;

-- A cycle where nothing changed reads nothing, at any namespace size; the pair search streams.

-- Step 6's cursor reads the next changed nodes in (last_txid, id) order, LIMIT cap + 1: with the
-- id in the index that is an index range that stops after cap + 1 rows. Without it, every node
-- written by one transaction (a bulk import: the whole namespace) had to be sorted first.
-- It serves every use of memory_nodes_changes (a prefix of it), which it replaces.
CREATE INDEX IF NOT EXISTS memory_nodes_change_cursor
    ON memory_nodes (tenant_id, namespace, last_txid, id);
DROP INDEX IF EXISTS memory_nodes_changes;

-- Steps 2 and 6b's full pass streams a namespace's vectors one memory type at a time, ordered by
-- (memory_type, id), and reads the rest of a memory type again after a position (a type larger
-- than the search's memory budget): both are ranges of this index, with no sort. Step 4's
-- ranges on the model name use its prefix: it replaces memory_nodes_embedding_model (sql/007).
CREATE INDEX IF NOT EXISTS memory_nodes_search_order
    ON memory_nodes (tenant_id, namespace, embedding_model, memory_type, id)
    WHERE archived_at IS NULL AND embedding IS NOT NULL;
DROP INDEX IF EXISTS memory_nodes_embedding_model;

-- Steps 3 and 5 read their candidates through partial indexes (sql/004), but the planner only
-- takes an index when it expects few rows, and it has no statistics on a partial index's
-- expressions: it guessed a third of the namespace and scanned all of it, every cycle. With
-- statistics on the two expressions it knows that (almost) no text is long and (almost) no node
-- is old enough, and reads the index: nothing pending costs two index pages. Then ANALYZE once,
-- so a store that no longer changes much (autovacuum analyses only after 10% of rows changed)
-- has them at once; it samples a fixed number of rows, so it takes about as long at any size.
CREATE STATISTICS IF NOT EXISTS memory_nodes_text_length_stats
    ON (char_length(pointer_summary)) FROM memory_nodes;
CREATE STATISTICS IF NOT EXISTS memory_nodes_last_seen_stats
    ON (coalesce(last_recalled_at, created_at)) FROM memory_nodes;
ANALYZE memory_nodes;

-- What steps 2 and 6b call a change: a write to what a memory says or where it belongs, not the
-- curator's own marks. Step 5 marking a node stale, an agent's recorded recall or a heat update
-- changed last_txid, so the next incremental pass searched nearly the whole namespace again
-- (a second cycle on a conversation cost as much as the first). content_txid moves only when
-- the text, the vector, the model, the type, the pin, the namespace, the date or the node's
-- place among merges and supersessions changes.
ALTER TABLE memory_nodes ADD COLUMN IF NOT EXISTS content_txid xid8;
UPDATE memory_nodes SET content_txid = last_txid WHERE content_txid IS NULL;
ALTER TABLE memory_nodes ALTER COLUMN content_txid SET DEFAULT pg_current_xact_id();
ALTER TABLE memory_nodes ALTER COLUMN content_txid SET NOT NULL;

CREATE OR REPLACE FUNCTION memory_nodes_track_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.row_version := OLD.row_version + 1;
    NEW.updated_at := now();
    NEW.last_txid := pg_current_xact_id();
    IF (NEW.pointer_summary, NEW.embedding, NEW.embedding_model, NEW.memory_type, NEW.pinned,
        NEW.tenant_id, NEW.namespace, NEW.created_at, NEW.archived_at, NEW.merged_into, NEW.superseded_by)
       IS DISTINCT FROM
       (OLD.pointer_summary, OLD.embedding, OLD.embedding_model, OLD.memory_type, OLD.pinned,
        OLD.tenant_id, OLD.namespace, OLD.created_at, OLD.archived_at, OLD.merged_into, OLD.superseded_by) THEN
        NEW.content_txid := pg_current_xact_id();
    END IF;
    RETURN NEW;
END $$;

CREATE INDEX IF NOT EXISTS memory_nodes_content_changes
    ON memory_nodes (tenant_id, namespace, content_txid, id);

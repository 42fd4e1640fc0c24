-- When a row came into this store, which no one changes afterwards (created_at is the memory's
-- own date, and an import keeps the one it was given). An undo asks it of a node archived into a
-- keeper whose text it puts back: a node written after the undone run started cannot have been
-- held by the keeper's text from before that run (store/undo_links.py). Rows from before this
-- migration read -infinity: written before any run the store still knows.
ALTER TABLE memory_nodes ADD COLUMN IF NOT EXISTS inserted_at timestamptz NOT NULL DEFAULT '-infinity';
ALTER TABLE memory_nodes ALTER COLUMN inserted_at SET DEFAULT clock_timestamp();

CREATE OR REPLACE FUNCTION memory_nodes_track_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.row_version := OLD.row_version + 1;
    NEW.updated_at := now();
    NEW.last_txid := pg_current_xact_id();
    NEW.inserted_at := OLD.inserted_at;
    IF (NEW.pointer_summary, NEW.embedding, NEW.embedding_model, NEW.memory_type, NEW.pinned,
        NEW.tenant_id, NEW.namespace, NEW.created_at, NEW.archived_at, NEW.merged_into, NEW.superseded_by)
       IS DISTINCT FROM
       (OLD.pointer_summary, OLD.embedding, OLD.embedding_model, OLD.memory_type, OLD.pinned,
        OLD.tenant_id, OLD.namespace, OLD.created_at, OLD.archived_at, OLD.merged_into, OLD.superseded_by) THEN
        NEW.content_txid := pg_current_xact_id();
    END IF;
    RETURN NEW;
END $$;

-- When a row came into this store, which no one changes afterwards (created_at is the memory's
-- own date, and an import keeps the one it was given). An undo asks it of a node archived into a
-- keeper whose text it puts back: a node written after the undone run started cannot have been
-- held by the keeper's text from before that run (store/undo_links.py). Rows from before this
-- migration read -infinity: written before any run the store still knows.
ALTER TABLE memory_nodes ADD COLUMN IF NOT EXISTS inserted_at timestamptz NOT NULL DEFAULT '-infinity';
ALTER TABLE memory_nodes ALTER COLUMN inserted_at SET DEFAULT clock_timestamp();

CREATE OR REPLACE FUNCTION memory_nodes_keep_inserted_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.inserted_at := OLD.inserted_at;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER memory_nodes_keep_inserted_at
    BEFORE UPDATE ON memory_nodes
    FOR EACH ROW EXECUTE FUNCTION memory_nodes_keep_inserted_at();

-- An undone merge stays undone: the pair is vetoed, and step 2 never proposes it again until the
-- undo is itself undone (which lifts the veto). Vetoes are marked lifted, never deleted.
CREATE TABLE IF NOT EXISTS merge_vetoes (
    id          bigserial PRIMARY KEY,
    tenant_id   text NOT NULL,
    namespace   text NOT NULL,
    node_a      uuid NOT NULL REFERENCES memory_nodes (id),
    node_b      uuid NOT NULL REFERENCES memory_nodes (id),
    created_by  text NOT NULL,  -- the undo that vetoed the pair
    lifted_by   text,           -- the undo of that undo
    created_at  timestamptz NOT NULL DEFAULT now(),
    lifted_at   timestamptz,
    CHECK (node_a < node_b)
);
CREATE INDEX IF NOT EXISTS merge_vetoes_active
    ON merge_vetoes (tenant_id, namespace) WHERE lifted_by IS NULL;

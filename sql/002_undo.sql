-- What undo needs: graph changes recorded like node changes, and marks (never deletions) for
-- withdrawn training signals and retracted graph edges.

CREATE TABLE IF NOT EXISTS graph_revisions (
    id         bigserial PRIMARY KEY,
    run_id     text NOT NULL,
    step       text NOT NULL,
    tenant_id  text NOT NULL,
    namespace  text NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('vertex', 'edge')),
    vertex_id  uuid REFERENCES graph_vertices (node_id),
    edge_id    bigint REFERENCES graph_edges (id),
    before     jsonb,  -- NULL: the row did not exist
    after      jsonb NOT NULL,
    reason     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'vertex') = (vertex_id IS NOT NULL) AND (kind = 'edge') = (edge_id IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS graph_revisions_run ON graph_revisions (run_id);

ALTER TABLE graph_edges ADD COLUMN IF NOT EXISTS retracted_at timestamptz;
ALTER TABLE graph_edges ADD COLUMN IF NOT EXISTS retracted_by text;

ALTER TABLE training_signals ADD COLUMN IF NOT EXISTS withdrawn_at timestamptz;
ALTER TABLE training_signals ADD COLUMN IF NOT EXISTS withdrawn_by text;
CREATE INDEX IF NOT EXISTS training_signals_run ON training_signals (run_id);
CREATE INDEX IF NOT EXISTS training_signals_withdrawn_by ON training_signals (withdrawn_by)
    WHERE withdrawn_by IS NOT NULL;

-- Status changes of existing training signals (undo withdrawing or re-opening them), so that an
-- undo can itself be undone. Signals a run creates carry its run_id instead.
CREATE TABLE IF NOT EXISTS signal_revisions (
    id         bigserial PRIMARY KEY,
    run_id     text NOT NULL,
    signal_id  bigint NOT NULL REFERENCES training_signals (id),
    tenant_id  text NOT NULL,
    namespace  text NOT NULL,
    before     jsonb NOT NULL,
    after      jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS signal_revisions_run ON signal_revisions (run_id);

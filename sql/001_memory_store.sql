-- The memory store: memory nodes, the idle-activity table, training signals, the activity log
-- and the revision history. Every statement is idempotent; the runner substitutes the embedding
-- dimension for __EMBEDDING_DIM__ (from settings, recorded in curation_store_settings).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS curation_store_settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE IF NOT EXISTS memory_nodes (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id        text NOT NULL CHECK (tenant_id <> ''),
    namespace        text NOT NULL CHECK (namespace <> ''),
    memory_type      text NOT NULL DEFAULT 'semantic',
    pointer_summary  text NOT NULL CHECK (btrim(pointer_summary) <> ''),
    embedding        vector(__EMBEDDING_DIM__),
    embedding_model  text,
    base_utility     double precision NOT NULL DEFAULT 0.5,
    heat             double precision NOT NULL DEFAULT 0,
    pinned           boolean NOT NULL DEFAULT false,
    recall_count     integer NOT NULL DEFAULT 0 CHECK (recall_count >= 0),
    last_recalled_at timestamptz,
    epoch            bigint NOT NULL DEFAULT 0,
    confidence       text NOT NULL DEFAULT 'default'
                     CHECK (confidence IN ('default', 'verified', 'stale')),
    archived_at      timestamptz,
    merged_into      uuid REFERENCES memory_nodes (id),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- Bumped by trigger on every update, by anyone: the curator only writes a row whose
    -- row_version is still the one it loaded, so an agent's concurrent edit is never overwritten.
    row_version      bigint NOT NULL DEFAULT 1,
    -- Transaction that last wrote the row (trigger): the graph sync's watermark (see step 6).
    last_txid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
    CHECK (merged_into IS NULL OR archived_at IS NOT NULL),
    CHECK (merged_into IS NULL OR merged_into <> id)
);

CREATE OR REPLACE FUNCTION memory_nodes_track_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.row_version := OLD.row_version + 1;
    NEW.updated_at := now();
    NEW.last_txid := pg_current_xact_id();
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER memory_nodes_track_change
    BEFORE UPDATE ON memory_nodes
    FOR EACH ROW EXECUTE FUNCTION memory_nodes_track_change();

-- Step queries: all of them read the active rows of one namespace.
CREATE INDEX IF NOT EXISTS memory_nodes_active_ns
    ON memory_nodes (tenant_id, namespace, memory_type) WHERE archived_at IS NULL;
CREATE INDEX IF NOT EXISTS memory_nodes_missing_embedding
    ON memory_nodes (tenant_id, namespace) WHERE archived_at IS NULL AND embedding IS NULL;
CREATE INDEX IF NOT EXISTS memory_nodes_never_recalled
    ON memory_nodes (tenant_id, namespace, epoch) WHERE archived_at IS NULL AND recall_count = 0;
CREATE INDEX IF NOT EXISTS memory_nodes_changes
    ON memory_nodes (tenant_id, namespace, last_txid);
CREATE INDEX IF NOT EXISTS memory_nodes_merged_into
    ON memory_nodes (merged_into) WHERE merged_into IS NOT NULL;

CREATE TABLE IF NOT EXISTS namespace_activity (
    tenant_id            text NOT NULL,
    namespace            text NOT NULL,
    -- Written by the agents' side (NULL = unknown: step 1 then uses the nodes' highest epoch).
    current_epoch        bigint,
    last_interaction_at  timestamptz,
    -- Written by the curation job; read by the schedule and sensors.
    curation_enabled     boolean NOT NULL DEFAULT true,
    last_curated_at      timestamptz,
    last_curation_run_id text,
    -- Step 6's position in the stream of changed nodes (see steps/graph_sync.py): every node
    -- with (last_txid, id) past the cursor, plus the nodes of transactions that were still
    -- running below it when it moved (graph_sync_pending).
    graph_sync_txid      xid8 NOT NULL DEFAULT '0',
    graph_sync_node_id   uuid,
    graph_sync_pending   xid8[] NOT NULL DEFAULT '{}',
    graph_synced_at      timestamptz,
    PRIMARY KEY (tenant_id, namespace)
);

CREATE TABLE IF NOT EXISTS training_signals (
    id               bigserial PRIMARY KEY,
    memory_id        uuid NOT NULL REFERENCES memory_nodes (id),
    tenant_id        text NOT NULL,
    namespace        text NOT NULL,
    signal_type      text NOT NULL,
    corrected_type   text,
    content_snapshot text NOT NULL,
    source           text NOT NULL,
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'consumed', 'withdrawn')),
    run_id           text,
    created_at       timestamptz NOT NULL DEFAULT now()
);
-- The same pending signal is never inserted twice.
CREATE UNIQUE INDEX IF NOT EXISTS training_signals_one_pending
    ON training_signals (memory_id, signal_type, source) WHERE status = 'pending';

CREATE TABLE IF NOT EXISTS activity_log (
    id         bigserial PRIMARY KEY,
    tenant_id  text NOT NULL,
    namespace  text NOT NULL,
    action     text NOT NULL,
    run_id     text,
    metadata   jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- One curation_cycle row per (run, namespace), updated by each step as it finishes.
CREATE UNIQUE INDEX IF NOT EXISTS activity_log_one_cycle_per_run
    ON activity_log (run_id, tenant_id, namespace) WHERE action = 'curation_cycle';
CREATE INDEX IF NOT EXISTS activity_log_ns ON activity_log (tenant_id, namespace, created_at);

CREATE TABLE IF NOT EXISTS node_revisions (
    id         bigserial PRIMARY KEY,
    run_id     text NOT NULL,
    step       text NOT NULL,
    tenant_id  text NOT NULL,
    namespace  text NOT NULL,
    node_id    uuid NOT NULL REFERENCES memory_nodes (id),
    before     jsonb NOT NULL,
    after      jsonb NOT NULL,
    reason     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS node_revisions_node ON node_revisions (node_id, id);
CREATE INDEX IF NOT EXISTS node_revisions_run ON node_revisions (run_id);

-- The knowledge graph (step 6), plain Postgres. Vertices and edges are never deleted.
CREATE TABLE IF NOT EXISTS graph_vertices (
    node_id    uuid PRIMARY KEY REFERENCES memory_nodes (id),
    tenant_id  text NOT NULL,
    namespace  text NOT NULL,
    heat       double precision NOT NULL,
    pinned     boolean NOT NULL,
    summary    text NOT NULL,
    archived   boolean NOT NULL DEFAULT false,
    synced_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS graph_vertices_ns ON graph_vertices (tenant_id, namespace);

CREATE TABLE IF NOT EXISTS graph_edges (
    id         bigserial PRIMARY KEY,
    tenant_id  text NOT NULL,
    namespace  text NOT NULL,
    source_id  uuid NOT NULL REFERENCES graph_vertices (node_id),
    target_id  uuid NOT NULL REFERENCES graph_vertices (node_id),
    label      text NOT NULL,
    properties jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, target_id, label)
);

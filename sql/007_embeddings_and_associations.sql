-- Real embedders and association edges: step 4 re-embeds nodes another model embedded, step 6b
-- links similar (not duplicate) nodes, and no edge may ever join two namespaces.

-- Step 4: nodes whose vector another model made, found by index ranges on the model name.
CREATE INDEX IF NOT EXISTS memory_nodes_embedding_model
    ON memory_nodes (tenant_id, namespace, embedding_model)
    WHERE archived_at IS NULL AND embedding IS NOT NULL;

-- Step 6b's incremental position, like step 2's (sql/004).
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS associate_txid xid8 NOT NULL DEFAULT '0';
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS associate_pending xid8[] NOT NULL DEFAULT '{}';
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS associate_complete boolean NOT NULL DEFAULT false;
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS associate_params jsonb;

-- A namespace's edges by label (step 6b's dedup) and a node's incoming edges (the read helper).
CREATE INDEX IF NOT EXISTS graph_edges_ns_label ON graph_edges (tenant_id, namespace, label);
CREATE INDEX IF NOT EXISTS graph_edges_target ON graph_edges (target_id);

-- The last line of defence of "nothing crosses a tenant or namespace": whoever writes or revives
-- an edge (a step, an undo, a bug, a person with psql), both of its vertices must be in its
-- namespace; and a vertex may only change namespace (its node was moved) once its live edges
-- are retracted (graph.upsert_vertices does that first).
CREATE OR REPLACE FUNCTION graph_edges_same_namespace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM graph_vertices v
        WHERE v.node_id IN (NEW.source_id, NEW.target_id)
          AND v.tenant_id = NEW.tenant_id AND v.namespace = NEW.namespace)
       <> (CASE WHEN NEW.source_id = NEW.target_id THEN 1 ELSE 2 END) THEN  -- parenthesised: IF reads up to the first THEN
        RAISE EXCEPTION 'graph edge % -> % (%) would cross a tenant or namespace: both vertices must be in %/%',
            NEW.source_id, NEW.target_id, NEW.label, NEW.tenant_id, NEW.namespace
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER graph_edges_same_namespace
    BEFORE INSERT OR UPDATE OF tenant_id, namespace, source_id, target_id, retracted_at ON graph_edges
    FOR EACH ROW WHEN (NEW.retracted_at IS NULL) EXECUTE FUNCTION graph_edges_same_namespace();

CREATE OR REPLACE FUNCTION graph_vertices_keep_edges_in_namespace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM graph_edges e
               WHERE (e.source_id = NEW.node_id OR e.target_id = NEW.node_id)
                 AND e.retracted_at IS NULL) THEN
        RAISE EXCEPTION 'vertex % moves from %/% to %/% with live edges: retract them first',
            NEW.node_id, OLD.tenant_id, OLD.namespace, NEW.tenant_id, NEW.namespace
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER graph_vertices_keep_edges_in_namespace
    BEFORE UPDATE OF tenant_id, namespace ON graph_vertices
    FOR EACH ROW WHEN ((OLD.tenant_id, OLD.namespace) IS DISTINCT FROM (NEW.tenant_id, NEW.namespace))
    EXECUTE FUNCTION graph_vertices_keep_edges_in_namespace();

-- The activity clocks move by themselves: any write to memory_nodes that is not the curator's
-- (an agent's INSERT, UPDATE or COPY, from any client or language) moves its namespaces'
-- last_interaction_at and advances their current_epoch, so the schedule and the idle sensor see
-- the interaction. Once per statement and namespace, not per row: a 10,000-row COPY into one
-- namespace costs one clock update.
--
-- The curator's own writes (the steps, undo: store/revisions.update_nodes) and import's COPY
-- (store/nodes_io.write_nodes, which sets the clocks itself) mark their transaction with
--     SELECT set_config('curation.writer', 'curator', true)
-- and do not count: a curation alone never triggers the next one.
--
-- Lock contention on a namespace's clock row: moving it locks the row until the writer's
-- transaction ends, so every writer of a busy namespace would queue behind the one before it
-- (a commit, a WAL flush, each). A clock moved less than `curation.clock_granularity_ms`
-- (default 100 ms) ago is left as it is: that is read without a lock, and the upsert's WHERE
-- repeats it under the lock, so a writer that waited for another's move finds the clock fresh
-- and skips it. last_interaction_at is therefore at most that much behind the last write, and
-- current_epoch advances at most once per that interval and namespace (step 1's epoch lag counts
-- moments of activity, not statements). Set it to 0 (ALTER DATABASE ... SET
-- curation.clock_granularity_ms = 0) to count every statement (writers of one namespace then
-- queue on its row); benchmarks/agent_write_cost.py
-- measures both.

CREATE OR REPLACE FUNCTION curation_clock_granularity() RETURNS interval
LANGUAGE sql STABLE AS $$
    SELECT make_interval(secs => coalesce(nullif(current_setting('curation.clock_granularity_ms', true), ''),
                                          '100')::double precision / 1000)
$$;

CREATE OR REPLACE FUNCTION curation_is_curator_write() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('curation.writer', true), '') = 'curator'
$$;

-- The epoch after `epoch`; the largest bigint stays itself (an epoch an agent or import wrote).
CREATE OR REPLACE FUNCTION epoch_after(epoch bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN epoch < 9223372036854775807 THEN epoch + 1 ELSE epoch END
$$;

-- Move the clocks of the given namespaces (parallel arrays; duplicates are fine). Also what
-- recall() and a client's touch() call. A namespace without a row gets one; its epoch starts
-- past the highest epoch its nodes hold (an index probe of memory_nodes_epoch).
CREATE OR REPLACE FUNCTION move_activity_clocks(tenants text[], namespaces text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    moment timestamptz := clock_timestamp();
    granularity interval := curation_clock_granularity();
BEGIN
    -- The usual case, one namespace whose clock moved a moment ago: one index probe, no lock,
    -- nothing written (the upsert below costs far more, even when it writes nothing).
    IF cardinality(tenants) = 1 AND granularity > interval '0' AND EXISTS (
            SELECT FROM namespace_activity r
            WHERE r.tenant_id = tenants[1] AND r.namespace = namespaces[1]
              AND r.last_interaction_at > moment - granularity) THEN
        RETURN;
    END IF;
    INSERT INTO namespace_activity AS a (tenant_id, namespace, current_epoch, last_interaction_at)
    SELECT t.tenant_id, t.namespace,
           epoch_after(coalesce((SELECT max(m.epoch) FROM memory_nodes m
                                 WHERE m.tenant_id = t.tenant_id AND m.namespace = t.namespace), 0)),
           moment
    FROM (SELECT DISTINCT tenant_id, namespace FROM unnest(tenants, namespaces) AS u(tenant_id, namespace)) AS t
    -- Read without a lock: a clock moved a moment ago is not touched (nor waited for).
    WHERE granularity = interval '0' OR NOT EXISTS (SELECT FROM namespace_activity r
                      WHERE r.tenant_id = t.tenant_id AND r.namespace = t.namespace
                        AND r.last_interaction_at > moment - granularity)
    -- One lock order for every writer: two statements touching the same namespaces never deadlock.
    ORDER BY t.tenant_id, t.namespace
    ON CONFLICT (tenant_id, namespace) DO UPDATE
        SET last_interaction_at = greatest(a.last_interaction_at, EXCLUDED.last_interaction_at),
            -- +1, or past an epoch an agent wrote itself; an unknown (NULL) epoch starts past the nodes'.
            current_epoch = greatest(epoch_after(coalesce(a.current_epoch, 0)), EXCLUDED.current_epoch)
        -- The same check under the lock: a writer that waited for another's move skips its own.
        WHERE granularity = interval '0' OR a.last_interaction_at IS NULL
           OR a.last_interaction_at <= EXCLUDED.last_interaction_at - granularity;
END $$;

CREATE OR REPLACE FUNCTION memory_nodes_move_clocks() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    tenants text[];
    namespaces text[];
BEGIN
    IF curation_is_curator_write() THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(tenant_id), array_agg(namespace) INTO tenants, namespaces
        FROM (SELECT DISTINCT tenant_id, namespace FROM new_rows) AS touched;
    ELSE
        -- A node moved to another namespace is activity in both.
        SELECT array_agg(tenant_id), array_agg(namespace) INTO tenants, namespaces
        FROM (SELECT tenant_id, namespace FROM new_rows
              UNION SELECT tenant_id, namespace FROM old_rows) AS touched;
    END IF;
    IF tenants IS NOT NULL THEN
        PERFORM move_activity_clocks(tenants, namespaces);
    END IF;
    RETURN NULL;
END $$;

-- Transition tables allow one event per trigger: one for INSERT (COPY fires it too), one for UPDATE.
CREATE OR REPLACE TRIGGER memory_nodes_clock_on_insert
    AFTER INSERT ON memory_nodes REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memory_nodes_move_clocks();
CREATE OR REPLACE TRIGGER memory_nodes_clock_on_update
    AFTER UPDATE ON memory_nodes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memory_nodes_move_clocks();

-- A node an agent writes without an epoch (the column's default, 0) is written at its
-- namespace's current epoch: otherwise a namespace whose clock has run would find every new node
-- far behind it, and step 1 would call it misfiled at once. Import and the curator keep theirs.
CREATE OR REPLACE FUNCTION memory_nodes_stamp_epoch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.epoch := coalesce((SELECT current_epoch FROM namespace_activity
                           WHERE tenant_id = NEW.tenant_id AND namespace = NEW.namespace), 0);
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER memory_nodes_stamp_epoch
    BEFORE INSERT ON memory_nodes
    FOR EACH ROW WHEN (NEW.epoch = 0 AND NOT curation_is_curator_write())
    EXECUTE FUNCTION memory_nodes_stamp_epoch();

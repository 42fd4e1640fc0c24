-- The activity clocks move by themselves: any write to memory_nodes that is not the curator's
-- (an agent's INSERT, UPDATE or COPY, from any client or language) moves its namespaces'
-- last_interaction_at and advances their current_epoch (at the writer's commit, see below), so
-- the schedule and the idle sensor see the interaction. Once per statement and namespace, not per row: a 10,000-row COPY into one
-- namespace costs one clock update.
--
-- The curator's own writes (the steps, undo: store/revisions.update_nodes) and import's COPY
-- (store/nodes_io.write_nodes, which sets the clocks itself) mark their transaction with
--     SELECT set_config('curation.writer', 'curator', true)
-- and do not count: a curation alone never triggers the next one.
--
-- Lock contention on a namespace's clock row: moving it locks the row until the writer's
-- transaction ends. A writer never waits for it: a row locked by another writer (whose
-- transaction is open, and will commit its own move) is skipped (FOR UPDATE SKIP LOCKED; a
-- namespace's first row is created under a try-lock the same way). And a clock moved less than
-- `curation.clock_granularity_ms` (default 100 ms) ago is left as it is, read without a lock, so
-- a busy namespace's row is written about ten times a second, not once per statement. So
-- last_interaction_at may be that much behind the last write (or, while another writer's
-- transaction holds the row, its time, which is earlier), and current_epoch advances at most
-- once per interval and namespace (step 1's epoch lag counts moments of activity, not
-- statements). Set it to 0 (ALTER DATABASE ... SET curation.clock_granularity_ms = 0) to move
-- it on every statement that finds the row free; benchmarks/agent_write_cost.py measures both.

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
    touched record;
BEGIN
    -- One lock order for every writer (by name): two statements touching the same namespaces
    -- never deadlock.
    FOR touched IN
        SELECT DISTINCT u.tenant_id, u.namespace FROM unnest(tenants, namespaces) AS u(tenant_id, namespace)
        ORDER BY 1, 2
    LOOP
        -- Read without a lock: a clock moved a moment ago is not touched.
        CONTINUE WHEN granularity > interval '0' AND EXISTS (
            SELECT FROM namespace_activity r
            WHERE r.tenant_id = touched.tenant_id AND r.namespace = touched.namespace
              AND r.last_interaction_at > moment - granularity);
        -- Never wait for the row: a writer whose transaction is still open holds it (it moved
        -- the clock and will commit that move); waiting would queue every writer of the
        -- namespace behind it, for as long as it stays open.
        PERFORM FROM namespace_activity r
        WHERE r.tenant_id = touched.tenant_id AND r.namespace = touched.namespace
        FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
            UPDATE namespace_activity a
            SET last_interaction_at = greatest(a.last_interaction_at, moment),
                -- +1, or past an epoch an agent wrote itself; an unknown (NULL) epoch starts past the nodes'.
                current_epoch = greatest(epoch_after(coalesce(a.current_epoch, 0)),
                                         epoch_after(coalesce((SELECT max(m.epoch) FROM memory_nodes m
                                                               WHERE m.tenant_id = a.tenant_id
                                                                 AND m.namespace = a.namespace), 0)))
            WHERE a.tenant_id = touched.tenant_id AND a.namespace = touched.namespace
              -- The check again, on the row as committed now.
              AND (granularity = interval '0' OR a.last_interaction_at IS NULL
                   OR a.last_interaction_at <= moment - granularity);
        ELSIF NOT EXISTS (SELECT FROM namespace_activity r
                          WHERE r.tenant_id = touched.tenant_id AND r.namespace = touched.namespace)
              -- No row yet: one creator at a time (a creator still open holds this lock; the
              -- others leave the row to it rather than wait for its commit).
              AND pg_try_advisory_xact_lock(hashtextextended(touched.tenant_id || '/' || touched.namespace, 7400114003)) THEN
            INSERT INTO namespace_activity (tenant_id, namespace, current_epoch, last_interaction_at)
            VALUES (touched.tenant_id, touched.namespace,
                    epoch_after(coalesce((SELECT max(m.epoch) FROM memory_nodes m
                                          WHERE m.tenant_id = touched.tenant_id AND m.namespace = touched.namespace), 0)),
                    moment)
            ON CONFLICT (tenant_id, namespace) DO NOTHING;
        END IF;
        -- Else the row is locked by a writer that is moving it: left to that writer.
    END LOOP;
END $$;


-- When: at the writer's commit, not at its statement. Moving the clock locks the namespace's
-- activity row until the transaction ends; an agent that kept its transaction open after a
-- write would hold the curator's own writes to that row (its cursors, its last curation) for as
-- long. So a statement only notes its namespaces for its transaction (an unlogged side table,
-- one row per transaction and namespace, nothing noted while the clock is fresh), and a deferred
-- constraint trigger moves the clock at commit, holding the row for the commit alone: the
-- clock also says when the interaction became visible, which is what a curation can see.
CREATE UNLOGGED TABLE IF NOT EXISTS pending_activity (
    txid      xid8 NOT NULL DEFAULT pg_current_xact_id(),
    tenant_id text NOT NULL,
    namespace text NOT NULL,
    PRIMARY KEY (txid, tenant_id, namespace)
);

CREATE OR REPLACE FUNCTION note_activity(tenants text[], namespaces text[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO pending_activity (tenant_id, namespace)
    SELECT DISTINCT u.tenant_id, u.namespace FROM unnest(tenants, namespaces) AS u(tenant_id, namespace)
    WHERE curation_clock_granularity() = interval '0' OR NOT EXISTS (
        SELECT FROM namespace_activity r
        WHERE r.tenant_id = u.tenant_id AND r.namespace = u.namespace
          AND r.last_interaction_at > clock_timestamp() - curation_clock_granularity())
    ON CONFLICT DO NOTHING
$$;

CREATE OR REPLACE FUNCTION pending_activity_at_commit() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM move_activity_clocks(ARRAY[NEW.tenant_id], ARRAY[NEW.namespace]);
    DELETE FROM pending_activity
    WHERE txid = NEW.txid AND tenant_id = NEW.tenant_id AND namespace = NEW.namespace;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS pending_activity_at_commit ON pending_activity;
CREATE CONSTRAINT TRIGGER pending_activity_at_commit
    AFTER INSERT ON pending_activity DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION pending_activity_at_commit();

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
        PERFORM note_activity(tenants, namespaces);  -- the clock moves at commit
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

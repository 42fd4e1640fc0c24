-- What the schedule and the sensors read: when a namespace's last successful curation started,
-- and indexes that make a tick read only the namespaces that have something to do.

-- A curation only covers the interactions before it started: a step reads what was committed
-- when it ran, so an agent that wrote during the run still leaves work for the next one. The
-- job records when it finished (last_curated_at, last_curation_run_id, see store/activity.py);
-- this column is the start of that cycle, taken from its activity_log row (for a re-execution,
-- the start of its root run, whose steps that did not fail were not repeated).
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS last_curation_started_at timestamptz;

UPDATE namespace_activity SET last_curation_started_at = last_curated_at
WHERE last_curation_started_at IS NULL AND last_curated_at IS NOT NULL;

CREATE OR REPLACE FUNCTION namespace_activity_curation_start() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz;
BEGIN
    IF TG_OP = 'UPDATE'
       AND NEW.last_curation_run_id IS NOT DISTINCT FROM OLD.last_curation_run_id
       AND NEW.last_curated_at IS NOT DISTINCT FROM OLD.last_curated_at THEN
        RETURN NEW;
    END IF;
    IF NEW.last_curated_at IS NULL THEN
        NEW.last_curation_started_at := NULL;
        RETURN NEW;
    END IF;
    SELECT min((cycle.metadata ->> 'started_at')::timestamptz) INTO started
    FROM activity_log AS this
    JOIN activity_log AS cycle
      ON cycle.action = 'curation_cycle'
     AND cycle.tenant_id = this.tenant_id AND cycle.namespace = this.namespace
     AND cycle.run_id IN (this.run_id, this.metadata ->> 'root_run_id')
    WHERE this.action = 'curation_cycle' AND this.run_id = NEW.last_curation_run_id
      AND this.tenant_id = NEW.tenant_id AND this.namespace = NEW.namespace;
    -- No cycle row (set by hand, or an older job): the finish time is the best we know.
    NEW.last_curation_started_at := least(coalesce(started, NEW.last_curated_at), NEW.last_curated_at);
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER namespace_activity_curation_start
    BEFORE INSERT OR UPDATE ON namespace_activity
    FOR EACH ROW EXECUTE FUNCTION namespace_activity_curation_start();

-- "Has something to do": never curated, or an interaction after the last curation started.
-- Partial: a namespace where nothing happened (or that is disabled) is not in the index at all,
-- so a tick reads the changed namespaces only. The query must spell the predicate the same way.
CREATE INDEX IF NOT EXISTS namespace_activity_pending
    ON namespace_activity (tenant_id, namespace)
    WHERE curation_enabled
      AND (last_curation_started_at IS NULL OR last_interaction_at > last_curation_started_at);

-- The ceiling: namespaces whose last curation is older than it, oldest first.
CREATE INDEX IF NOT EXISTS namespace_activity_curated_at
    ON namespace_activity (last_curated_at) WHERE curation_enabled;

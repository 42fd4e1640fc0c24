-- Integrity, round two.

-- Step 2 re-points an archived node whose keeper is itself archived to its chain's end, looking
-- only at nodes written since its last pass (store/actions.repair_chains). Chains broken before
-- this column existed (or in a namespace never curated since) are looked for once in the whole
-- namespace; then this is set.
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS consolidate_chains_checked boolean NOT NULL DEFAULT false;

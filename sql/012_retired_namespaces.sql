-- `curation-pipeline namespaces remove`: a namespace retired from Dagster's partitions, its
-- memory kept. Discovery (the sensor, `namespaces sync|list`, `run --all`) and the schedule and
-- idle sensor leave it out until its memory is written again: any node of it whose last_txid
-- (stamped by the memory_nodes trigger on every write) is not visible in the snapshot taken at
-- the removal. retired_xmax is that snapshot's xmax: every transaction at or past it started
-- after the removal (a write of a transaction still running at the removal counts as before it).
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS retired_at timestamptz;
ALTER TABLE namespace_activity ADD COLUMN IF NOT EXISTS retired_xmax xid8;

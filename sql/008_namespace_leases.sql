-- The fencing token behind a namespace's lease (store/locking.py). The lease itself is a
-- session advisory lock; this row says who took it last. Every acquisition bumps `token`, and
-- every write transaction of a run first reads its namespace's row FOR SHARE and checks that
-- the token is still the one its run got and that the holder's lock is still held. A run whose
-- lease connection died therefore fails its next transaction instead of writing alongside the
-- run that took over, and the new holder's bump waits until a transaction that already passed
-- the check has ended.
CREATE TABLE IF NOT EXISTS namespace_leases (
    tenant_id     text NOT NULL,
    namespace     text NOT NULL,
    token         bigint NOT NULL,
    holder        text NOT NULL,     -- the run (or undo) that holds or last held the lease
    holder_pid    integer NOT NULL,  -- backend of the connection holding the advisory lock
    acquired_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, namespace)
);

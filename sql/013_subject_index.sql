-- Candidates by subject (step 2): an update written in other words than the fact it replaces
-- ("Scheduled a Zoom meeting with Professor Danielle on March 22 at 3 PM" / "The scheduled Zoom
-- meeting ... was moved to 4:30 PM") is often far apart in embedding space. Step 2 keeps here
-- what each node is about (core/subjects.subject_keys: names, codes, the nouns its values
-- measure or its subject names) and compares the nodes that share one, however far apart.
-- Derived data: rewritten by step 2 for the nodes it searches, never exported.
CREATE TABLE IF NOT EXISTS memory_subjects (
    node_id   uuid NOT NULL REFERENCES memory_nodes (id),
    tenant_id text NOT NULL,
    namespace text NOT NULL,
    subject   text NOT NULL,
    PRIMARY KEY (node_id, subject)
);
CREATE INDEX IF NOT EXISTS memory_subjects_ns ON memory_subjects (tenant_id, namespace, subject);

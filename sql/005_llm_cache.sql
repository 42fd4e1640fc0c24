-- Answers of the LLM, keyed by a hash of the exact request, so an identical request (same
-- model, instructions, memory texts, schema and limits) is never sent twice, across runs too:
-- a rejected answer stays rejected without paying for it again, and a real run right after a
-- preview (dry run) reuses the previewed answers. Rows carry their tenant and namespace so a
-- tenant's text is only ever stored, served and purged under that tenant.
CREATE TABLE IF NOT EXISTS llm_cache (
    tenant_id     text        NOT NULL,
    namespace     text        NOT NULL,
    request_hash  text        NOT NULL,  -- sha256 of the canonical JSON of the request
    model         text        NOT NULL,
    purpose       text        NOT NULL,  -- 'merge' | 'summary'
    response_text text        NOT NULL,  -- the raw output_text, judged again by the fact guard
    input_tokens  integer     NOT NULL DEFAULT 0,
    output_tokens integer     NOT NULL DEFAULT 0,
    run_id        text,                  -- the run that paid for it
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, namespace, request_hash)
);

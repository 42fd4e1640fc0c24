"""The LLM answer cache in Postgres (table llm_cache, sql/005_llm_cache.sql).

Each get/put uses its own short autocommit connection, outside the step's transaction: an answer
that was paid for stays cached even if the step later rolls back, and a dry run (whose changes
are all rolled back) still fills the cache, so the real run right after sends nothing again and
makes exactly the previewed changes. Entries are scoped to one tenant and namespace.
"""

from __future__ import annotations

from curation_pipeline.core.answer_cache import CachedAnswer
from curation_pipeline.store.database import open_connection


class PostgresAnswerCache:
    def __init__(self, database_url: str, tenant_id: str, namespace: str, run_id: str | None = None) -> None:
        self._url = database_url
        self._tenant_id = tenant_id
        self._namespace = namespace
        self._run_id = run_id

    def get(self, key: str) -> CachedAnswer | None:
        with open_connection(self._url, vector=False, autocommit=True) as conn:
            row = conn.execute(
                "SELECT response_text, model, purpose, input_tokens, output_tokens FROM llm_cache"
                " WHERE tenant_id = %s AND namespace = %s AND request_hash = %s",
                (self._tenant_id, self._namespace, key),
            ).fetchone()
        return CachedAnswer(*row) if row else None

    def put(self, key: str, answer: CachedAnswer) -> None:
        with open_connection(self._url, vector=False, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO llm_cache (tenant_id, namespace, request_hash, model, purpose,"
                " response_text, input_tokens, output_tokens, run_id)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (tenant_id, namespace, request_hash) DO NOTHING",
                (self._tenant_id, self._namespace, key, answer.model, answer.purpose, answer.text,
                 answer.input_tokens, answer.output_tokens, self._run_id),
            )

"""The Dagster resource that holds the LLM client of a run (steps 2 and 3).

Settings come from the environment (`llm_settings.py`); the launchpad may override `enabled`,
`model` and `base_url` for one run. The API key is deliberately not a config field: config is
shown in the Dagster UI and stored with the run, a key must be neither.

One `LLMClient` per run, created on first use, so the cycle's budget and circuit breaker span
both steps (the job runs its ops in one process). It is bound to the run's namespace: its answer
cache is scoped to that tenant and namespace, and a request never carries another namespace's
text because each step only loads its own partition.
"""

from __future__ import annotations

import os
from typing import Any

import dagster as dg
from pydantic import Field, PrivateAttr

from curation_pipeline.clients.llm import LLMClient, make_openai_client
from curation_pipeline.config.llm import LLMSettings, load_llm_settings
from curation_pipeline.service.step_run import StepRun
from curation_pipeline.store.llm_cache import PostgresAnswerCache


class LLMResource(dg.ConfigurableResource):
    """The LLM for merges (step 2) and summaries (step 3); off unless enabled."""

    enabled: bool | None = Field(None, description="use the LLM; null = CURATOR_LLM_ENABLED (default off)")
    model: str | None = Field(None, description="model (Azure: deployment); null = CURATOR_LLM_MODEL")
    base_url: str | None = Field(None, description="endpoint base URL; null = CURATOR_LLM_BASE_URL")

    _client: LLMClient | None = PrivateAttr(default=None)
    _bound_to: tuple[str, str, str] | None = PrivateAttr(default=None)
    _sdk: Any = PrivateAttr(default=None)

    def settings(self) -> LLMSettings:
        environ = dict(os.environ)
        overrides = {"CURATOR_LLM_ENABLED": None if self.enabled is None else str(self.enabled),
                     "CURATOR_LLM_MODEL": self.model, "CURATOR_LLM_BASE_URL": self.base_url}
        environ.update({name: value for name, value in overrides.items() if value is not None})
        return load_llm_settings(environ)

    def client_for(self, run: StepRun) -> LLMClient | None:
        """The run's client, or None when the LLM path is off (the steps then work offline)."""
        database_url, scope = run.session.url, run.scope
        settings = self.settings()
        if not settings.enabled:
            return None
        binding = (scope.run_id, scope.tenant_id, scope.namespace)
        if self._client is None or self._bound_to != binding:
            self._close()
            self._sdk = make_openai_client(settings)
            cache = PostgresAnswerCache(database_url, scope.tenant_id, scope.namespace, scope.run_id)
            self._client = LLMClient(self._sdk, settings, cache=cache)
            self._bound_to = binding
        return self._client

    def _close(self) -> None:
        if self._sdk is not None:
            self._sdk.close()
        self._sdk = self._client = self._bound_to = None

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self._close()

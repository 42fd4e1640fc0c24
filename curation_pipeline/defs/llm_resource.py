"""The Dagster resource that holds the LLM client of a run (steps 2 and 3).

Settings come from the environment (`config/llm.py`); the Definitions bind its non-secret choices
(`enabled`, `model`, `base_url`, `api`, `concurrency`) as the resource's config defaults when they
are built (`LLMResource.from_settings`), so the launchpad shows them, and a value changed there
wins for that run. The API key is deliberately not a config field: config is shown in the
Dagster UI and stored with the run, a key must be neither.

One `LLMClient` per run, created on first use, so the cycle's budget and circuit breaker span
both steps (the job runs its ops in one process). It is bound to the run's namespace: its answer
cache is scoped to that tenant and namespace, and a request never carries another namespace's
text because each step only loads its own partition.
"""

from __future__ import annotations

from typing import Any, Literal

import dagster as dg
from pydantic import Field, PrivateAttr

from curation_pipeline.clients.llm import LLMClient
from curation_pipeline.clients.openai_sdk import make_openai_client
from curation_pipeline.config.bounds import AtLeastOne
from curation_pipeline.config.llm import APIS, LLMSettings, load_llm_settings
from curation_pipeline.defs.resource_defaults import with_defaults
from curation_pipeline.service.step_run import StepRun
from curation_pipeline.store.llm_cache import PostgresAnswerCache

_DEFAULTS = LLMSettings.model_fields


class LLMResource(dg.ConfigurableResource):
    """The LLM for merges (step 2) and summaries (step 3); off unless enabled.

    The field defaults are the settings' static ones (nothing is read at import); the
    Definitions bind the environment's values (`from_settings`) as they are built."""

    enabled: bool = Field(_DEFAULTS["enabled"].default, description="use the LLM (CURATOR_LLM_ENABLED)")
    model: str = Field(_DEFAULTS["model"].default, description="model; on Azure the deployment (CURATOR_LLM_MODEL)")
    base_url: str = Field("", description="base URL of the API; empty: the OpenAI API (CURATOR_LLM_BASE_URL)")
    api: Literal[APIS] = Field(
        "responses", description="responses or chat (CURATOR_LLM_API; unset there: responses for the OpenAI "
        "API itself, chat for any other base URL and for Azure)")
    concurrency: AtLeastOne = Field(_DEFAULTS["concurrency"].default,
                                    description="requests in flight at once within a step (CURATOR_LLM_CONCURRENCY)")

    _client: LLMClient | None = PrivateAttr(default=None)
    _bound_to: tuple[str, str, str] | None = PrivateAttr(default=None)
    _sdk: Any = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: LLMSettings) -> LLMResource:
        """The resource with `settings`' non-secret choices as its config defaults (what the
        launchpad shows, and what a field the run's config does not set keeps)."""
        return with_defaults(cls, {"enabled": settings.enabled, "model": settings.model,
                                   "base_url": settings.base_url or "", "api": settings.api,
                                   "concurrency": settings.concurrency})

    def settings(self) -> LLMSettings:
        """The environment's settings (the key, timeouts and budgets) with this resource's choices:
        the values bound when the Definitions were built, or the ones typed into the launchpad."""
        return load_llm_settings().with_changes(
            enabled=self.enabled, model=self.model, base_url=self.base_url or None, api=self.api,
            concurrency=self.concurrency)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # The run's settings (the environment's with the launchpad's changes) are checked when
        # the run's resources are set up, before its first step: a bad value typed into the
        # launchpad fails the run before anything is written.
        self.settings()

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

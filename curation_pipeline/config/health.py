"""What the health checks of a namespace accept (core/health_checks.py; docs/operations.md)."""

from __future__ import annotations

from pydantic import Field

from curation_pipeline.config.bounds import Share
from curation_pipeline.config.environment import EnvironmentSettings


class HealthSettings(EnvironmentSettings):
    # With the LLM on, a cycle whose fact guard accepts fewer of the LLM's answers than this
    # fails the `llm_acceptance_above_floor` check: the model or its prompt needs a look. 0 turns
    # the check off, 1 asks for every answer to pass the fact guard.
    llm_min_acceptance_rate: Share = Field(0.5, validation_alias="CURATOR_LLM_MIN_ACCEPTANCE_RATE")

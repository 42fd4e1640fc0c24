"""The pipeline's own settings in one object: where the store lives (store.py), the steps'
thresholds and caps (steps.py), the triggers (triggers.py), what the health checks accept
(health.py) and how runs are launched and kept (runs.py).

The CLI and the resources pass this one object around; code that needs only one concern takes
that concern's model, which a `Settings` is. The LLM (llm.py) and the embedder (embedder.py) are
read apart: they configure outside services, and the launchpad may override them per run.
"""

from __future__ import annotations

from collections.abc import Mapping

from curation_pipeline.config.embedder import EmbedderSettings
from curation_pipeline.config.environment import SettingsError
from curation_pipeline.config.health import HealthSettings
from curation_pipeline.config.llm import LLMSettings
from curation_pipeline.config.runs import RunSettings
from curation_pipeline.config.steps import StepSettings
from curation_pipeline.config.store import StoreSettings
from curation_pipeline.config.triggers import TriggerSettings


class Settings(StoreSettings, StepSettings, TriggerSettings, HealthSettings, RunSettings):
    """See the module docstring."""


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from the environment (or a mapping); SettingsError naming a bad variable."""
    return Settings.from_environment(environ)


def check_all_settings(environ: Mapping[str, str] | None = None) -> None:
    """Every setting the pipeline reads (its own, the LLM's and the embedder's) is valid, else one
    SettingsError naming every bad variable: what a command checks before it launches a run,
    and the code location when it loads, so nothing runs with a value found bad later."""
    problems = []
    for model in (Settings, LLMSettings, EmbedderSettings):
        try:
            model.from_environment(environ)
        except SettingsError as error:
            problems.append(str(error))
    if problems:
        # A variable two of them read (CURATION_EMBEDDING_DIM) is named once.
        raise SettingsError("\n".join(dict.fromkeys(line for problem in problems for line in problem.splitlines())))


def environment_variables() -> frozenset[str]:
    """Every environment variable the pipeline's settings read (deployment files may set only these)."""
    return frozenset().union(*(model.variables() for model in (Settings, LLMSettings, EmbedderSettings)))


__all__ = ["Settings", "SettingsError", "check_all_settings", "environment_variables", "load_settings"]

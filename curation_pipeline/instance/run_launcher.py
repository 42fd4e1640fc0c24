"""The run launcher dagster.yaml names: CURATION_RUN_LAUNCHER picks the one Dagster builds.

- `default` (the default): Dagster's DefaultRunLauncher, a new process of the code server per
  run, on the machine of whoever launches it (the daemon, the UI, `curation-pipeline run`).
- `celery`: CurationCeleryRunLauncher (celery_launcher.py), each run a Celery task that a
  `curation-pipeline worker`, on any machine, executes in a warm process.

One instance file for both, chosen by the environment like every other setting, so a compose
file or a chart switches launchers without shipping another dagster.yaml. The choice is read
when a process builds its instance's launcher (Dagster does that once, on first use).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster._core.launcher import DefaultRunLauncher, RunLauncher
from dagster._serdes import ConfigurableClass, ConfigurableClassData

from curation_pipeline.config.runs import RunSettings
from curation_pipeline.config.store import StoreSettings


class LauncherSettings(RunSettings, StoreSettings):
    """What choosing and building a launcher reads: the launcher, the broker, CURATION_HOME."""


class CurationRunLauncher(RunLauncher, ConfigurableClass):
    """A factory: Dagster asks it for the launcher and gets the configured one (never itself)."""

    @classmethod
    def config_type(cls) -> dict:
        return {}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]) -> RunLauncher:
        return build_run_launcher(LauncherSettings.from_environment(), inst_data)


def build_run_launcher(settings: LauncherSettings, inst_data: ConfigurableClassData | None = None) -> RunLauncher:
    if settings.run_launcher == "celery":
        try:
            from curation_pipeline.instance.celery_launcher import CurationCeleryRunLauncher
        except ImportError as error:
            raise ImportError(
                "CURATION_RUN_LAUNCHER=celery needs the celery extra: pip install 'curation-pipeline[celery]' "
                f"({error})"
            ) from None
        return CurationCeleryRunLauncher(settings, inst_data=inst_data)
    return DefaultRunLauncher(inst_data=inst_data)

"""The one Definitions object of the code location (workspace.yaml loads this module)."""

from __future__ import annotations

import warnings

import dagster as dg

# Dagster 1.13 warns about its own internal use of the beta `owners` parameter whenever it binds
# resources to a sensor; nothing of ours sets owners, and the warning lands in every CLI output.
warnings.filterwarnings("ignore", message=r"Parameter `owners` of initializer `SensorDefinition")

from curation_pipeline.config.settings import check_all_settings

# Every setting is checked as the code location loads, the LLM's and the embedder's included,
# before the modules below read theirs: a bad value stops the location from loading with every
# bad variable named (the UI shows it; the schedule, the sensors and the run processes launch
# nothing) instead of failing runs halfway.
check_all_settings()

from curation_pipeline.config.triggers import TriggerSettings
from curation_pipeline.defs.job import curate_namespace, memory_namespace, preview_namespace
from curation_pipeline.defs.llm_resource import LLMResource
from curation_pipeline.defs.resources import EmbedderResource, MemoryStore
from curation_pipeline.defs.run_retention import prune_run_history_job, run_retention_schedule
from curation_pipeline.defs.schedules import build_curation_schedule
from curation_pipeline.defs.sensors import build_discovery_sensor, build_idle_sensor
from curation_pipeline.defs.undo_job import undo_curation_run

# Read once at load: the schedule's cron comes from CURATOR_INTERVAL_SECS, and an interval no
# cron can express stops the code location from loading, with the variable named.
_trigger_settings = TriggerSettings.from_environment()

defs = dg.Definitions(
    assets=[memory_namespace],
    jobs=[curate_namespace, preview_namespace, undo_curation_run, prune_run_history_job],
    schedules=[build_curation_schedule(_trigger_settings), run_retention_schedule],
    sensors=[build_idle_sensor(_trigger_settings), build_discovery_sensor(_trigger_settings)],
    resources={"memory_store": MemoryStore(), "embedder": EmbedderResource(), "llm": LLMResource()},
)

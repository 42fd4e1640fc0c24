"""When a namespace gets curated without anyone asking: the schedule and the sensors
(defs/schedules.py, defs/sensors.py; docs/triggers.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from curation_pipeline.config.bounds import AtLeastOne, Count
from curation_pipeline.config.environment import EnvironmentSettings


class TriggerSettings(EnvironmentSettings):
    # The global off switch; per namespace: namespace_activity.
    curation_enabled: bool = Field(True, validation_alias="CURATOR_ENABLED")
    # The schedule's period. 60 s is cron's resolution; core/cron.py refuses what no cron can
    # express at a constant pace when the schedule is built.
    interval_secs: Annotated[int, Field(ge=60)] = Field(1800, validation_alias="CURATOR_INTERVAL_SECS")
    idle_threshold_secs: Count = Field(600, validation_alias="IDLE_THRESHOLD_SECS")  # no interaction for this long = idle
    # Anti-thrash: no idle run within this long of the last curation.
    idle_floor_secs: Count = Field(900, validation_alias="CURATOR_IDLE_FLOOR_SECS")
    # Curate at least this often even if never idle; 0 = no ceiling.
    ceiling_secs: Count = Field(21600, validation_alias="CURATOR_CEILING_SECS")
    # Keeps an idle-sensor tick far below Dagster's 60 s.
    idle_max_runs_per_tick: AtLeastOne = Field(50, validation_alias="CURATOR_IDLE_MAX_RUNS_PER_TICK")
    # Dagster spends ~10 ms per run request: a first tick over thousands of never-curated
    # namespaces must stay below its 60 s limit too; the rest come at the next tick.
    schedule_max_runs_per_tick: AtLeastOne = Field(1000, validation_alias="CURATOR_SCHEDULE_MAX_RUNS_PER_TICK")
    # How often the idle and discovery sensors are evaluated.
    sensor_interval_secs: AtLeastOne = Field(30, validation_alias="CURATOR_SENSOR_INTERVAL_SECS")

"""The code location: `defs` builds its one Definitions object (workspace.yaml loads this module).

Importing this module reads no environment. The settings are read when the definitions are built
(`defs()`, which Dagster calls as the code location loads, and `load_defs()` in code and tests):
every setting is checked there, and the values in force are bound as the jobs' default config and
the resources' config, so the launchpad shows them and a run process, which builds the
definitions itself, reads them when it starts.
"""

from __future__ import annotations

import warnings

import dagster as dg

# Dagster 1.13 warns about its own internal use of the beta `owners` parameter whenever it binds
# resources to a sensor; nothing of ours sets owners, and the warning lands in every CLI output.
warnings.filterwarnings("ignore", message=r"Parameter `owners` of initializer `SensorDefinition")

from curation_pipeline.config.embedder import load_embedder_settings
from curation_pipeline.config.llm import load_llm_settings
from curation_pipeline.config.settings import check_all_settings, load_settings
from curation_pipeline.defs.job import build_cycle, build_jobs, build_memory_asset
from curation_pipeline.defs.llm_resource import LLMResource
from curation_pipeline.defs.resources import EmbedderResource, MemoryStore
from curation_pipeline.defs.run_retention import prune_run_history_job, run_retention_schedule
from curation_pipeline.defs.schedules import build_curation_schedule
from curation_pipeline.defs.sensors import build_discovery_sensor, build_idle_sensor
from curation_pipeline.defs.undo_job import undo_curation_run


def build_definitions() -> dg.Definitions:
    """The Definitions with the settings of the environment as it is now; SettingsError naming
    every bad variable."""
    # Every setting first, the LLM's and the embedder's included: a bad value stops the code
    # location from loading with every bad variable named (the UI shows it; the schedule, the
    # sensors and the run processes launch nothing) instead of failing runs halfway. The
    # schedule's cron comes from CURATOR_INTERVAL_SECS: an interval no cron can express stops it
    # too, with the variable named.
    check_all_settings()
    settings = load_settings()
    cycle = build_cycle(settings)
    curate_namespace, preview_namespace = build_jobs(settings, cycle)
    return dg.Definitions(
        assets=[build_memory_asset(cycle)],
        jobs=[curate_namespace, preview_namespace, undo_curation_run, prune_run_history_job],
        schedules=[build_curation_schedule(settings), run_retention_schedule],
        sensors=[build_idle_sensor(settings), build_discovery_sensor(settings)],
        # Also the executor of the implicit asset job that the UI's Materialize and asset
        # backfills launch: one process per run, like curate_namespace, so its steps share the
        # run's one namespace lease and start in milliseconds, not a process each (defs/job.py).
        executor=dg.in_process_executor,
        resources={
            "memory_store": MemoryStore(),
            "embedder": EmbedderResource.from_settings(load_embedder_settings()),
            "llm": LLMResource.from_settings(load_llm_settings()),
        },
    )


@dg.definitions
def defs() -> dg.Definitions:
    """What Dagster loads (workspace.yaml, `dagster api grpc -m ...`, a run worker)."""
    return build_definitions()


# The Definitions built now, from the environment as it is now (code, tests, benchmarks).
load_defs = build_definitions

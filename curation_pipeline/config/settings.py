"""Every threshold, cap and location the pipeline uses, with environment-variable overrides.

The defaults are the reference curator's numbers (docs/architecture.md lists the steps). Settings are read
once from the environment; Dagster op config (see ``config.py``) starts from them, so an operator
can override a value for one run in the launchpad without touching the environment.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs


class SettingsError(ValueError):
    """A setting has a value the pipeline cannot use; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    # Where things live.
    database_url: str | None = None
    curation_home: Path = Path(platformdirs.user_data_dir("curation-pipeline"))
    embedding_dim: int = 384  # the vector column's width; the embedder (embedder_settings.py) must match
    # Step 1: reclassify_stale.
    reclassify_min_epoch_lag: int = 100
    reclassify_cap: int = 50
    # Step 2: consolidate_duplicates.
    similarity_threshold: float = 0.92
    consolidate_cap: int = 20
    merge_max_chars: int = 2000
    # At most this share of a namespace's active nodes is archived in one cycle (at least one),
    # so a bad threshold can't archive half a namespace at once.
    max_archive_fraction: float = 0.1
    # Incremental step 2: up to this many changed nodes are compared in the database (k x n
    # distances there beat loading n vectors here below roughly 100; benchmarks/curation_cost.py).
    in_database_search_max_changed: int = 100
    # Step 3: summarize_verbose.
    verbose_min_chars: int = 500
    verbose_recall_below: int = 3
    summarize_cap: int = 30
    summary_chars: int = 200
    # Step 4: revectorize.
    embed_batch_size: int = 256
    # Nodes whose vector came from another model than the configured one are re-embedded, at
    # most this many per cycle: a model switch is a migration spread over cycles, not one bill.
    reembed_cap: int = 1000
    # Step 5: mark_stale_confidence.
    stale_after_days: int = 30
    # Step 6: sync_graph.
    graph_sync_cap: int = 100
    # Which graph the sync writes: "postgres" (tables), "age" (tables + an Apache AGE graph) or
    # "auto" (AGE when the `age` extension is installed in the store's database).
    graph_backend: str = "auto"
    # Step 6b: associate_concepts. Nodes at least this similar (but not similar enough to merge)
    # are linked by a `shares_concept_with` edge; never with the lexical embedder.
    association_threshold: float = 0.80
    association_cap: int = 200
    # Triggers (schedules.py, sensors.py): when a namespace gets curated without anyone asking.
    curation_enabled: bool = True  # the global off switch; per namespace: namespace_activity
    interval_secs: int = 1800  # the schedule's period; must be expressible as a cron
    idle_threshold_secs: int = 600  # no interaction for this long = idle
    idle_floor_secs: int = 900  # anti-thrash: no idle run within this long of the last curation
    ceiling_secs: int = 21600  # curate at least this often even if never idle; 0 = no ceiling
    idle_max_runs_per_tick: int = 50  # keeps an idle-sensor tick far below Dagster's 60 s
    # Dagster spends ~10 ms per run request: a first tick over thousands of never-curated
    # namespaces must stay below its 60 s limit too; the rest come at the next tick.
    schedule_max_runs_per_tick: int = 1000
    sensor_interval_secs: int = 30  # how often the idle and discovery sensors are evaluated

    @property
    def dagster_home(self) -> Path:
        return Path(os.environ.get("DAGSTER_HOME") or self.curation_home / "dagster_home")

    @property
    def pgdata_dir(self) -> Path:
        return self.curation_home / "pgdata"


# Environment variable -> field. Names follow the reference curator where it has one.
ENV_VARS: dict[str, str] = {
    "DATABASE_URL": "database_url",
    "CURATION_HOME": "curation_home",
    "CURATION_EMBEDDING_DIM": "embedding_dim",
    "CURATOR_RECLASSIFY_MIN_EPOCH_LAG": "reclassify_min_epoch_lag",
    "CURATOR_RECLASSIFY_CAP": "reclassify_cap",
    "CURATOR_SIMILARITY_THRESHOLD": "similarity_threshold",
    "CURATOR_CONSOLIDATE_CAP": "consolidate_cap",
    "CURATOR_MERGE_MAX_CHARS": "merge_max_chars",
    "CURATOR_MAX_ARCHIVE_FRACTION": "max_archive_fraction",
    "CURATOR_IN_DATABASE_SEARCH_MAX_CHANGED": "in_database_search_max_changed",
    "CURATOR_VERBOSE_MIN_CHARS": "verbose_min_chars",
    "CURATOR_VERBOSE_RECALL_BELOW": "verbose_recall_below",
    "CURATOR_SUMMARIZE_CAP": "summarize_cap",
    "CURATOR_SUMMARY_CHARS": "summary_chars",
    "CURATOR_EMBED_BATCH_SIZE": "embed_batch_size",
    "CURATOR_REEMBED_CAP": "reembed_cap",
    "CURATOR_STALE_AFTER_DAYS": "stale_after_days",
    "CURATOR_GRAPH_SYNC_CAP": "graph_sync_cap",
    "CURATION_GRAPH_BACKEND": "graph_backend",
    "CURATOR_ASSOCIATION_THRESHOLD": "association_threshold",
    "CURATOR_ASSOCIATION_CAP": "association_cap",
    "CURATOR_ENABLED": "curation_enabled",
    "CURATOR_INTERVAL_SECS": "interval_secs",
    "IDLE_THRESHOLD_SECS": "idle_threshold_secs",
    "CURATOR_IDLE_FLOOR_SECS": "idle_floor_secs",
    "CURATOR_CEILING_SECS": "ceiling_secs",
    "CURATOR_IDLE_MAX_RUNS_PER_TICK": "idle_max_runs_per_tick",
    "CURATOR_SCHEDULE_MAX_RUNS_PER_TICK": "schedule_max_runs_per_tick",
    "CURATOR_SENSOR_INTERVAL_SECS": "sensor_interval_secs",
}

# Lower bounds: a cap of 0 is allowed (turns a step off), a threshold must stay in (0, 1].
_MINIMUMS = {
    "embedding_dim": 1,
    "merge_max_chars": 1,
    "verbose_min_chars": 0,
    "summary_chars": 2,
    "embed_batch_size": 1,
    "stale_after_days": 0,
    "interval_secs": 60,  # cron's resolution; cron.py rejects what no cron can express
    "idle_max_runs_per_tick": 1,
    "schedule_max_runs_per_tick": 1,
    "sensor_interval_secs": 1,
}

GRAPH_BACKENDS = ("auto", "postgres", "age")

_BOOLEANS = {"true": True, "1": True, "yes": True, "on": True,
             "false": False, "0": False, "no": False, "off": False}


def parse_bool(raw: str) -> bool:
    """An environment flag; ValueError (for the caller to name the variable) otherwise."""
    if raw.lower() not in _BOOLEANS:
        raise ValueError("must be true or false")
    return _BOOLEANS[raw.lower()]


def parse_int(raw: str, minimum: int) -> int:
    value = int(raw)
    if value < minimum:
        raise ValueError(f"must be >= {minimum}")
    return value


def parse_seconds(raw: str, *, positive: bool = False) -> float:
    """A finite, non-negative number (of seconds), strictly positive if `positive`."""
    value = float(raw)
    if not value >= 0 or value == float("inf"):
        raise ValueError("must be a finite number >= 0")
    if positive and value == 0:
        raise ValueError("must be > 0")
    return value


def field_kind(field: dataclasses.Field) -> str:
    return field.type if isinstance(field.type, str) else field.type.__name__


def choice(allowed: tuple[str, ...]) -> Callable[[str], str]:
    """A converter accepting one of `allowed`, case-insensitively."""
    def convert(raw: str) -> str:
        if raw.lower() not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return raw.lower()
    return convert


def read_service_settings(
    environ: Mapping[str, str],
    settings_class: type,
    env_vars: Mapping[str, tuple[str, ...]],
    *,
    minimums: Mapping[str, int],
    converters: Mapping[str, Callable[[str], object]],
) -> dict:
    """Field values of an outside service's settings (LLM, embedder) from the environment.

    Each field has variables, the first set one wins (aliases); an empty variable counts as
    unset. Values are converted by the field's type (`converters` by field name first); a bad
    one is a SettingsError naming the variable, and an `api_key` is never shown in it.
    """
    fields = {field.name: field for field in dataclasses.fields(settings_class)}
    values = {}
    for name, variables in env_vars.items():
        variable = next((v for v in variables if environ.get(v, "").strip()), None)
        if variable is None:
            continue
        raw, kind = environ[variable].strip(), field_kind(fields[name])
        try:
            if name in converters:
                values[name] = converters[name](raw)
            elif kind.startswith("bool"):
                values[name] = parse_bool(raw)
            elif kind == "int":
                values[name] = parse_int(raw, minimums.get(name, 0))
            elif kind == "float":
                values[name] = parse_seconds(raw, positive=name == "timeout_secs")
            else:
                values[name] = raw
        except ValueError as error:
            shown = "***" if name == "api_key" else repr(raw)
            raise SettingsError(f"environment variable {variable}={shown} is invalid: {error}") from None
    return values


def _convert(variable: str, field: dataclasses.Field, raw: str):
    kind = field_kind(field)
    try:
        if kind == "int":
            return parse_int(raw, _MINIMUMS.get(field.name, 0))
        if kind == "bool":
            return parse_bool(raw)
        if kind == "float":
            value = float(raw)
            if not 0.0 < value <= 1.0:
                raise ValueError("must be a number in (0, 1]")
            return value
        if kind == "Path":
            return Path(raw).expanduser()
        if field.name == "graph_backend":
            if raw.lower() not in GRAPH_BACKENDS:
                raise ValueError(f"must be one of {', '.join(GRAPH_BACKENDS)}")
            return raw.lower()
        return raw
    except ValueError as error:
        raise SettingsError(f"environment variable {variable}={raw!r} is invalid: {error}") from None


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build Settings from the environment (or a given mapping); empty variables count as unset."""
    environ = os.environ if environ is None else environ
    fields = {field.name: field for field in dataclasses.fields(Settings)}
    overrides = {}
    for variable, name in ENV_VARS.items():
        raw = environ.get(variable, "").strip()
        if raw:
            overrides[name] = _convert(variable, fields[name], raw)
    return Settings(**overrides)

"""DAGSTER_HOME: a persistent Dagster instance whose storage is a `dagster` database on the
memory store's server, so CLI runs, UI runs and schedules share one history."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import dagster as dg

from curation_pipeline.config.store import StoreSettings
from curation_pipeline.service.memory_store import dagster_storage_url, store_url

STORAGE_URL_VARIABLE = "CURATION_DAGSTER_STORAGE_URL"
MANAGED_MARKER = "# Managed by curation-pipeline"


def prepare_dagster_home(settings: StoreSettings, *, keep_storage_url: bool = False) -> Path:
    """Create DAGSTER_HOME with our dagster.yaml and point this process (and the run processes
    it starts, which inherit the environment) at it; returns the directory.

    The storage is the `dagster` database of the memory store's server, unless `keep_storage_url`
    and CURATION_DAGSTER_STORAGE_URL is set: a worker on another machine is told where the
    fleet's storage is, and must not derive it from its own settings."""
    app_url = store_url(settings)
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    _install_instance_config(home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    if not (keep_storage_url and os.environ.get(STORAGE_URL_VARIABLE, "").strip()):
        os.environ[STORAGE_URL_VARIABLE] = dagster_storage_url(app_url, create_tables=_create_dagster_tables)
    # Run workers must find the same memory store, even when it is the embedded default.
    os.environ.setdefault("CURATION_HOME", str(settings.curation_home))
    return home


def _create_dagster_tables(storage_url: str) -> None:
    """Dagster's storages create their tables when the instance first opens on an empty database."""
    os.environ[STORAGE_URL_VARIABLE] = storage_url
    with dg.DagsterInstance.get():
        pass


def _install_instance_config(target: Path) -> None:
    """Write our dagster.yaml, unless the file there is someone's own (no marker line)."""
    text = (resources.files("curation_pipeline") / "instance" / "dagster.yaml").read_text(encoding="utf-8")
    if target.exists():
        current = target.read_text(encoding="utf-8")
        if not current.startswith(MANAGED_MARKER) or current == text:
            return
    # Written aside and renamed into place: a command started at the same moment on a fresh
    # home reads the old file or the new one, never a half-written one.
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, target)

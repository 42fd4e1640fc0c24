"""DAGSTER_HOME: a persistent Dagster instance whose storage is a `dagster` database on the
memory store's server, so CLI runs, UI runs and schedules share one history."""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

from curation_pipeline.config.settings import Settings
from curation_pipeline.store.database import dagster_storage_url, ensure_database

STORAGE_URL_VARIABLE = "CURATION_DAGSTER_STORAGE_URL"
MANAGED_MARKER = "# Managed by curation-pipeline"


def prepare_dagster_home(settings: Settings) -> Path:
    """Create DAGSTER_HOME with our dagster.yaml and point this process (and the run processes
    it starts, which inherit the environment) at it; returns the directory."""
    app_url = ensure_database(settings)
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    _install_instance_config(home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ[STORAGE_URL_VARIABLE] = dagster_storage_url(app_url)
    # Run workers must find the same memory store, even when it is the embedded default.
    os.environ.setdefault("CURATION_HOME", str(settings.curation_home))
    return home


def _install_instance_config(target: Path) -> None:
    """Write our dagster.yaml, unless the file there is someone's own (no marker line)."""
    template = resources.files("curation_pipeline") / "instance" / "dagster.yaml"
    if target.exists():
        current = target.read_text(encoding="utf-8")
        if not current.startswith(MANAGED_MARKER) or current == template.read_text(encoding="utf-8"):
            return
    with resources.as_file(template) as source:
        shutil.copyfile(source, target)

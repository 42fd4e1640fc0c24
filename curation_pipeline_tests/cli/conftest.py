"""Fixtures of the command-line tests."""

from __future__ import annotations

import pytest

from curation_pipeline.cli.dagster_home import STORAGE_URL_VARIABLE


@pytest.fixture
def dagster_home(tmp_path, monkeypatch, curation_home):
    """A persistent, Postgres-backed DAGSTER_HOME like the CLI's (restored afterwards). Its
    storage is the store server's `dagster` database, shared by the session's tests: a test
    that lists runs uses namespaces of its own."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv(STORAGE_URL_VARIABLE, "")
    return tmp_path / "dagster_home"

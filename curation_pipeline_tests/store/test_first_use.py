"""First use: several commands started together on a fresh CURATION_HOME all succeed, though
each of them starts the embedded server, migrates the store and creates Dagster's database."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # runs the CLI in subprocesses on a fresh home

PARTITIONS = ("acme:one", "acme:two", "globex:three")


def test_runs_started_together_on_a_fresh_home_all_succeed(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CURATION_HOME": str(tmp_path / "home")}
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "curation_pipeline.cli.main", "run", "--partition", key, "--create"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for key in PARTITIONS
    ]
    outputs = []
    try:
        for process in processes:
            outputs.append(process.communicate(timeout=600))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    for key, process, (stdout, stderr) in zip(PARTITIONS, processes, outputs):
        assert process.returncode == 0, f"{key}:\n{stderr[-3000:]}"
        row = next(line.split() for line in stdout.splitlines() if line.startswith(key))
        assert row[1:3] == ["SUCCESS", "success"], stdout

"""`curation-pipeline worker` and the launcher choice: what a bad setting says, and which
launcher the instance builds. Real commands in real processes where a process is the point."""

from __future__ import annotations

import os
import subprocess
import sys

import dagster as dg
import pytest

from curation_pipeline.cli.main import main
from curation_pipeline.instance.run_launcher import LauncherSettings, build_run_launcher

pytestmark = pytest.mark.slow


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "curation_pipeline.cli.main", *args],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)


def test_an_unreachable_broker_stops_the_worker_with_one_line_naming_it_and_hiding_its_password(tmp_path):
    done = _cli("worker", CURATION_HOME=str(tmp_path / "home"), CURATION_RUN_LAUNCHER="celery",
                CURATION_BROKER_URL="redis://curator:s3cret@127.0.0.1:9/0")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: cannot reach the broker at CURATION_BROKER_URL=redis://curator:***@127.0.0.1:9/0")
    assert "s3cret" not in done.stderr + done.stdout
    assert not (tmp_path / "home").exists()  # it stopped before touching anything


@pytest.mark.parametrize(("env", "named"), [
    ({"CURATION_RUN_LAUNCHER": "k8s"}, "CURATION_RUN_LAUNCHER='k8s' is invalid: must be one of default, celery"),
    ({"CURATION_BROKER_URL": "http://curator:s3cret@127.0.0.1/"}, "CURATION_BROKER_URL=*** is invalid: must be a redis://"),
    ({"CURATION_WORKER_CONCURRENCY": "0"}, "CURATION_WORKER_CONCURRENCY='0' is invalid"),
    ({"CURATION_CELERY_QUEUE": "two words"}, "CURATION_CELERY_QUEUE='two words' is invalid"),
    ({"CURATION_RUN_RETENTION_DAYS": "-1"}, "CURATION_RUN_RETENTION_DAYS='-1' is invalid"),
])
def test_a_bad_setting_is_one_line_naming_it(monkeypatch, capsys, env, named):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["worker"]) == 2
    err = capsys.readouterr().err
    [line] = err.strip().splitlines()
    assert line.startswith(f"error: environment variable {named}")
    assert "s3cret" not in err


@pytest.mark.parametrize("value", ["0", "many"])
def test_a_bad_concurrency_names_the_option(capsys, value):
    with pytest.raises(SystemExit) as stopped:
        main(["worker", "--concurrency", value])
    assert stopped.value.code == 2
    assert "argument --concurrency: " in capsys.readouterr().err


def test_ui_workers_refuses_a_launcher_set_to_default(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("CURATION_RUN_LAUNCHER", "default")
    monkeypatch.setenv("CURATION_HOME", str(tmp_path / "home"))
    assert main(["ui", "--workers", "2"]) == 2
    assert "--workers runs on Celery workers, but CURATION_RUN_LAUNCHER=default" in capsys.readouterr().err


def test_the_instance_builds_the_launcher_the_setting_names(tmp_path):
    home = {"CURATION_HOME": str(tmp_path / "home")}
    assert isinstance(build_run_launcher(LauncherSettings.from_environment(home)), dg.DefaultRunLauncher)
    celery = build_run_launcher(LauncherSettings.from_environment(
        {**home, "CURATION_RUN_LAUNCHER": "celery", "CURATION_CELERY_QUEUE": "curation"}))
    # Unset CURATION_BROKER_URL: the embedded broker in CURATION_HOME, for runs and results.
    assert celery.broker == celery.backend == f"redis+socket://{tmp_path / 'home' / 'broker' / 'valkey.sock'}"
    assert celery.default_queue == "curation"
    assert [queue.name for queue in celery.celery.conf.task_queues] == ["curation"]
    assert celery.celery.conf.worker_disable_prefetch is True and celery.celery.conf.task_acks_late is False


def test_run_on_celery_without_a_worker_says_so_before_launching_anything(tmp_path):
    done = _cli("run", "--partition", "acme:support", CURATION_HOME=str(tmp_path / "home"),
                CURATION_RUN_LAUNCHER="celery")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: no Celery worker takes runs from the queue 'dagster' (CURATION_CELERY_QUEUE)")
    assert "start one with `curation-pipeline worker`" in line
    assert not (tmp_path / "home" / "dagster_home").exists()  # nothing launched, nothing prepared


@pytest.mark.parametrize("value", ["", "two words"])
def test_a_bad_queue_name_names_the_option(capsys, value):
    with pytest.raises(SystemExit) as stopped:
        main(["worker", "--queue", value])
    assert stopped.value.code == 2
    assert "argument --queue: " in capsys.readouterr().err

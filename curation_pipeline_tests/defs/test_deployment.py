"""docker/ and the instance files: what can be checked without a Docker engine or a cluster.

The files parse, every path, command, module and environment variable they name exists, the
settings they encode are the ones the project relies on (Postgres storage, one run per partition,
the K8s run launcher), and the image's entry points run from a plain (non-editable) install.
Nothing here builds an image or starts a container: that was not possible on this machine.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from curation_pipeline.cli.dagster_home import STORAGE_URL_VARIABLE
from curation_pipeline.cli.launcher import DEFINITIONS_MODULE, LOCATION_NAME
from curation_pipeline.config.settings import environment_variables, load_settings

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
INSTANCE_YAML = ROOT / "curation_pipeline" / "instance" / "dagster.yaml"
BIN = Path(sys.executable).parent
KNOWN_VARIABLES = environment_variables() | {STORAGE_URL_VARIABLE}


def load(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DOCKER / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [tuple(line.split(None, 1)) for line in lines]


def test_the_instance_config_stores_in_postgres_and_queues_one_run_per_partition():
    config = load(ROOT / "curation_pipeline" / "instance" / "dagster.yaml")
    assert config["storage"]["postgres"]["postgres_url"] == {"env": STORAGE_URL_VARIABLE}
    coordinator = config["run_coordinator"]
    assert coordinator["class"] == "QueuedRunCoordinator"
    assert coordinator["config"]["max_concurrent_runs"] >= 1  # the global cap
    assert {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1} in (
        coordinator["config"]["tag_concurrency_limits"]
    )
    assert config["run_retries"]["enabled"] is True and config["telemetry"]["enabled"] is False
    workspace = load(ROOT / "curation_pipeline" / "instance" / "workspace.yaml")
    assert workspace["load_from"] == [
        {"python_module": {"module_name": DEFINITIONS_MODULE, "location_name": LOCATION_NAME}}
    ]


def test_the_dockerfile_copies_paths_that_exist_and_serves_the_code_location():
    instructions = dockerfile_instructions()
    assert instructions[0][0] == "FROM"
    for keyword, argument in instructions:
        assert keyword in {"FROM", "ENV", "WORKDIR", "COPY", "RUN", "ARG", "USER", "EXPOSE", "CMD"}, keyword
        if keyword == "COPY":
            *sources, _ = argument.split()
            for source in sources:
                assert (ROOT / source).exists(), f"Dockerfile copies {source}, which does not exist"
    [cmd] = [yaml.safe_load(argument) for keyword, argument in instructions if keyword == "CMD"]
    compose = load(DOCKER / "compose.yaml")
    assert cmd == compose["services"]["code"]["command"]
    assert cmd[cmd.index("-m") + 1] == DEFINITIONS_MODULE
    assert cmd[cmd.index("--location-name") + 1] == LOCATION_NAME


def test_the_compose_file_has_every_service_and_names_only_real_settings():
    compose = load(DOCKER / "compose.yaml")
    services = compose["services"]
    assert set(services) == {"postgres", "broker", "init-db", "code", "webserver", "daemon", "worker"}
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")
    environment = compose["x-curation-env"]
    assert set(environment) <= KNOWN_VARIABLES, set(environment) - KNOWN_VARIABLES
    assert environment[STORAGE_URL_VARIABLE].startswith("postgresql+psycopg2://")
    assert environment[STORAGE_URL_VARIABLE].endswith("/dagster")
    workspace = load(DOCKER / "workspace.yaml")
    [server] = [entry["grpc_server"] for entry in workspace["load_from"]]
    assert server["host"] == "code" and server["location_name"] == LOCATION_NAME
    assert str(server["port"]) in services["code"]["command"]
    for name in ("webserver", "daemon"):
        command = services[name]["command"]
        assert command[command.index("-w") + 1] == "/opt/dagster/workspace.yaml"
        assert services[name]["environment"] == environment
    # Runs go through the broker to the workers, which `--scale worker=N` multiplies: nothing in
    # the worker's service may exist once only (a container name, a published port).
    assert environment["CURATION_RUN_LAUNCHER"] == "celery"
    assert load_settings(environment).broker_url.get_secret_value().startswith("redis://broker:")
    worker = services["worker"]
    assert worker["command"] == ["curation-pipeline", "worker"] and worker["environment"] == environment
    assert not {"container_name", "ports", "hostname"} & set(worker)
    assert "--appendonly" in services["broker"]["command"]


def _help_text(command: list[str]) -> str:
    executable = BIN / command[0]
    assert executable.exists(), f"{command[0]} is not installed"
    done = subprocess.run([str(executable), *command[1:], "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_compose_command_exists_with_the_options_it_uses():
    services = load(DOCKER / "compose.yaml")["services"]
    for name in ("init-db", "code", "webserver", "daemon", "worker"):
        command = services[name]["command"]
        words = [word for word in command if not word.startswith("-")]
        # The leading words are the program and its subcommands, up to the first option's value.
        first_option = next((i for i, word in enumerate(command) if word.startswith("-")), len(command))
        help_text = _help_text(command[:first_option])
        for option in (word for word in command if word.startswith("-")):
            assert re.search(rf"(^|[\s,]){re.escape(option)}([\s,=]|$)", help_text, re.M), (name, option)
        assert words


def test_the_helm_values_use_the_k8s_run_launcher_and_one_run_per_namespace():
    values = load(DOCKER / "helm" / "values.yaml")
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    [deployment] = values["dagster-user-deployments"]["deployments"]
    assert deployment["dagsterApiGrpcArgs"] == ["-m", DEFINITIONS_MODULE]
    assert {entry["name"] for entry in deployment["env"]} <= KNOWN_VARIABLES
    coordinator = values["dagsterDaemon"]["runCoordinator"]
    assert coordinator["type"] == "QueuedRunCoordinator"
    assert {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1} in (
        coordinator["config"]["queuedRunCoordinator"]["tagConcurrencyLimits"]
    )
    assert values["telemetry"]["enabled"] is False and values["postgresql"]["enabled"] is False
    # A dead run pod is found and its run failed, like run_monitoring in our dagster.yaml.
    monitoring, ours = values["dagsterDaemon"]["runMonitoring"], load(INSTANCE_YAML)["run_monitoring"]
    assert monitoring["enabled"] is True and ours["enabled"] is True
    assert (monitoring["startTimeoutSeconds"], monitoring["pollIntervalSeconds"], monitoring["maxRuntimeSeconds"]) == (
        ours["start_timeout_seconds"], ours["poll_interval_seconds"], ours["max_runtime_seconds"])
    # The queue's own settings of dagster.yaml, in the chart's names.
    queue, our_queue = coordinator["config"]["queuedRunCoordinator"], load(INSTANCE_YAML)["run_coordinator"]["config"]
    assert (queue["dequeueIntervalSeconds"], queue["dequeueUseThreads"], queue["dequeueNumWorkers"]) == (
        our_queue["dequeue_interval_seconds"], our_queue["dequeue_use_threads"], our_queue["dequeue_num_workers"])


@pytest.fixture(scope="module")
def plain_install(tmp_path_factory) -> Path:
    """The package built as a wheel and installed without the source tree (what the image does)."""
    build = tmp_path_factory.mktemp("wheel")
    source = build / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".venv", ".git", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "build"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(build), str(source)],
        check=True, timeout=300, capture_output=True,
    )
    [wheel] = build.glob("curation_pipeline-*.whl")
    target = build / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True, timeout=300, capture_output=True,
    )
    return target


def test_the_image_entry_points_run_from_a_plain_install(plain_install, tmp_path, curation_home):
    env = {**os.environ, "PYTHONPATH": str(plain_install)}
    script = (
        "import curation_pipeline, curation_pipeline.defs.definitions as d;"
        "from curation_pipeline.store.migrations import migration_files;"
        "from importlib import resources;"
        "print(curation_pipeline.__file__);"
        "print(' '.join(name for _, name, _ in migration_files()));"
        "print(all((resources.files('curation_pipeline') / 'instance' / f).is_file()"
        " for f in ('dagster.yaml', 'workspace.yaml')"
        " ) and (resources.files('curation_pipeline') / 'clients/embedders/minilm_vocab/vocab.txt').is_file());"
        "print(sorted(s.name for s in d.load_defs().get_repository_def().schedule_defs))"
    )
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    location, migrations, instance_files, schedules = done.stdout.strip().splitlines()
    assert location.startswith(str(plain_install))  # not the source tree
    assert "001_memory_store.sql" in migrations and "003_curation_triggers.sql" in migrations
    assert instance_files == "True" and schedules == "['curation_schedule', 'run_retention_schedule']"
    cli = subprocess.run([sys.executable, "-m", "curation_pipeline.cli.main", "init-db", "--help"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0 and "usage: curation-pipeline init-db" in cli.stdout

"""How runs are launched, where they execute, and how long Dagster keeps them.

`default` launches each run as a process of the code server (one machine). `celery` puts each
run on a Celery queue, fed through a Redis-compatible broker, and a long-lived worker
(`curation-pipeline worker`, on any machine) executes it in a warm process (docs/deployment.md).

The broker URL is a `SecretStr`: it may carry a password, and it is never printed as given
(`redacted_url` hides the password wherever it is shown).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr, field_validator

from curation_pipeline.config.bounds import AtLeastOne, Count, choice_of
from curation_pipeline.config.connection_strings import redact_dsn
from curation_pipeline.config.environment import EnvironmentSettings

LAUNCHERS = ("default", "celery")
# What kombu's Redis transport and Celery's Redis result backend both accept.
BROKER_SCHEMES = ("redis", "rediss", "redis+socket", "sentinel")
# dagster-celery's own default queue: a worker started by `dagster-celery worker start` also
# listens there.
DEFAULT_QUEUE = "dagster"


def _broker_url(value: SecretStr) -> SecretStr:
    url = value.get_secret_value()
    scheme = urlsplit(url).scheme
    if scheme not in BROKER_SCHEMES:
        raise ValueError(f"must be a {', '.join(f'{s}://' for s in BROKER_SCHEMES)} URL (a Redis-compatible broker)")
    if scheme == "redis+socket" and not urlsplit(url).path:
        raise ValueError("a redis+socket:// URL names the socket's path: redis+socket:///path/to/valkey.sock")
    return value


def queue_name(value: str) -> str:
    # A Celery queue is a Redis key and part of a routing key: keep it to plain words.
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", value):
        raise ValueError("must be 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit")
    return value


QueueName = Annotated[str, AfterValidator(queue_name)]


class RunSettings(EnvironmentSettings):
    run_launcher: Annotated[Literal[LAUNCHERS], choice_of(LAUNCHERS)] = Field(
        "default", validation_alias="CURATION_RUN_LAUNCHER")
    # None: an embedded Valkey server in CURATION_HOME/broker, reached through a unix socket
    # (instance/embedded_broker.py): one machine only. Results go to the same server.
    broker_url: SecretStr | None = Field(None, validation_alias="CURATION_BROKER_URL")
    # The queue runs are put on (a run's `dagster-celery/queue` tag overrides it) and the one a
    # worker listens on unless told otherwise (`worker --queue`).
    celery_queue: QueueName = Field(DEFAULT_QUEUE, validation_alias="CURATION_CELERY_QUEUE")
    # Runs one worker executes at once, each in a process of its own (`worker --concurrency`).
    worker_concurrency: AtLeastOne = Field(1, validation_alias="CURATION_WORKER_CONCURRENCY")
    # Dagster runs older than this many days are deleted (run_retention: the daily schedule and
    # `curation-pipeline prune-runs`); 0 keeps them all. Memory revisions are never deleted.
    run_retention_days: Count = Field(30, validation_alias="CURATION_RUN_RETENTION_DAYS")

    # A validator, not an annotation: a plain `SecretStr | None` field is what keeps its value
    # out of error messages (environment.py).
    _broker_url_is_redis = field_validator("broker_url", mode="after")(
        lambda value: value if value is None else _broker_url(value))


def redacted_url(url: str) -> str:
    """The URL with any password replaced by ***, for messages and logs: a PostgreSQL one in
    every form libpq takes (connection_strings.py), a broker's in its userinfo (an unencoded
    "@" in the password included: up to the last one)."""
    if "://" not in url or url.lower().startswith(("postgres://", "postgresql://")):
        return redact_dsn(url)
    return re.sub(r"(//[^:/@]*:).*@", r"\1***@", url, count=1)

"""Which broker carries the runs: CURATION_BROKER_URL, else the embedded one in this machine's
CURATION_HOME, started on first use (embedded_broker.py); and whether it answers."""

from __future__ import annotations

from curation_pipeline.config.runs import RunSettings, redacted_url
from curation_pipeline.config.store import StoreSettings
from curation_pipeline.instance.embedded_broker import BrokerError, start_embedded_broker

BROKER_VARIABLE = "CURATION_BROKER_URL"


def embedded_broker_directory(settings: StoreSettings):
    return settings.curation_home / "broker"


def resolve_broker_url(settings: RunSettings) -> str:
    """The broker's URL; without CURATION_BROKER_URL, the embedded server's, which this starts
    (or attaches to) and keeps up while this process lives."""
    if settings.broker_url is not None:
        return settings.broker_url.get_secret_value()
    if not isinstance(settings, StoreSettings):
        raise BrokerError(f"{BROKER_VARIABLE} is unset and these settings do not say where CURATION_HOME is")
    return start_embedded_broker(embedded_broker_directory(settings))


def check_broker(url: str, timeout_s: float = 5.0) -> None:
    """BrokerError naming the setting (and not the password) unless the broker answers."""
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=timeout_s, transport_options={"socket_timeout": timeout_s}) as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=timeout_s)
    except Exception as error:  # kombu raises the transport's own errors
        raise BrokerError(
            f"cannot reach the broker at {BROKER_VARIABLE}={redacted_url(url)}: {_reason(error, url)}"
        ) from None


def _reason(error: Exception, url: str) -> str:
    text = str(error) or type(error).__name__
    return text.replace(url, redacted_url(url)).splitlines()[0]

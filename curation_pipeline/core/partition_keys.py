"""Partition keys: one key per (tenant, namespace), and the rules a tenant or namespace name obeys.

A partition key must survive the Dagster UI (which rejects ``, [ ] |``, ``...`` and control
characters) and the CLI (which splits on commas), and it must decode back to exactly the tenant
and namespace it came from. Names are percent-encoded with a small safe alphabet and joined with
``:``, which the encoding always escapes inside a name, so the split is unambiguous:

    ("acme", "support-bot")   -> "acme:support-bot"
    ("acme corp", "a,b")      -> "acme%20corp:a%2Cb"
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote, unquote

MAX_NAME_LENGTH = 200
_SAFE_CHARACTERS = "-_."
_SEPARATOR = ":"


class InvalidNameError(ValueError):
    """A tenant or namespace name (or a partition key) the pipeline refuses to use."""


def validate_name(kind: str, value: object) -> None:
    """Raise InvalidNameError naming `kind` ("tenant" or "namespace") if `value` is unusable."""
    if not isinstance(value, str):
        raise InvalidNameError(f"{kind} must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidNameError(f"{kind} must not be empty")
    if value != value.strip():
        raise InvalidNameError(f"{kind} {value!r} has leading or trailing whitespace")
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidNameError(f"{kind} is {len(value)} characters long; at most {MAX_NAME_LENGTH}")
    control = [ch for ch in value if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]
    if control:
        raise InvalidNameError(f"{kind} {value!r} contains control character {control[0]!r}")


def _encode(name: str) -> str:
    encoded = quote(name, safe=_SAFE_CHARACTERS)
    # quote() keeps ".", so "a...b" would carry the "..." that the UI rejects.
    return encoded.replace(".", "%2E") if "..." in encoded else encoded


def partition_key(tenant_id: str, namespace: str) -> str:
    """The partition key of a tenant's namespace; raises InvalidNameError for unusable names."""
    validate_name("tenant", tenant_id)
    validate_name("namespace", namespace)
    return f"{_encode(tenant_id)}{_SEPARATOR}{_encode(namespace)}"


def display_key(tenant_id: str, namespace: str) -> str:
    """How a namespace is shown to users: its partition key, what every `--partition` takes.
    Names that make no key (which only the store can hold) keep the same shape, each part
    quoted, so one spelling is all a user ever reads."""
    try:
        return partition_key(tenant_id, namespace)
    except InvalidNameError:
        return f"{tenant_id!r}{_SEPARATOR}{namespace!r}"


def parse_partition_key(key: str) -> tuple[str, str]:
    """(tenant, namespace) of a key made by partition_key(); clear error for anything else."""
    parts = key.split(_SEPARATOR) if isinstance(key, str) else []
    if len(parts) != 2 or not all(parts):
        raise InvalidNameError(
            f"partition key {key!r} is not of the form TENANT:NAMESPACE "
            "(use `curation-pipeline namespaces` to list the valid keys)"
        )
    try:
        tenant_id, namespace = (unquote(part, errors="strict") for part in parts)
    except UnicodeDecodeError:
        raise InvalidNameError(f"partition key {key!r} has a %-escape that is not UTF-8") from None
    if partition_key(tenant_id, namespace) != key:
        raise InvalidNameError(
            f"partition key {key!r} is not canonical; expected {partition_key(tenant_id, namespace)!r}"
        )
    return tenant_id, namespace

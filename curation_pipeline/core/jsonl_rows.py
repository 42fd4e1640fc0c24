"""Memory nodes as JSON Lines: validation for ``curation-pipeline import`` and formatting for export.

One line = one JSON object = one row of ``memory_nodes``. Import is all-or-report: ``parse_jsonl``
never stops at the first bad line. It returns every valid row, normalised and ready to insert,
plus one ``LineError`` per problem found, so that an operator can fix a whole file in one pass
(and the caller can refuse to write anything while there is any error).

Every problem of a line is reported, not just the first: each column is checked on its own, so
a line with a bad ``heat`` and an unknown ``confidence`` yields two errors. Only a line that is
not valid JSON, or not a JSON object, stops at that one error (there are no columns to check).

Normalised rows always carry every column of ``MEMORY_NODE_COLUMNS``:

* timestamps are timezone-aware ``datetime`` in UTC (a timestamp without an offset is an
  error: guessing the zone would silently shift recall ages by hours);
* ``id`` and ``merged_into`` are ``uuid.UUID``;
* ``embedding`` is a ``list[float]`` or ``None``;
* defaults are filled in, except for the columns in ``DATABASE_DEFAULTED_COLUMNS`` (``id``,
  ``created_at``, ``updated_at``): ``None`` there means "let the database choose" (a generated
  uuid, ``now()``), and the importer should leave such a column out of its insert.
"""

from __future__ import annotations

import json
import math
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "CONFIDENCE_LEVELS",
    "DATABASE_DEFAULTED_COLUMNS",
    "LineError",
    "MEMORY_NODE_COLUMNS",
    "NameValidator",
    "format_node_jsonl",
    "parse_jsonl",
    "validate_name_minimal",
]

MEMORY_NODE_COLUMNS: tuple[str, ...] = (
    "id",
    "tenant_id",
    "namespace",
    "memory_type",
    "pointer_summary",
    "embedding",
    "embedding_model",
    "base_utility",
    "heat",
    "pinned",
    "recall_count",
    "last_recalled_at",
    "epoch",
    "confidence",
    "archived_at",
    "merged_into",
    "created_at",
    "updated_at",
)

DATABASE_DEFAULTED_COLUMNS: frozenset[str] = frozenset({"id", "created_at", "updated_at"})
CONFIDENCE_LEVELS: tuple[str, ...] = ("default", "verified", "stale")

DEFAULT_MEMORY_TYPE = "semantic"
DEFAULT_BASE_UTILITY = 0.5
DEFAULT_HEAT = 0.0
DEFAULT_CONFIDENCE = "default"
IMPORTED_EMBEDDING_MODEL = "imported"
"""``embedding_model`` recorded for an imported vector whose model the file does not name."""

_TIMESTAMP_COLUMNS = ("last_recalled_at", "archived_at", "created_at", "updated_at")
_COUNTER_COLUMNS = ("recall_count", "epoch")
# Counters must fit a Postgres ``integer`` (the narrowest column type they could have), so an
# absurd value is reported here instead of failing the whole import transaction later.
_MAX_COUNTER = 2**31 - 1
_MAX_NAME_LENGTH = 200
_MAX_MEMORY_TYPE_LENGTH = 100

NameValidator = Callable[[str, str], None]
"""``validate_name(kind, value)``: raise ``ValueError`` with a message if ``value`` is not a valid
name of that kind ("tenant" or "namespace")."""


@dataclass(frozen=True)
class LineError:
    """One problem found on one line of a JSONL file (``line`` is 1-based)."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class _ColumnError(ValueError):
    """A single column of a single row is invalid; the message names the column."""


# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------


def _has_control_character(value: str) -> bool:
    return any(unicodedata.category(character) == "Cc" for character in value)


def validate_name_minimal(kind: str, value: str) -> None:
    """The fallback tenant/namespace check: a clean, non-empty string of at most 200 characters.

    The partitions module applies the stricter rules of a Dagster partition key; this one only
    refuses what could never be a sensible name anywhere.
    """
    if not isinstance(value, str):
        raise ValueError(f"{kind} must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{kind} must not be empty")
    if len(value) > _MAX_NAME_LENGTH:
        raise ValueError(f"{kind} is {len(value)} characters long, at most {_MAX_NAME_LENGTH} allowed")
    if _has_control_character(value):
        raise ValueError(f"{kind} {value!r} contains a control character")
    if value != value.strip():
        raise ValueError(f"{kind} {value!r} has leading or trailing whitespace")


# --------------------------------------------------------------------------------------------
# Column parsers: each takes the raw JSON value and returns the normalised one or raises
# _ColumnError. They are called only for present, non-null values.
# --------------------------------------------------------------------------------------------


def _describe(value: Any) -> str:
    """A short repr for error messages (a 10k-character bad value must not flood the report)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _parse_uuid(column: str, value: Any) -> uuid.UUID:
    if not isinstance(value, str):
        raise _ColumnError(f"{column} must be a UUID string, got {_describe(value)}")
    try:
        return uuid.UUID(value)
    except ValueError:
        raise _ColumnError(f"{column} is not a valid UUID: {_describe(value)}") from None


def _parse_timestamp(column: str, value: Any) -> datetime:
    if not isinstance(value, str):
        raise _ColumnError(f"{column} must be an ISO-8601 timestamp string, got {_describe(value)}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _ColumnError(f"{column} is not an ISO-8601 timestamp: {_describe(value)}") from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise _ColumnError(
            f"{column} {_describe(value)} has no timezone offset; add one (e.g. 'Z' or '+02:00')"
        )
    return parsed.astimezone(UTC)


def _parse_finite_float(column: str, value: Any) -> float:
    # bool is a subclass of int: true/false is not a number here.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _ColumnError(f"{column} must be a number, got {_describe(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise _ColumnError(f"{column} must be a finite number, got {number}")
    return number


def _parse_counter(column: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_COUNTER:
        raise _ColumnError(f"{column} must be a non-negative integer, got {_describe(value)}")
    return value


def _parse_bool(column: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _ColumnError(f"{column} must be true or false, got {_describe(value)}")
    return value


def _is_valid_unicode(value: str) -> bool:
    # JSON escapes can spell a lone surrogate ("\ud800"), which no UTF-8 database can store.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_text(column: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _ColumnError(f"{column} must be a string, got {_describe(value)}")
    if not value.strip():
        raise _ColumnError(f"{column} must not be empty")
    if "\x00" in value:
        raise _ColumnError(f"{column} contains a NUL character, which Postgres text cannot store")
    if not _is_valid_unicode(value):
        raise _ColumnError(f"{column} contains an unpaired surrogate, which is not valid Unicode")
    return value


def _parse_memory_type(column: str, value: Any) -> str:
    text = _parse_text(column, value)
    if text != text.strip() or len(text) > _MAX_MEMORY_TYPE_LENGTH or _has_control_character(text):
        raise _ColumnError(
            f"{column} must be a short name without surrounding whitespace or control "
            f"characters, got {_describe(value)}"
        )
    return text


def _parse_confidence(column: str, value: Any) -> str:
    if value not in CONFIDENCE_LEVELS or not isinstance(value, str):
        raise _ColumnError(
            f"{column} must be one of {', '.join(CONFIDENCE_LEVELS)}, got {_describe(value)}"
        )
    return value


def _parse_embedding(column: str, value: Any, dimension: int) -> list[float]:
    if not isinstance(value, list):
        raise _ColumnError(f"{column} must be a list of numbers, got {_describe(value)}")
    if len(value) != dimension:
        raise _ColumnError(f"{column} has dimension {len(value)}, expected {dimension}")
    vector: list[float] = []
    for index, component in enumerate(value):
        if isinstance(component, bool) or not isinstance(component, (int, float)):
            raise _ColumnError(f"{column}[{index}] must be a number, got {_describe(component)}")
        number = float(component)
        if math.isnan(number):
            raise _ColumnError(f"{column}[{index}] is NaN")
        if math.isinf(number):
            raise _ColumnError(f"{column}[{index}] is infinite")
        vector.append(number)
    if not any(vector):
        raise _ColumnError(f"{column} is all zeros (a zero vector has no cosine similarity)")
    return vector


# --------------------------------------------------------------------------------------------
# Row validation
# --------------------------------------------------------------------------------------------


class _RowChecker:
    """Validates one decoded JSON object, collecting every column error instead of stopping."""

    def __init__(self, raw: Mapping[str, Any], dimension: int, validate_name: NameValidator) -> None:
        self.raw = raw
        self.dimension = dimension
        self.validate_name = validate_name
        self.errors: list[str] = []

    def optional(self, column: str, parse: Callable[[str, Any], Any], default: Any = None) -> Any:
        value = self.raw.get(column)
        if value is None:  # absent and JSON null both mean "use the default"
            return default
        try:
            return parse(column, value)
        except _ColumnError as error:
            self.errors.append(str(error))
            return default

    def required_name(self, column: str, kind: str) -> str | None:
        value = self.raw.get(column)
        if value is None:
            self.errors.append(f"missing {column}")
            return None
        if not isinstance(value, str):
            self.errors.append(f"{column} must be a string, got {_describe(value)}")
            return None
        if not _is_valid_unicode(value):
            self.errors.append(f"{column} contains an unpaired surrogate, which is not valid Unicode")
            return None
        try:
            self.validate_name(kind, value)
        except ValueError as error:
            self.errors.append(f"invalid {column}: {error}")
            return None
        return value

    def required_text(self, column: str) -> str | None:
        if self.raw.get(column) is None:
            self.errors.append(f"missing {column}")
            return None
        return self.optional(column, _parse_text)

    def check(self) -> dict[str, Any]:
        unknown = sorted(set(self.raw) - set(MEMORY_NODE_COLUMNS))
        for column in unknown:
            self.errors.append(
                f"unknown column {column!r} (known columns: {', '.join(MEMORY_NODE_COLUMNS)})"
            )

        row: dict[str, Any] = {
            "id": self.optional("id", _parse_uuid),
            "tenant_id": self.required_name("tenant_id", "tenant"),
            "namespace": self.required_name("namespace", "namespace"),
            "memory_type": self.optional("memory_type", _parse_memory_type, DEFAULT_MEMORY_TYPE),
            "pointer_summary": self.required_text("pointer_summary"),
            "embedding": self.optional(
                "embedding", lambda column, value: _parse_embedding(column, value, self.dimension)
            ),
            "embedding_model": self.optional("embedding_model", _parse_text),
            "base_utility": self.optional("base_utility", _parse_finite_float, DEFAULT_BASE_UTILITY),
            "heat": self.optional("heat", _parse_finite_float, DEFAULT_HEAT),
            "pinned": self.optional("pinned", _parse_bool, False),
            "confidence": self.optional("confidence", _parse_confidence, DEFAULT_CONFIDENCE),
            "merged_into": self.optional("merged_into", _parse_uuid),
        }
        for column in _COUNTER_COLUMNS:
            row[column] = self.optional(column, _parse_counter, 0)
        for column in _TIMESTAMP_COLUMNS:
            row[column] = self.optional(column, _parse_timestamp)

        self._check_cross_column_rules(row)
        # Fixed column order makes rows uniform for COPY and easy to compare in tests.
        return {column: row[column] for column in MEMORY_NODE_COLUMNS}

    def _check_cross_column_rules(self, row: dict[str, Any]) -> None:
        if row["embedding"] is not None and row["embedding_model"] is None:
            row["embedding_model"] = IMPORTED_EMBEDDING_MODEL
        if self.raw.get("merged_into") is not None and self.raw.get("archived_at") is None:
            # A merged node is by definition archived; an active node pointing elsewhere would
            # be both a live memory and a redirect.
            self.errors.append("merged_into is set but archived_at is not (only archived nodes can be merged)")
        if row["merged_into"] is not None and row["merged_into"] == row["id"]:
            self.errors.append("merged_into points to the node itself")


class _DuplicateKeyError(ValueError):
    def __init__(self, keys: list[str]) -> None:
        super().__init__(", ".join(repr(key) for key in keys))
        self.keys = keys


def _object_without_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Plain json.loads keeps the last of two equal keys silently; in an import that is a typo
    # or a broken generator, and picking one of the values would be a guess.
    keys = [key for key, _ in pairs]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise _DuplicateKeyError(duplicates)
    return dict(pairs)


def _decode_line(text: str) -> Any:
    """``json.loads`` refusing duplicate keys.

    NaN and Infinity literals are still decoded (to floats) on purpose: the column checks then
    report them with the column and index they appear at, which is more useful than a syntax
    error.
    """
    return json.loads(text, object_pairs_hook=_object_without_duplicate_keys)


def parse_jsonl(
    lines: Iterable[str],
    *,
    dimension: int,
    validate_name: NameValidator = validate_name_minimal,
) -> tuple[list[dict[str, Any]], list[LineError]]:
    """Validate JSONL memory nodes; return ``(valid normalised rows, errors)``.

    ``dimension`` is the configured vector width every embedding must have. Blank lines are
    skipped (they still count for line numbers). All lines are checked and every error of every
    line is reported (see the module docstring); a line with any error yields no row. An ``id``
    that already appeared on an earlier valid line is an error on the later line.
    """
    if isinstance(lines, str):
        raise TypeError("parse_jsonl() takes an iterable of lines, not a single string")
    rows: list[dict[str, Any]] = []
    errors: list[LineError] = []
    first_line_of_id: dict[uuid.UUID, int] = {}

    for line_number, line in enumerate(lines, start=1):
        text = line.lstrip("\ufeff") if line_number == 1 else line  # tolerate a UTF-8 BOM
        if not text.strip():
            continue
        try:
            raw = _decode_line(text)
        except json.JSONDecodeError as error:
            errors.append(LineError(line_number, f"invalid JSON: {error.msg} at column {error.colno}"))
            continue
        except _DuplicateKeyError as error:
            errors.append(LineError(line_number, f"key(s) {error} appear more than once"))
            continue
        if not isinstance(raw, dict):
            errors.append(LineError(line_number, f"expected a JSON object, got {type(raw).__name__}"))
            continue

        checker = _RowChecker(raw, dimension, validate_name)
        row = checker.check()
        node_id = row["id"]
        if node_id is not None and node_id in first_line_of_id:
            checker.errors.append(f"duplicate id {node_id} (first seen on line {first_line_of_id[node_id]})")

        if checker.errors:
            errors.extend(LineError(line_number, message) for message in checker.errors)
            continue
        if node_id is not None:
            first_line_of_id[node_id] = line_number
        rows.append(row)
    return rows, errors


# --------------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------------


def _json_value(column: str, value: Any) -> Any:
    """Convert one column value to its JSON form (the inverse of the column parsers)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"{column} is a naive datetime; export needs timezone-aware timestamps")
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if column == "embedding":
        # numpy arrays and pgvector.Vector both know how to become plain lists.
        for method in ("to_list", "tolist"):
            if hasattr(value, method):
                value = getattr(value, method)()
                break
        return [float(component) for component in value]
    if hasattr(value, "item"):  # numpy scalars from a Polars/numpy row
        return value.item()
    return value


def format_node_jsonl(row: Mapping[str, Any]) -> str:
    """One JSON line (no trailing newline) with every column of ``MEMORY_NODE_COLUMNS``.

    Missing columns are written as ``null``; keys that are not columns (e.g. the seed corpus'
    ``_embed`` flag) are left out. The result parses back through ``parse_jsonl`` to the same
    row. Raises ``ValueError`` for values JSON cannot carry faithfully (NaN, naive datetimes).
    """
    document = {column: _json_value(column, row.get(column)) for column in MEMORY_NODE_COLUMNS}
    try:
        return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as error:
        raise ValueError(f"node {document.get('id')} cannot be exported: {error}") from None

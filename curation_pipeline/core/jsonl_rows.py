"""Memory nodes as JSON Lines: one pydantic model of a row, validation per line, and export.

One line = one JSON object = one row of ``memory_nodes``, described once by ``MemoryNodeRow``
(column types, defaults, validators). Validation never stops at the first problem:

* every line is checked, and ``iter_jsonl`` yields one ``ParsedLine`` per non-blank line with
  either the normalised row or its errors, so an operator can fix a whole file in one pass;
* every problem of a line is reported, not just the first: pydantic validates each column on its
  own, so a line with a bad ``heat`` and an unknown ``confidence`` yields two errors. Only a line
  that is not UTF-8, not JSON or not a JSON object stops at that one error (there are no columns
  to check).

An error names its line, its column (``embedding[3]`` for one vector component) and the reason,
which the command line prints as ``FILE:LINE: column: reason``. Rules that span lines (duplicate
ids, merge targets, ids already in the store) are in ``core/import_links.py``.

Normalised rows carry every column of ``MEMORY_NODE_COLUMNS``, in that order:

* timestamps are timezone-aware ``datetime`` in UTC (a timestamp without an offset is an
  error: guessing the zone would silently shift recall ages by hours);
* ``id`` and ``merged_into`` are ``uuid.UUID``;
* ``embedding`` is a ``list[float]`` or ``None``; every component fits the float32 the vector
  column stores, and the vector has a direction in float32 (pgvector computes cosine there);
* JSON ``null`` and an absent column both mean the column's default, except for the columns in
  ``DATABASE_DEFAULTED_COLUMNS`` (``id``, ``created_at``, ``updated_at``): ``None`` there means
  "let the importer choose" (a generated uuid, the import time).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from curation_pipeline.core import partition_keys
from curation_pipeline.core.text import clip

__all__ = [
    "CONFIDENCE_LEVELS",
    "DATABASE_DEFAULTED_COLUMNS",
    "LineError",
    "MEMORY_NODE_COLUMNS",
    "MemoryNodeRow",
    "NameValidator",
    "ParsedLine",
    "RowContext",
    "export_line",
    "format_node_jsonl",
    "iter_jsonl",
    "parse_jsonl",
    "parse_line",
]

CONFIDENCE_LEVELS: tuple[str, ...] = ("default", "verified", "stale", "superseded")
DATABASE_DEFAULTED_COLUMNS: frozenset[str] = frozenset({"id", "created_at", "updated_at"})

DEFAULT_MEMORY_TYPE = "semantic"
DEFAULT_BASE_UTILITY = 0.5
DEFAULT_HEAT = 0.0
DEFAULT_CONFIDENCE = "default"
IMPORTED_EMBEDDING_MODEL = "imported"
"""``embedding_model`` recorded for an imported vector whose model the file does not name."""

# What the store's schema accepts (sql/001_memory_store.sql), declared here once for the import,
# so that every row an agent can write with plain SQL imports, and an import line the store
# would refuse is reported with its line instead of failing the whole import transaction later
# (store/test_schema_agreement.py holds the two to the same edge values). The deliberate
# exceptions: names must also make a partition key (partition_keys.validate_name), a vector must
# have a direction in float32 (cosine similarity needs one), and JSON carries no NaN, infinity or
# timestamps outside the years 1 to 9999 (export names such rows: format_node_jsonl).
_INT4 = (-(2**31), 2**31 - 1)  # recall_count integer, CHECK (recall_count >= 0)
_INT8 = (-(2**63), 2**63 - 1)  # epoch bigint
# CHECK (btrim(pointer_summary) <> ''): btrim trims spaces only, so a text of tabs or of U+3000
# is a text the store holds.
_TRIMMED_BY_THE_CHECK = " "
_UTF8_BOM = "\ufeff"

NameValidator = Callable[[str, str], None]
"""``validate_name(kind, value)``: raise ``ValueError`` with a message if ``value`` is not a valid
name of that kind ("tenant" or "namespace")."""


@dataclass(frozen=True, slots=True)
class LineError:
    """One problem found on one line of a JSONL file (``line`` is 1-based).

    ``column`` is ``None`` for a problem of the whole line (not UTF-8, not JSON, not an object).
    """

    line: int
    column: str | None
    reason: str

    @property
    def message(self) -> str:
        """``column: reason`` (or just the reason for a whole-line problem)."""
        return f"{self.column}: {self.reason}" if self.column else self.reason

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


# --------------------------------------------------------------------------------------------
# Column types: pydantic checks the JSON type (strict: no "7" for 7, no 1 for true); these
# validators add what pydantic cannot know.
# --------------------------------------------------------------------------------------------


def _describe(value: Any) -> str:
    """A short repr for error messages (a 10k-character bad value must not flood the report)."""
    return clip(repr(value), 80)


def _uuid_from_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"must be a UUID string, got {_describe(value)}")
    try:
        return uuid.UUID(value)
    except ValueError:
        raise ValueError(f"is not a valid UUID: {_describe(value)}") from None


def _timestamp_from_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"must be an ISO-8601 timestamp string, got {_describe(value)}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"is not an ISO-8601 timestamp: {_describe(value)}") from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ValueError(f"{_describe(value)} has no timezone offset; add one (e.g. 'Z' or '+02:00')")
    try:
        # Rows are kept in UTC. 0001-01-01T00:00+14:00 is still in year 0 in UTC, and
        # 9999-12-31T23:59-10:00 already in year 10000: neither is a datetime Python can hold.
        return parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError(
            f"{_describe(value)} is out of range: in UTC it falls outside the years 1 to 9999"
        ) from None


def _is_valid_unicode(value: str) -> bool:
    # JSON escapes can spell a lone surrogate ("\ud800"), which no UTF-8 database can store.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _storable_text(value: str) -> str:
    """Any text Postgres can store (the columns without a CHECK: memory_type, embedding_model)."""
    if "\x00" in value:
        raise ValueError("contains a NUL character, which Postgres text cannot store")
    if not _is_valid_unicode(value):
        raise ValueError("contains an unpaired surrogate, which is not valid Unicode")
    return value


def _not_only_spaces(value: str) -> str:
    if not value.strip(_TRIMMED_BY_THE_CHECK):
        raise ValueError("must not be empty or only spaces")
    return value


Uuid = Annotated[uuid.UUID, BeforeValidator(_uuid_from_text)]
Timestamp = Annotated[datetime, BeforeValidator(_timestamp_from_text)]
Text = Annotated[str, AfterValidator(_storable_text)]
Summary = Annotated[Text, AfterValidator(_not_only_spaces)]
Counter = Annotated[int, Field(ge=0, le=_INT4[1])]
Epoch = Annotated[int, Field(ge=_INT8[0], le=_INT8[1])]


class ComponentError(ValueError):
    """A problem of one vector component: reported as ``embedding[index]``."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index


_FLOAT32 = np.finfo(np.float32)


def _check_float32_vector(vector: list[float]) -> None:
    """The vector column stores float32, and pgvector computes cosine in float32: refuse what
    would overflow there, or lose its direction (a zero vector, or a squared norm that under- or
    overflows, gives no cosine or a wrong one)."""
    values = np.asarray(vector, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        as_float32 = values.astype(np.float32)
        squared_norm = np.dot(as_float32, as_float32)
    overflowing = np.flatnonzero(~np.isfinite(as_float32))
    if overflowing.size:
        index = int(overflowing[0])
        more = f" (and {overflowing.size - 1} more component(s))" if overflowing.size > 1 else ""
        raise ComponentError(
            index,
            f"{float(values[index])!r} overflows float32, the type the vector column stores "
            f"(largest magnitude {float(_FLOAT32.max):.8g}){more}",
        )
    if not as_float32.any():
        raise ValueError(
            "is all zeros in float32, the type the vector column stores "
            "(a zero vector has no cosine similarity)"
        )
    if not np.isfinite(squared_norm) or squared_norm == 0:
        raise ValueError(
            "has no usable length in float32: its squared norm "
            f"{'overflows' if squared_norm else 'underflows to zero'}, so pgvector cannot compute "
            "its cosine similarity (scale it: cosine similarity ignores length)"
        )


# --------------------------------------------------------------------------------------------
# The row
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowContext:
    """What a row is validated against: the store's vector width and its name rules."""

    dimension: int | None = None
    validate_name: NameValidator = partition_keys.validate_name


class MemoryNodeRow(BaseModel):
    """One row of ``memory_nodes`` as a JSONL line carries it.

    Validate with ``model_validate(mapping_without_nulls, context=RowContext(...))``; the fields
    are declared in the table's column order, so ``model_dump()`` is a row ready to insert.
    """

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)

    id: Uuid | None = None
    tenant_id: str
    namespace: str
    memory_type: Text = DEFAULT_MEMORY_TYPE
    pointer_summary: Summary
    embedding: list[float] | None = None
    embedding_model: Text | None = None
    base_utility: float = DEFAULT_BASE_UTILITY
    heat: float = DEFAULT_HEAT
    pinned: bool = False
    recall_count: Counter = 0
    last_recalled_at: Timestamp | None = None
    epoch: Epoch = 0
    confidence: Literal[CONFIDENCE_LEVELS] = DEFAULT_CONFIDENCE
    archived_at: Timestamp | None = None
    merged_into: Uuid | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None
    # A newer memory replaced this one's value (sql/010): its id, and when this one stopped
    # being current. The node stays active; `current_memory` leaves it out.
    superseded_by: Uuid | None = None
    valid_until: Timestamp | None = None

    @field_validator("tenant_id", "namespace")
    @classmethod
    def _valid_name(cls, value: str, info: ValidationInfo) -> str:
        if not _is_valid_unicode(value):
            raise ValueError("contains an unpaired surrogate, which is not valid Unicode")
        kind = "tenant" if info.field_name == "tenant_id" else "namespace"
        _context(info).validate_name(kind, value)  # raises ValueError with its own message
        return value

    @field_validator("embedding")
    @classmethod
    def _storable_vector(cls, value: list[float] | None, info: ValidationInfo) -> list[float] | None:
        if value is None:
            return None
        dimension = _context(info).dimension
        if dimension is not None and len(value) != dimension:
            raise ValueError(f"has dimension {len(value)}, expected {dimension}")
        _check_float32_vector(value)
        return value

    @field_validator("merged_into")
    @classmethod
    def _merged_node_is_archived(cls, value: uuid.UUID | None, info: ValidationInfo) -> uuid.UUID | None:
        # info.data holds the columns before this one that are valid; an invalid archived_at is
        # already reported on its own.
        if value is not None and "archived_at" in info.data and info.data["archived_at"] is None:
            # A merged node is by definition archived: an active node pointing elsewhere would
            # be both a live memory and a redirect.
            raise ValueError("is set but archived_at is not (only archived nodes can be merged)")
        if value is not None and value == info.data.get("id"):
            raise ValueError("points to the node itself")
        return value

    @field_validator("superseded_by")
    @classmethod
    def _superseded_by_another(cls, value: uuid.UUID | None, info: ValidationInfo) -> uuid.UUID | None:
        if value is not None and value == info.data.get("id"):
            raise ValueError("points to the node itself")
        return value

    @model_validator(mode="after")
    def _superseded_has_a_successor(self) -> MemoryNodeRow:
        if self.confidence == "superseded" and self.superseded_by is None:
            raise ValueError("confidence is superseded but superseded_by is not set (the newer node's id)")
        return self

    @model_validator(mode="after")
    def _name_the_model_of_an_unnamed_vector(self) -> MemoryNodeRow:
        # Only when the line leaves the column out: an explicit null is what the store held
        # (an agent wrote a vector without naming its model), and export writes it back.
        if (self.embedding is not None and self.embedding_model is None
                and "embedding_model" not in self.model_fields_set):
            self.embedding_model = IMPORTED_EMBEDDING_MODEL
        return self


MEMORY_NODE_COLUMNS: tuple[str, ...] = tuple(MemoryNodeRow.model_fields)


def _context(info: ValidationInfo) -> RowContext:
    return info.context if isinstance(info.context, RowContext) else RowContext()


# --------------------------------------------------------------------------------------------
# Errors: pydantic's error list -> (column, reason)
# --------------------------------------------------------------------------------------------

_REASONS = {
    "string_type": "must be a string",
    "float_type": "must be a number",
    "int_type": "must be an integer",
    "bool_type": "must be true or false",
    "list_type": "must be a list of numbers",
    "finite_number": "must be a finite number (not NaN or infinity)",
    "greater_than_equal": "must be at least {ge}",
    "less_than_equal": "must be at most {le}",
    "literal_error": "must be one of {expected}",
}


def _column(location: tuple[Any, ...]) -> str | None:
    if not location:
        return None
    column = str(location[0])
    return column + "".join(f"[{part}]" for part in location[1:])


def _column_errors(error: ValidationError) -> list[tuple[str | None, str]]:
    problems: list[tuple[str | None, str]] = []
    for detail in error.errors(include_url=False):
        location = tuple(detail["loc"])
        kind = detail["type"]
        context = detail.get("ctx") or {}
        if kind == "missing":
            reason = "missing (a required column)"
        elif kind == "extra_forbidden":
            reason = f"unknown column (known columns: {', '.join(MEMORY_NODE_COLUMNS)})"
        elif kind == "value_error":
            cause = context.get("error")
            if isinstance(cause, ComponentError):
                location = (*location, cause.index)
            reason = str(cause) if cause is not None else detail["msg"]
        elif kind in _REASONS:
            reason = f"{_REASONS[kind].format(**context)}, got {_describe(detail['input'])}"
        else:  # anything else pydantic may say, in its own words
            reason = f"{detail['msg']}, got {_describe(detail['input'])}"
        problems.append((_column(location), reason))
    return problems


# --------------------------------------------------------------------------------------------
# Lines
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """One non-blank line: its normalised row, or every problem found on it.

    ``named_id`` is the id the line names when it is a valid UUID, even if the line is invalid,
    so that a line merged into it can say "that node's line is invalid" instead of "no such node".
    """

    line: int
    row: dict[str, Any] | None
    errors: tuple[LineError, ...] = ()
    named_id: uuid.UUID | None = None


class _DuplicateKeyError(ValueError):
    pass


def _object_without_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Plain json.loads keeps the last of two equal keys silently; in an import that is a typo
    # or a broken generator, and picking one of the values would be a guess.
    document = dict(pairs)
    if len(document) != len(pairs):
        keys = [key for key, _ in pairs]
        duplicates = sorted({key for key in keys if keys.count(key) > 1})
        raise _DuplicateKeyError(", ".join(repr(key) for key in duplicates))
    return document


def _named_id(raw: Mapping[str, Any]) -> uuid.UUID | None:
    try:
        return uuid.UUID(raw["id"]) if isinstance(raw.get("id"), str) else None
    except ValueError:
        return None


_NULL_KEPT = "embedding_model"


def parse_line(line_number: int, line: str | bytes, context: RowContext) -> ParsedLine | None:
    """Validate one line; ``None`` for a blank line. Bytes are decoded as UTF-8 here, per line,
    so one undecodable line is one error and not a failed file."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as error:
            return ParsedLine(line_number, None, (LineError(
                line_number, None,
                f"invalid UTF-8 (byte {error.object[error.start]:#04x} at position {error.start + 1} of the line)",
            ),))
    text = line.removeprefix(_UTF8_BOM) if line_number == 1 else line  # tolerate a UTF-8 BOM
    if not text.strip():
        return None

    def whole_line(reason: str) -> ParsedLine:
        return ParsedLine(line_number, None, (LineError(line_number, None, reason),))

    try:
        # NaN and Infinity literals are decoded (to floats) on purpose: the column checks then
        # report them with the column and index they appear at.
        raw = json.loads(text, object_pairs_hook=_object_without_duplicate_keys)
    except json.JSONDecodeError as error:
        return whole_line(f"invalid JSON: {error.msg} at column {error.colno}")
    except _DuplicateKeyError as error:
        return whole_line(f"key(s) {error} appear more than once")
    except RecursionError:
        return whole_line("invalid JSON: nested too deeply")
    except ValueError as error:  # an integer beyond Python's digit limit (sys.get_int_max_str_digits)
        return whole_line(f"invalid JSON: a number with too many digits ({_describe(str(error))})")
    if not isinstance(raw, dict):
        return whole_line(f"expected a JSON object, got {type(raw).__name__}")

    # JSON null and an absent column both mean "the column's default", except for a vector's
    # model: absent, an imported vector is named "imported"; null stays NULL.
    present = {column: value for column, value in raw.items()
               if value is not None or column == _NULL_KEPT}
    try:
        row = MemoryNodeRow.model_validate(present, context=context)
    except ValidationError as error:
        errors = tuple(LineError(line_number, column, reason) for column, reason in _column_errors(error))
        return ParsedLine(line_number, None, errors, _named_id(present))
    return ParsedLine(line_number, row.model_dump(), (), row.id)


def iter_jsonl(
    lines: Iterable[str | bytes],
    *,
    dimension: int | None,
    validate_name: NameValidator = partition_keys.validate_name,
) -> Iterator[ParsedLine]:
    """One ``ParsedLine`` per non-blank line, streamed (blank lines still count for numbering).

    ``lines`` are ``str`` or ``bytes`` (a file opened in binary mode: each line is decoded on its
    own). ``dimension`` is the vector width every embedding must have.
    """
    if isinstance(lines, (str, bytes)):
        raise TypeError("iter_jsonl() takes an iterable of lines, not a single string")
    context = RowContext(dimension, validate_name)
    for line_number, line in enumerate(lines, start=1):
        parsed = parse_line(line_number, line, context)
        if parsed is not None:
            yield parsed


def parse_jsonl(
    lines: Iterable[str | bytes],
    *,
    dimension: int | None,
    validate_name: NameValidator = partition_keys.validate_name,
) -> tuple[list[dict[str, Any]], list[LineError]]:
    """``(valid normalised rows, every error)`` of a small input, each line on its own.

    Rules between lines (duplicate ids, merge targets) are ``core/import_links.py``'s; a large
    file is better streamed with ``iter_jsonl``.
    """
    if isinstance(lines, (str, bytes)):
        raise TypeError("parse_jsonl() takes an iterable of lines, not a single string")
    rows: list[dict[str, Any]] = []
    errors: list[LineError] = []
    for parsed in iter_jsonl(lines, dimension=dimension, validate_name=validate_name):
        if parsed.row is not None:
            rows.append(parsed.row)
        errors.extend(parsed.errors)
    return rows, errors


# --------------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------------


def _json_value(column: str, value: Any) -> Any:
    """Convert one column value to its JSON form (the inverse of the column validators)."""
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
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as error:
        raise ValueError(f"node {document.get('id')} cannot be exported: {error}") from None
    # Characters that str.splitlines() and many JSONL readers take for line ends: escaped, so a
    # memory holding one stays on its line for them too (they can only occur inside strings).
    for character, escaped in _LINE_BREAKS_OUTSIDE_JSON.items():
        text = text.replace(character, escaped)
    return text


def export_line(row: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """``(the JSON line, [])`` for a row its import accepts, else ``(None, the import's reasons)``.

    One rule for both: the line export would write is validated as the import validates it
    (names that make no partition key, a vector with no direction, ...), so an export never
    writes a file its own import refuses; the rows it cannot write are named instead. The
    vector's width is not checked here: the store's column fixes it."""
    line = format_node_jsonl(row)
    parsed = parse_line(1, line, RowContext())
    if parsed is None or not parsed.errors:
        return line, []
    return None, [error.message for error in parsed.errors]


# (json.dumps escapes the control characters below U+0020 itself.)
_LINE_BREAKS_OUTSIDE_JSON = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}

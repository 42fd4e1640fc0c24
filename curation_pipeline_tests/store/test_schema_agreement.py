"""The import accepts exactly the values the store's schema accepts: each edge value is written
by plain SQL, as an agent writes, and validated as an import line, and both must agree.

(The exceptions, each tested where it is documented: names, which must also make a partition
key; values JSON cannot carry, which export refuses by row: NaN and infinite numbers, infinite
timestamps and those outside the years 1 to 9999.)"""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from curation_pipeline.core.jsonl_rows import RowContext, parse_line

BASE = {"tenant_id": "acme", "namespace": "support", "pointer_summary": "A memory."}

CASES = [
    # (column, value): the same value through SQL and through an import line
    ("epoch", 2**63 - 1), ("epoch", -(2**63)), ("epoch", 2**31), ("epoch", -1), ("epoch", 5_000_000_000),
    ("epoch", 2**63),
    ("recall_count", 2**31 - 1), ("recall_count", 2**31), ("recall_count", -1),
    ("pointer_summary", "\t"), ("pointer_summary", "\u3000"), ("pointer_summary", "\t\n\u3000 \u00a0"),
    ("pointer_summary", " "), ("pointer_summary", "   "), ("pointer_summary", ""),
    ("pointer_summary", "\x01 control"), ("pointer_summary", "x" * 100_000),
    ("memory_type", "t" * 150), ("memory_type", ""), ("memory_type", " padded "), ("memory_type", "tab\there"),
    ("embedding_model", ""), ("embedding_model", "m" * 500),
    ("confidence", "certain"), ("confidence", "stale"),
    ("base_utility", 1.7976931348623157e308), ("base_utility", -5e-324), ("heat", -0.0),
]


def _schema_accepts(db: psycopg.Connection, column: str, value) -> bool:
    row = {**BASE, column: value}
    names = ", ".join(row)
    try:
        with db.transaction():
            db.execute(f"INSERT INTO memory_nodes (id, {names}) VALUES (%s, {', '.join(['%s'] * len(row))})",
                       (uuid.uuid4(), *row.values()))
            raise _RolledBack
    except _RolledBack:
        return True
    except psycopg.Error:
        return False


class _RolledBack(Exception):
    """Leaves the probe's transaction without keeping its row."""


def _import_accepts(column: str, value) -> bool:
    parsed = parse_line(1, json.dumps({**BASE, column: value}), RowContext(dimension=384))
    return not parsed.errors


@pytest.mark.parametrize(("column", "value"), CASES, ids=[f"{c}={v!r:.30}" for c, v in CASES])
def test_the_import_accepts_what_the_schema_accepts_and_nothing_else(db, column, value):
    assert _import_accepts(column, value) == _schema_accepts(db, column, value)

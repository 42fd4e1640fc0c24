"""Parsing, validating and formatting memory nodes as JSON Lines."""

from __future__ import annotations

import json
import math
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from curation_pipeline.core.jsonl_rows import (
    DATABASE_DEFAULTED_COLUMNS,
    MEMORY_NODE_COLUMNS,
    LineError,
    MemoryNodeRow,
    format_node_jsonl,
    iter_jsonl,
    parse_jsonl,
)
from curation_pipeline.core.partition_keys import validate_name

DIMENSION = 4
NODE_ID = "5b0f3a52-6f1e-4d4b-9a55-0d6f7f1f2a10"
OTHER_ID = "0c1d4d0e-8e55-4c1c-b0a3-6a3a5d9b8f21"


def minimal(**overrides: Any) -> dict[str, Any]:
    row = {"tenant_id": "acme", "namespace": "support-bot", "pointer_summary": "Dana prefers email."}
    row.update(overrides)
    return row


def line(row: dict[str, Any]) -> str:
    return json.dumps(row)


def parse(*lines: str | bytes) -> tuple[list[dict[str, Any]], list[LineError]]:
    return parse_jsonl(lines, dimension=DIMENSION)


# ---- valid rows ------------------------------------------------------------------------------


def test_minimal_row_gets_every_column_with_defaults() -> None:
    rows, errors = parse(line(minimal()))
    assert errors == []
    assert rows == [
        {
            "id": None,
            "tenant_id": "acme",
            "namespace": "support-bot",
            "memory_type": "semantic",
            "pointer_summary": "Dana prefers email.",
            "embedding": None,
            "embedding_model": None,
            "base_utility": 0.5,
            "heat": 0.0,
            "pinned": False,
            "recall_count": 0,
            "last_recalled_at": None,
            "epoch": 0,
            "confidence": "default",
            "archived_at": None,
            "merged_into": None,
            "created_at": None,
            "updated_at": None,
            "superseded_by": None,
            "valid_until": None,
        }
    ]
    assert list(rows[0]) == list(MEMORY_NODE_COLUMNS)


def test_database_defaulted_columns_are_the_ones_left_none() -> None:
    (row,), _ = parse(line(minimal()))
    assert {column for column in DATABASE_DEFAULTED_COLUMNS if row[column] is None} == {"id", "created_at", "updated_at"}


def test_full_row_is_normalised() -> None:
    full = minimal(
        id=NODE_ID.upper(),
        memory_type="episodic",
        embedding=[0.5, -1, 0.25, 2],
        embedding_model="lexical-ngram-v1/4",
        base_utility=0.9,
        heat=3,
        pinned=True,
        recall_count=12,
        last_recalled_at="2025-06-01T10:00:00Z",
        epoch=140,
        confidence="verified",
        archived_at="2025-06-02T12:00:00+02:00",
        merged_into=OTHER_ID,
        created_at="2025-01-01T00:00:00.123456+00:00",
        updated_at="2025-06-02 10:00:00-05:00",
    )
    (row,), errors = parse(line(full))
    assert errors == []
    assert row["id"] == uuid.UUID(NODE_ID)
    assert row["merged_into"] == uuid.UUID(OTHER_ID)
    assert row["embedding"] == [0.5, -1.0, 0.25, 2.0]
    assert all(isinstance(component, float) for component in row["embedding"])
    assert row["heat"] == 3.0 and isinstance(row["heat"], float)
    assert row["last_recalled_at"] == datetime(2025, 6, 1, 10, tzinfo=UTC)
    # Offsets are kept as instants and normalised to UTC.
    assert row["archived_at"] == datetime(2025, 6, 2, 10, tzinfo=UTC)
    assert row["archived_at"].tzinfo is UTC
    assert row["updated_at"] == datetime(2025, 6, 2, 15, tzinfo=UTC)
    assert row["created_at"].microsecond == 123456
    assert (row["pinned"], row["recall_count"], row["epoch"], row["confidence"]) == (True, 12, 140, "verified")


def test_embedding_without_model_is_recorded_as_imported() -> None:
    (row,), _ = parse(line(minimal(embedding=[1, 0, 0, 0])))
    assert row["embedding_model"] == "imported"


def test_json_null_means_default() -> None:
    (row,), errors = parse(line(minimal(memory_type=None, heat=None, pinned=None, id=None, embedding=None)))
    assert errors == []
    assert (row["memory_type"], row["heat"], row["pinned"], row["id"], row["embedding"]) == ("semantic", 0.0, False, None, None)


def test_blank_lines_are_skipped_but_counted() -> None:
    rows, errors = parse("", line(minimal()), "   ", "\n", "{bad", line(minimal(pointer_summary="second")))
    assert [row["pointer_summary"] for row in rows] == ["Dana prefers email.", "second"]
    assert [error.line for error in errors] == [5]


def test_a_utf8_byte_order_mark_on_the_first_line_is_tolerated() -> None:
    rows, errors = parse("\ufeff" + line(minimal()))
    assert errors == [] and len(rows) == 1


def test_lines_with_trailing_newlines_as_read_from_a_file(tmp_path) -> None:
    path = tmp_path / "nodes.jsonl"
    path.write_text(line(minimal()) + "\n" + line(minimal(pointer_summary="two")) + "\n", encoding="utf-8")
    with path.open(encoding="utf-8") as handle:
        rows, errors = parse_jsonl(handle, dimension=DIMENSION)
    assert errors == [] and len(rows) == 2


def test_a_single_string_is_refused() -> None:
    with pytest.raises(TypeError, match="iterable of lines"):
        parse_jsonl(line(minimal()), dimension=DIMENSION)  # type: ignore[arg-type]


# ---- errors: one per problem, with the line and the column ----------------------------------


def problems(*lines: str | bytes) -> list[tuple[str | None, str]]:
    """(column, reason) of every error, when no line is valid."""
    rows, errors = parse(*lines)
    assert not rows
    return [(error.column, error.reason) for error in errors]


def test_invalid_json_is_reported_with_line_number() -> None:
    rows, errors = parse(line(minimal()), '{"tenant_id": "acme",')
    assert len(rows) == 1
    assert len(errors) == 1 and (errors[0].line, errors[0].column) == (2, None)
    assert errors[0].reason.startswith("invalid JSON")
    assert str(errors[0]).startswith("line 2: invalid JSON")


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "list"), ('"acme"', "str"), ("42", "int"), ("null", "NoneType")])
def test_a_line_that_is_not_an_object_is_reported(text: str, kind: str) -> None:
    assert problems(text) == [(None, f"expected a JSON object, got {kind}")]


def test_duplicate_keys_are_reported() -> None:
    assert problems('{"tenant_id": "acme", "namespace": "a", "pointer_summary": "x", "heat": 1, "heat": 2}') == [
        (None, "key(s) 'heat' appear more than once")
    ]


def test_a_deeply_nested_line_is_an_error_not_a_crash() -> None:
    (problem,) = problems("[" * 100_000 + "]" * 100_000)
    assert problem[1].startswith("invalid JSON")


def test_invalid_utf8_names_the_line_and_the_other_lines_still_count() -> None:
    good = line(minimal()).encode()
    rows, errors = parse(good, b'{"tenant_id": "caf\xe9", "namespace": "n", "pointer_summary": "x"}\n', good)
    assert len(rows) == 2
    (error,) = errors
    assert (error.line, error.column) == (2, None)
    assert error.reason == "invalid UTF-8 (byte 0xe9 at position 19 of the line)"


def test_bytes_lines_are_decoded_as_utf8_with_a_byte_order_mark_tolerated() -> None:
    rows, errors = parse("\ufeff".encode() + line(minimal(pointer_summary="Zoë 🦷")).encode() + b"\r\n")
    assert errors == [] and rows[0]["pointer_summary"] == "Zoë 🦷"


def test_unknown_column_is_named() -> None:
    ((column, reason),) = problems(line(minimal(importance=3)))
    assert column == "importance"
    assert reason.startswith("unknown column (known columns: id, tenant_id")


@pytest.mark.parametrize("column", ["tenant_id", "namespace", "pointer_summary"])
def test_missing_required_column(column: str) -> None:
    row = minimal()
    del row[column]
    assert problems(line(row)) == [(column, "missing (a required column)")]


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_text_is_refused(text: str) -> None:
    assert problems(line(minimal(pointer_summary=text))) == [("pointer_summary", "must not be empty or only spaces")]


@pytest.mark.parametrize("text", ["\n\t", "\u3000", "\t \t"])
def test_a_text_of_other_whitespace_is_a_text_the_store_holds(text: str) -> None:
    # The store's CHECK is btrim(pointer_summary) <> '', and btrim trims spaces only.
    (row,), errors = parse(line(minimal(pointer_summary=text)))
    assert errors == [] and row["pointer_summary"] == text


def test_nul_character_in_text_is_refused() -> None:
    assert problems(line(minimal(pointer_summary="a\x00b"))) == [
        ("pointer_summary", "contains a NUL character, which Postgres text cannot store")
    ]


@pytest.mark.parametrize("column", ["pointer_summary", "tenant_id"])
def test_unpaired_surrogates_from_json_escapes_are_refused(column: str) -> None:
    text = line(minimal()).replace('"%s": "' % column, '"%s": "\\ud800' % column)
    assert problems(text) == [(column, "contains an unpaired surrogate, which is not valid Unicode")]


def test_wrong_vector_dimension_says_expected_and_got() -> None:
    assert problems(line(minimal(embedding=[0.1, 0.2, 0.3]))) == [("embedding", "has dimension 3, expected 4")]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_embedding_components_are_refused(literal: str) -> None:
    text = '{"tenant_id": "acme", "namespace": "n", "pointer_summary": "x", "embedding": [0.1, %s, 0.3, 0.4]}' % literal
    ((column, reason),) = problems(text)
    assert column == "embedding[1]"
    assert reason.startswith("must be a finite number (not NaN or infinity), got ")


@pytest.mark.parametrize(
    ("embedding", "column", "reason"),
    [
        ([1e300, 0.5, 0.5, 0.5], "embedding[0]", "1e+300 overflows float32, the type the vector column stores"),
        ([0.5, 0.5, 3.5e38, -1e39], "embedding[2]", "3.5e+38 overflows float32, the type the vector column stores"),
        ([1e-50, 0, 0, 0], "embedding", "is all zeros in float32"),
        ([1e-30, 0, 0, 0], "embedding", "has no usable length in float32: its squared norm underflows"),
        ([1e20, 1, 0, 0], "embedding", "has no usable length in float32: its squared norm overflows"),
    ],
)
def test_vectors_float32_cannot_store_or_compare_are_refused(embedding: list[float], column: str, reason: str) -> None:
    ((got_column, got_reason),) = problems(line(minimal(embedding=embedding)))
    assert got_column == column
    assert got_reason.startswith(reason)


def test_a_second_overflowing_component_is_counted() -> None:
    ((_, reason),) = problems(line(minimal(embedding=[0.5, 0.5, 3.5e38, -1e39])))
    assert reason.endswith("(and 1 more component(s))")


def test_vectors_near_the_float32_limits_are_kept() -> None:
    (row,), errors = parse(line(minimal(embedding=[1e-20, 0, 0, 0])), )
    assert errors == [] and row["embedding"] == [1e-20, 0.0, 0.0, 0.0]
    (row,), errors = parse(line(minimal(embedding=[1e18, -1e18, 1, 0])))
    assert errors == []


@pytest.mark.parametrize(
    ("embedding", "column", "reason"),
    [
        ([0, 0, 0, 0], "embedding", "is all zeros"),
        ([0.1, "0.2", 0.3, 0.4], "embedding[1]", "must be a number, got '0.2'"),
        ([0.1, True, 0.3, 0.4], "embedding[1]", "must be a number, got True"),
        ("[0.1, 0.2]", "embedding", "must be a list of numbers"),
        ({"values": [1, 2, 3, 4]}, "embedding", "must be a list of numbers"),
    ],
)
def test_malformed_embeddings_are_refused(embedding: Any, column: str, reason: str) -> None:
    ((got_column, got_reason),) = problems(line(minimal(embedding=embedding)))
    assert got_column == column and got_reason.startswith(reason)


def test_every_bad_component_is_named() -> None:
    assert [column for column, _ in problems(line(minimal(embedding=[0.1, "x", [], None])))] == [
        "embedding[1]", "embedding[2]", "embedding[3]"
    ]


def test_unknown_confidence_lists_the_allowed_values() -> None:
    assert problems(line(minimal(confidence="high"))) == [
        ("confidence", "must be one of 'default', 'verified', 'stale' or 'superseded', got 'high'")
    ]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("yesterday", "is not an ISO-8601 timestamp: 'yesterday'"),
        ("2025-13-01T00:00:00Z", "is not an ISO-8601 timestamp"),
        (1719830400, "must be an ISO-8601 timestamp string, got 1719830400"),
        ("2025-06-01T10:00:00", "'2025-06-01T10:00:00' has no timezone offset"),
        ("2025-06-01", "'2025-06-01' has no timezone offset"),
        ("0001-01-01T00:00:00+14:00", "'0001-01-01T00:00:00+14:00' is out of range: in UTC it falls outside the years 1 to 9999"),
        ("9999-12-31T23:59:59-10:00", "'9999-12-31T23:59:59-10:00' is out of range"),
        ("infinity", "is not an ISO-8601 timestamp"),
    ],
)
def test_bad_timestamps_are_refused(value: Any, reason: str) -> None:
    ((column, got),) = problems(line(minimal(last_recalled_at=value)))
    assert column == "last_recalled_at" and got.startswith(reason)


def test_the_extreme_timestamps_that_fit_are_kept() -> None:
    (row,), errors = parse(line(minimal(created_at="0001-01-01T00:00:00Z", updated_at="9999-12-31T23:59:59.999999Z",
                                        last_recalled_at="0001-01-01T10:00:00+10:00")))
    assert errors == []
    assert row["created_at"] == row["last_recalled_at"] == datetime(1, 1, 1, tzinfo=UTC)
    assert row["updated_at"] == datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("recall_count", "x", "must be an integer, got 'x'"),
        ("recall_count", -1, "must be at least 0, got -1"),
        ("recall_count", 2.0, "must be an integer, got 2.0"),
        ("recall_count", True, "must be an integer, got True"),
        ("recall_count", 2**40, f"must be at most 2147483647, got {2**40}"),
        ("epoch", "7", "must be an integer, got '7'"),
        ("base_utility", "high", "must be a number, got 'high'"),
        ("base_utility", False, "must be a number, got False"),
        ("base_utility", 10**400, "must be a number, got 1000"),
        ("heat", [1], "must be a number, got [1]"),
        ("pinned", "yes", "must be true or false, got 'yes'"),
        ("pinned", 1, "must be true or false, got 1"),
        ("epoch", 2**63, f"must be at most {2**63 - 1}, got {2**63}"),
        ("memory_type", "a\x00b", "contains a NUL character, which Postgres text cannot store"),
        ("embedding_model", 3, "must be a string, got 3"),
        ("id", "not-a-uuid", "is not a valid UUID: 'not-a-uuid'"),
        ("id", 42, "must be a UUID string, got 42"),
        ("tenant_id", 7, "must be a string, got 7"),
    ],
)
def test_wrong_types_and_ranges_name_column_and_value(column: str, value: Any, reason: str) -> None:
    ((got_column, got_reason),) = problems(line(minimal(**{column: value})))
    assert got_column == column and got_reason.startswith(reason)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_scalars_are_refused(literal: str) -> None:
    text = '{"tenant_id": "acme", "namespace": "n", "pointer_summary": "x", "heat": %s}' % literal
    ((column, reason),) = problems(text)
    assert column == "heat" and reason.startswith("must be a finite number")


def test_merged_into_requires_archived_at() -> None:
    assert problems(line(minimal(id=NODE_ID, merged_into=OTHER_ID))) == [
        ("merged_into", "is set but archived_at is not (only archived nodes can be merged)")
    ]
    rows, errors = parse(line(minimal(id=NODE_ID, merged_into=OTHER_ID, archived_at="2025-06-01T00:00:00Z")))
    assert errors == [] and rows[0]["merged_into"] == uuid.UUID(OTHER_ID)


def test_a_bad_archived_at_is_reported_once_not_as_a_missing_one() -> None:
    assert problems(line(minimal(merged_into=OTHER_ID, archived_at="soon"))) == [
        ("archived_at", "is not an ISO-8601 timestamp: 'soon'")
    ]


def test_a_node_cannot_be_merged_into_itself() -> None:
    assert problems(line(minimal(id=NODE_ID, merged_into=NODE_ID, archived_at="2025-06-01T00:00:00Z"))) == [
        ("merged_into", "points to the node itself")
    ]


def test_each_line_is_checked_on_its_own() -> None:
    """Duplicate ids and merge targets are rules between lines: core/import_links.py's."""
    rows, errors = parse(line(minimal(id=NODE_ID)), line(minimal(id=NODE_ID.upper(), pointer_summary="again")))
    assert errors == [] and [row["id"] for row in rows] == [uuid.UUID(NODE_ID)] * 2


def test_an_invalid_line_still_tells_which_id_it_names() -> None:
    (parsed,) = iter_jsonl([line(minimal(id=NODE_ID, heat="hot"))], dimension=DIMENSION)
    assert parsed.row is None and parsed.named_id == uuid.UUID(NODE_ID)
    (parsed,) = iter_jsonl([line(minimal(id="nope", heat="hot"))], dimension=DIMENSION)
    assert parsed.named_id is None


def test_every_problem_of_a_line_is_reported_and_parsing_continues() -> None:
    bad = line({"namespace": "n", "pointer_summary": "x", "heat": "hot", "confidence": "sure", "colour": "red",
                "recall_count": -3, "embedding": [1, 2]})
    rows, errors = parse(line(minimal()), bad, "not json", line(minimal(pointer_summary="last")))
    assert [row["pointer_summary"] for row in rows] == ["Dana prefers email.", "last"]
    assert [(error.line, error.column) for error in errors] == [
        (2, "tenant_id"), (2, "embedding"), (2, "heat"), (2, "recall_count"), (2, "confidence"), (2, "colour"),
        (3, None),
    ]
    assert errors[-1].reason.startswith("invalid JSON")
    assert errors[0].message == "tenant_id: missing (a required column)"


def test_the_model_can_be_used_on_its_own() -> None:
    row = MemoryNodeRow.model_validate(minimal(embedding=[1.0, 0.0]))  # no context: any width
    assert row.embedding_model == "imported" and row.memory_type == "semantic"
    with pytest.raises(ValidationError):
        MemoryNodeRow.model_validate(minimal(heat="hot"))


# ---- tenant and namespace names -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "must not be empty"),
        (" acme", "leading or trailing whitespace"),
        ("acme\n", "leading or trailing whitespace"),
        ("ac\x07me", "control character"),
        ("x" * 201, "201 characters long; at most 200"),
    ],
)
def test_default_name_check_refuses_unusable_names(value: str, problem: str) -> None:
    ((column, reason),) = problems(line(minimal(namespace=value)))
    assert column == "namespace" and reason.startswith("namespace") and problem in reason


@pytest.mark.parametrize("value", ["acme", "support-bot", "Équipe_Nord.v2", "x" * 200])
def test_default_name_check_accepts_ordinary_names(value: str) -> None:
    validate_name("tenant", value)


def test_a_supplied_name_validator_is_used_with_the_kind() -> None:
    calls: list[tuple[str, str]] = []

    def strict(kind: str, value: str) -> None:
        calls.append((kind, value))
        if "," in value:
            raise ValueError(f"{kind} key {value!r} contains ','")

    rows, errors = parse_jsonl(
        [line(minimal(namespace="a,b")), line(minimal())], dimension=DIMENSION, validate_name=strict
    )
    assert errors == [LineError(1, "namespace", "namespace key 'a,b' contains ','")]
    assert len(rows) == 1
    assert ("tenant", "acme") in calls and ("namespace", "support-bot") in calls


# ---- formatting and round trip ---------------------------------------------------------------


def full_row() -> dict[str, Any]:
    return {
        "id": uuid.UUID(NODE_ID),
        "tenant_id": "acme",
        "namespace": "support-bot",
        "memory_type": "preference",
        "pointer_summary": 'Dana said "email only"\nand signs as Dana · Brightline 🦷',
        "embedding": [0.1, -0.2, 0.30000000000000004, 1e-12],
        "embedding_model": "lexical-ngram-v1/4",
        "base_utility": 0.75,
        "heat": 1.5,
        "pinned": True,
        "recall_count": 4,
        "last_recalled_at": datetime(2025, 6, 1, 9, 30, 15, 250, tzinfo=UTC),
        "epoch": 12,
        "confidence": "stale",
        "archived_at": datetime(2025, 6, 2, tzinfo=UTC),
        "merged_into": uuid.UUID(OTHER_ID),
        "created_at": datetime(2024, 1, 1, tzinfo=UTC),
        "updated_at": datetime(2025, 6, 2, tzinfo=UTC),
        "superseded_by": uuid.UUID(OTHER_ID),
        "valid_until": datetime(2025, 5, 1, tzinfo=UTC),
    }


def test_a_superseded_row_names_its_successor() -> None:
    _, errors = parse(json.dumps({**minimal(), "confidence": "superseded"}))
    assert [(e.column, e.reason) for e in errors] == [
        (None, "confidence is superseded but superseded_by is not set (the newer node's id)")]
    _, errors = parse(json.dumps({**minimal(), "id": NODE_ID, "superseded_by": NODE_ID, "confidence": "superseded"}))
    assert [(e.column, e.reason) for e in errors] == [("superseded_by", "points to the node itself")]


def test_format_writes_one_line_with_every_column_in_order() -> None:
    text = format_node_jsonl(full_row())
    assert "\n" not in text
    document = json.loads(text)
    assert list(document) == list(MEMORY_NODE_COLUMNS)
    assert document["id"] == NODE_ID
    assert document["last_recalled_at"] == "2025-06-01T09:30:15.000250+00:00"
    assert document["pointer_summary"].endswith("🦷")


def test_format_then_parse_gives_back_the_same_row() -> None:
    row = full_row()
    (parsed,), errors = parse(format_node_jsonl(row))
    assert errors == []
    assert parsed == row


def test_missing_columns_are_written_as_null_and_private_keys_dropped() -> None:
    document = json.loads(format_node_jsonl({**minimal(), "_embed": True, "search_rank": 3}))
    assert set(document) == set(MEMORY_NODE_COLUMNS)
    assert document["embedding"] is None and document["id"] is None


def test_numpy_and_vector_like_values_are_converted() -> None:
    class VectorLike:  # pgvector.Vector's interface
        def to_list(self) -> list[float]:
            return [1.0, 0.0, 0.0, 0.0]

    row = {**minimal(), "embedding": np.array([0.5, 0.25, -1, 0], dtype=np.float32), "heat": np.float64(2.5), "recall_count": np.int64(3)}
    (parsed,), errors = parse(format_node_jsonl(row))
    assert errors == []
    assert parsed["embedding"] == [0.5, 0.25, -1.0, 0.0]
    assert (parsed["heat"], parsed["recall_count"]) == (2.5, 3)
    (parsed,), _ = parse(format_node_jsonl({**minimal(), "embedding": VectorLike()}))
    assert parsed["embedding"] == [1.0, 0.0, 0.0, 0.0]


def test_format_refuses_what_would_not_round_trip() -> None:
    with pytest.raises(ValueError, match="naive"):
        format_node_jsonl({**minimal(), "created_at": datetime(2025, 1, 1)})
    with pytest.raises(ValueError, match="cannot be exported"):
        format_node_jsonl({**minimal(), "heat": math.nan})


_finite = st.floats(allow_nan=False, allow_infinity=False)
_aware_datetimes = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]),
)
_names = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zs", "Zl", "Zp")), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(
    node_id=st.one_of(st.none(), st.uuids()),
    tenant=_names,
    namespace=_names,
    text=st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), min_size=1).filter(str.strip),
    embedding=st.one_of(
        # Vectors float32 can store and pgvector can compare (core/jsonl_rows refuses others).
        st.none(), st.lists(st.floats(-1e6, 1e6), min_size=DIMENSION, max_size=DIMENSION)
        .filter(lambda vector: any(abs(component) > 1e-6 for component in vector))
    ),
    utility=_finite,
    recall=st.integers(0, 2**31 - 1),
    last_recalled=st.one_of(st.none(), _aware_datetimes),
    archived=st.one_of(st.none(), _aware_datetimes),
    confidence=st.sampled_from(["default", "verified", "stale"]),
)
def test_any_valid_row_round_trips(
    node_id, tenant, namespace, text, embedding, utility, recall, last_recalled, archived, confidence
) -> None:
    row = {
        "id": node_id, "tenant_id": tenant, "namespace": namespace, "pointer_summary": text,
        "embedding": embedding, "base_utility": utility, "recall_count": recall,
        "last_recalled_at": last_recalled, "archived_at": archived, "confidence": confidence,
        "merged_into": uuid.uuid4() if archived is not None and node_id is not None else None,
    }
    (parsed,), errors = parse(format_node_jsonl(row))
    assert errors == []
    for column, value in row.items():
        if isinstance(value, datetime):
            assert parsed[column] == value  # same instant (normalised to UTC)
        else:
            assert parsed[column] == value
    # And formatting the parsed row is a fixed point.
    assert format_node_jsonl(parsed) == format_node_jsonl(parse(format_node_jsonl(parsed))[0][0])

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

from curation_pipeline.core.jsonl_rows import (
    DATABASE_DEFAULTED_COLUMNS,
    MEMORY_NODE_COLUMNS,
    LineError,
    format_node_jsonl,
    parse_jsonl,
    validate_name_minimal,
)

DIMENSION = 4
NODE_ID = "5b0f3a52-6f1e-4d4b-9a55-0d6f7f1f2a10"
OTHER_ID = "0c1d4d0e-8e55-4c1c-b0a3-6a3a5d9b8f21"


def minimal(**overrides: Any) -> dict[str, Any]:
    row = {"tenant_id": "acme", "namespace": "support-bot", "pointer_summary": "Dana prefers email."}
    row.update(overrides)
    return row


def line(row: dict[str, Any]) -> str:
    return json.dumps(row)


def parse(*lines: str) -> tuple[list[dict[str, Any]], list[LineError]]:
    return parse_jsonl(lines, dimension=DIMENSION)


def messages(*lines: str) -> list[str]:
    rows, errors = parse(*lines)
    assert not rows
    return [error.message for error in errors]


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


# ---- errors: one per problem, with the line number -----------------------------------------


def test_invalid_json_is_reported_with_line_number() -> None:
    rows, errors = parse(line(minimal()), '{"tenant_id": "acme",')
    assert len(rows) == 1
    assert len(errors) == 1 and errors[0].line == 2
    assert errors[0].message.startswith("invalid JSON")
    assert str(errors[0]).startswith("line 2: invalid JSON")


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "list"), ('"acme"', "str"), ("42", "int"), ("null", "NoneType")])
def test_a_line_that_is_not_an_object_is_reported(text: str, kind: str) -> None:
    assert messages(text) == [f"expected a JSON object, got {kind}"]


def test_duplicate_keys_are_reported() -> None:
    assert messages('{"tenant_id": "acme", "namespace": "a", "pointer_summary": "x", "heat": 1, "heat": 2}') == [
        "key(s) 'heat' appear more than once"
    ]


def test_unknown_column_is_named() -> None:
    (message,) = messages(line(minimal(importance=3)))
    assert message.startswith("unknown column 'importance'")
    assert "tenant_id" in message  # the known columns are listed


@pytest.mark.parametrize("column", ["tenant_id", "namespace", "pointer_summary"])
def test_missing_required_column(column: str) -> None:
    row = minimal()
    del row[column]
    assert messages(line(row)) == [f"missing {column}"]


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_is_refused(text: str) -> None:
    assert messages(line(minimal(pointer_summary=text))) == ["pointer_summary must not be empty"]


def test_nul_character_in_text_is_refused() -> None:
    assert messages(line(minimal(pointer_summary="a\x00b"))) == [
        "pointer_summary contains a NUL character, which Postgres text cannot store"
    ]


@pytest.mark.parametrize("column", ["pointer_summary", "tenant_id"])
def test_unpaired_surrogates_from_json_escapes_are_refused(column: str) -> None:
    text = line(minimal()).replace('"%s": "' % column, '"%s": "\\ud800' % column)
    assert messages(text) == [f"{column} contains an unpaired surrogate, which is not valid Unicode"]


def test_wrong_vector_dimension_says_expected_and_got() -> None:
    assert messages(line(minimal(embedding=[0.1, 0.2, 0.3]))) == ["embedding has dimension 3, expected 4"]


@pytest.mark.parametrize(
    ("literal", "problem"),
    [("NaN", "embedding[1] is NaN"), ("Infinity", "embedding[1] is infinite"), ("-Infinity", "embedding[1] is infinite"), ("1e999", "embedding[1] is infinite")],
)
def test_non_finite_embedding_components_are_refused(literal: str, problem: str) -> None:
    text = '{"tenant_id": "acme", "namespace": "n", "pointer_summary": "x", "embedding": [0.1, %s, 0.3, 0.4]}' % literal
    assert messages(text) == [problem]


@pytest.mark.parametrize(
    ("embedding", "problem"),
    [
        ([0, 0, 0, 0], "embedding is all zeros"),
        ([0.1, "0.2", 0.3, 0.4], "embedding[1] must be a number, got '0.2'"),
        ([0.1, True, 0.3, 0.4], "embedding[1] must be a number, got True"),
        ("[0.1, 0.2]", "embedding must be a list of numbers"),
        ({"values": [1, 2, 3, 4]}, "embedding must be a list of numbers"),
    ],
)
def test_malformed_embeddings_are_refused(embedding: Any, problem: str) -> None:
    (message,) = messages(line(minimal(embedding=embedding)))
    assert message.startswith(problem)


def test_unknown_confidence_lists_the_allowed_values() -> None:
    assert messages(line(minimal(confidence="high"))) == ["confidence must be one of default, verified, stale, got 'high'"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("yesterday", "last_recalled_at is not an ISO-8601 timestamp: 'yesterday'"),
        ("2025-13-01T00:00:00Z", "last_recalled_at is not an ISO-8601 timestamp"),
        (1719830400, "last_recalled_at must be an ISO-8601 timestamp string, got 1719830400"),
        ("2025-06-01T10:00:00", "last_recalled_at '2025-06-01T10:00:00' has no timezone offset"),
        ("2025-06-01", "last_recalled_at '2025-06-01' has no timezone offset"),
    ],
)
def test_bad_timestamps_are_refused(value: Any, problem: str) -> None:
    (message,) = messages(line(minimal(last_recalled_at=value)))
    assert message.startswith(problem)


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("recall_count", "x", "recall_count must be a non-negative integer, got 'x'"),
        ("recall_count", -1, "recall_count must be a non-negative integer, got -1"),
        ("recall_count", 2.0, "recall_count must be a non-negative integer, got 2.0"),
        ("recall_count", True, "recall_count must be a non-negative integer, got True"),
        ("recall_count", 2**40, f"recall_count must be a non-negative integer, got {2**40}"),
        ("epoch", "7", "epoch must be a non-negative integer, got '7'"),
        ("base_utility", "high", "base_utility must be a number, got 'high'"),
        ("base_utility", False, "base_utility must be a number, got False"),
        ("heat", [1], "heat must be a number, got [1]"),
        ("pinned", "yes", "pinned must be true or false, got 'yes'"),
        ("pinned", 1, "pinned must be true or false, got 1"),
        ("memory_type", "", "memory_type must not be empty"),
        ("memory_type", " semantic", "memory_type must be a short name"),
        ("embedding_model", 3, "embedding_model must be a string, got 3"),
        ("id", "not-a-uuid", "id is not a valid UUID: 'not-a-uuid'"),
        ("id", 42, "id must be a UUID string, got 42"),
        ("tenant_id", 7, "tenant_id must be a string, got 7"),
    ],
)
def test_wrong_types_and_ranges_name_column_and_value(column: str, value: Any, problem: str) -> None:
    (message,) = messages(line(minimal(**{column: value})))
    assert message.startswith(problem)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_scalars_are_refused(literal: str) -> None:
    text = '{"tenant_id": "acme", "namespace": "n", "pointer_summary": "x", "heat": %s}' % literal
    (message,) = messages(text)
    assert message.startswith("heat must be a finite number")


def test_merged_into_requires_archived_at() -> None:
    assert messages(line(minimal(id=NODE_ID, merged_into=OTHER_ID))) == [
        "merged_into is set but archived_at is not (only archived nodes can be merged)"
    ]
    rows, errors = parse(line(minimal(id=NODE_ID, merged_into=OTHER_ID, archived_at="2025-06-01T00:00:00Z")))
    assert errors == [] and rows[0]["merged_into"] == uuid.UUID(OTHER_ID)


def test_a_node_cannot_be_merged_into_itself() -> None:
    assert messages(line(minimal(id=NODE_ID, merged_into=NODE_ID, archived_at="2025-06-01T00:00:00Z"))) == [
        "merged_into points to the node itself"
    ]


def test_duplicate_id_in_the_file_points_to_the_first_occurrence() -> None:
    rows, errors = parse(
        line(minimal(id=NODE_ID)),
        line(minimal(id=OTHER_ID)),
        line(minimal(id=NODE_ID.upper(), pointer_summary="again")),  # same uuid, other spelling
    )
    assert len(rows) == 2
    assert errors == [LineError(3, f"duplicate id {NODE_ID} (first seen on line 1)")]


def test_an_id_on_an_invalid_line_does_not_claim_the_id() -> None:
    rows, errors = parse(line(minimal(id=NODE_ID, heat="hot")), line(minimal(id=NODE_ID)))
    assert [error.line for error in errors] == [1]
    assert len(rows) == 1 and rows[0]["id"] == uuid.UUID(NODE_ID)


def test_every_problem_of_a_line_is_reported_and_parsing_continues() -> None:
    bad = line({"namespace": "n", "pointer_summary": "x", "heat": "hot", "confidence": "sure", "colour": "red"})
    rows, errors = parse(line(minimal()), bad, "not json", line(minimal(pointer_summary="last")))
    assert [row["pointer_summary"] for row in rows] == ["Dana prefers email.", "last"]
    assert [(error.line, error.message.split(" (")[0]) for error in errors] == [
        (2, "unknown column 'colour'"),
        (2, "missing tenant_id"),
        (2, "heat must be a number, got 'hot'"),
        (2, "confidence must be one of default, verified, stale, got 'sure'"),
        (3, errors[-1].message),
    ]
    assert errors[-1].message.startswith("invalid JSON")


# ---- tenant and namespace names -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "must not be empty"),
        (" acme", "leading or trailing whitespace"),
        ("acme\n", "control character"),
        ("ac\x07me", "control character"),
        ("x" * 201, "201 characters long, at most 200"),
    ],
)
def test_default_name_check_refuses_unusable_names(value: str, problem: str) -> None:
    (message,) = messages(line(minimal(namespace=value)))
    assert message.startswith("invalid namespace: namespace") and problem in message


@pytest.mark.parametrize("value", ["acme", "support-bot", "Équipe_Nord.v2", "x" * 200])
def test_default_name_check_accepts_ordinary_names(value: str) -> None:
    validate_name_minimal("tenant", value)


def test_a_supplied_name_validator_is_used_with_the_kind() -> None:
    calls: list[tuple[str, str]] = []

    def strict(kind: str, value: str) -> None:
        calls.append((kind, value))
        if "," in value:
            raise ValueError(f"{kind} key {value!r} contains ','")

    rows, errors = parse_jsonl(
        [line(minimal(namespace="a,b")), line(minimal())], dimension=DIMENSION, validate_name=strict
    )
    assert errors == [LineError(1, "invalid namespace: namespace key 'a,b' contains ','")]
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
    }


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
_names = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(
    node_id=st.one_of(st.none(), st.uuids()),
    tenant=_names,
    namespace=_names,
    text=st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), min_size=1).filter(str.strip),
    embedding=st.one_of(
        st.none(), st.lists(_finite, min_size=DIMENSION, max_size=DIMENSION).filter(any)
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

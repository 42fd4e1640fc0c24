"""Partition keys: reversible, accepted by the Dagster UI and CLI, clear errors for bad names."""

from __future__ import annotations

import pytest
from dagster._core.definitions.partitions.utils.base import INVALID_PARTITION_SUBSTRINGS
from hypothesis import given
from hypothesis import strategies as st

from curation_pipeline.core.partition_keys import (
    InvalidNameError,
    parse_partition_key,
    partition_key,
)

# Characters the UI rejects in a dynamic partition key, or the CLI splits on.
UI_REJECTED = {",", "[", "]", "|", " "}

names = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda s: s == s.strip())


@given(names, names)
def test_keys_round_trip_and_use_only_safe_characters(tenant, namespace):
    key = partition_key(tenant, namespace)
    assert parse_partition_key(key) == (tenant, namespace)
    assert not UI_REJECTED & set(key)
    assert not any(bad in key for bad in INVALID_PARTITION_SUBSTRINGS)


def test_readable_names_stay_readable():
    assert partition_key("acme", "support-bot") == "acme:support-bot"
    assert partition_key("acme corp", "a,b") == "acme%20corp:a%2Cb"
    assert partition_key("v1...v2", "x:y") == "v1%2E%2E%2Ev2:x%3Ay"


@pytest.mark.parametrize(
    ("tenant", "namespace", "message"),
    [
        ("", "ns", "tenant must not be empty"),
        ("acme", "", "namespace must not be empty"),
        (" acme", "ns", "leading or trailing whitespace"),
        ("acme", "line\nbreak", "control character"),
        ("a" * 201, "ns", "at most 200"),
        (None, "ns", "tenant must be a string"),
    ],
)
def test_invalid_names_are_refused_with_the_reason(tenant, namespace, message):
    with pytest.raises(InvalidNameError, match=message):
        partition_key(tenant, namespace)


@pytest.mark.parametrize("key", ["acme", "a:b:c", ":ns", "acme:", "acme:support%2Dbot", "a:%zz", "a:%FF"])
def test_malformed_keys_are_refused(key):
    with pytest.raises(InvalidNameError):
        parse_partition_key(key)

"""A number written with its unit is a measurement, not a code: "180ms" and "120ms" are two
values of one response time, and a value of another dimension is never the new one."""

from __future__ import annotations

import pytest

from curation_pipeline.core.judged_updates import judged_update
from curation_pipeline.core.measures import measurement_kind, unit_of
from curation_pipeline.core.subjects import subject_keys
from curation_pipeline.core.supersession import LOOK_ALIKE, NONE, PARTIAL, UPDATE, compare_versions


@pytest.mark.parametrize(("token", "kind"), [
    ("180ms", "number:duration"),
    ("1.5GB", "number:data"),
    ("512mb", "number:data"),
    ("60fps", "number:rate"),
    ("2.3x", "number:factor"),
    ("2.5s", "number:duration"),  # glued to "s": seconds, but for decades and ages
    ("5s", "number:duration"),
    # Codes, ordinals and ambiguous units stay what they were.
    ("S3", None),
    ("v2", None),
    ("4th", None),
    ("1990s", None),
    ("30s", "number:duration"),  # seconds, as "1.5s" is (ages "in her 30s" stay one kind on both sides)
    ("exp-0412", None),
    ("5m", None),
    ("4G", None),  # a network generation
    ("4K", None),  # a resolution
])
def test_a_number_glued_to_a_known_unit_is_a_measurement_and_nothing_else_is(token, kind):
    assert measurement_kind(token) == kind


def test_a_unit_written_apart_is_read_too():
    assert unit_of("ms") == "duration" and unit_of("GB") == "data"
    assert unit_of("minutes") is None  # a spelled-out unit is a value word of its own


@pytest.mark.parametrize(("older", "newer", "changed"), [
    # BEAM's shape: an event note, then the same measure "decreased to" a new value, with an
    # unchanged count beside it (20 requests): the count says nothing of what 120ms measures.
    ("Measured login API response time at 180ms under 20 concurrent requests.",
     "The login API response time has decreased to 120ms under 20 concurrent requests.",
     "number:duration '180ms' -> '120ms'"),
    ("The /digest endpoint response time is 2.5s.", "The /digest endpoint response time was reduced to 1.2s.",
     "number:duration '2.5s' -> '1.2s'"),
    ("Measured login API response time at 180 ms under 20 concurrent requests.",
     "The login API response time has decreased to 120 ms under 20 concurrent requests.",
     "number:duration '180' -> '120'"),
    ("The Redis cache has a maxmemory of 512MB.", "The Redis cache now has a maxmemory of 1GB.",
     "number:data '512mb' -> '1gb'"),
    # The doer before the cue names no attribute: the attribute is after it ("my budget ceiling").
    ("I set a $700 budget ceiling.", "I recently adjusted my budget ceiling to $750.", "number:money '700' -> '750'"),
])
def test_a_measurement_replaced_by_another_of_its_dimension_is_an_update(older, newer, changed):
    check = compare_versions(older, newer)
    assert check.verdict == UPDATE
    assert [change for update in check.updates for change in update.changed] == [changed]


@pytest.mark.parametrize(("older", "newer", "verdicts"), [
    # Another dimension is another measure, not a new value.
    ("Measured login API response time at 180ms under 20 concurrent requests.",
     "Redis memory usage has now reached 200MB with 15,000 keys.", {NONE}),
    ("The cache warm-up takes 300ms.", "The cache limit was raised to 1GB.", {NONE}),
    # Seconds are no count of users.
    ("Reduced the /digest endpoint time from 2.5s to 1.2s by caching user data.",
     "The number of users receiving the daily digest has grown to 1,500.", {NONE}),
    # Another thing's measure of the same dimension: never superseded.
    ("The Redis cache has a maxmemory of 512MB.", "The Postgres cache now has a maxmemory of 1GB.", {LOOK_ALIKE, NONE}),
    # Another attribute after the doer: not the budget.
    ("I set a $700 budget for the new laptop.", "I recently adjusted my travel allowance to $750.", {NONE}),
    # Two phrases without a verb are no frame whose object was swapped, and no update either.
    ("The laptop has good camera and battery life.", "The laptop has good camera and battery features.", {NONE, PARTIAL}),
])
def test_a_measurement_of_another_dimension_thing_or_attribute_is_not_replaced(older, newer, verdicts):
    assert compare_versions(older, newer).verdict in verdicts


def test_a_code_with_digits_is_still_a_code():
    check = compare_versions("Uploads are stored in bucket S3-eu.", "Uploads are now stored in bucket S4-eu.")
    assert [change for update in check.updates for change in update.changed] == ["identifier 's3-eu' -> 's4-eu'"]


def test_a_measurement_is_not_what_a_memory_is_about():
    keys = subject_keys("The login API response time is 180ms on build B-17.")
    assert "id:B-17" in keys and not any(key.startswith("id:180") for key in keys)


@pytest.mark.parametrize(("token", "kind"), [
    ("15-minute", "number:duration"), ("30-day", "number:duration"), ("2-hour", "number:duration"),
    ("6-week", "number:duration"), ("5-year", "number:duration"),
    # Counter-examples: a number joined by a hyphen to a word that is no length of time.
    ("3-way", None), ("4-star", None), ("2-factor", None),
])
def test_a_number_joined_to_a_spelled_out_length_of_time_is_a_duration(token, kind):
    assert measurement_kind(token) == kind


def test_a_length_joined_by_a_hyphen_is_replaced_by_the_same_length_spelled_apart():
    # "5-minute" was a code: "10 minutes" named nothing it replaced.
    assert compare_versions("Set a 5-minute timeout on the payment webhook.",
                            "The payment webhook timeout is now 10 minutes.").verdict == UPDATE
    assert judged_update("Started a 30-day free trial of Figma on May 3.",
                         "The Figma free trial was extended to 45 days.").carried_text == (
        "The Figma free trial was extended to 45 days. Started a free trial of Figma on May 3.")
    # Counter-examples: two events, and a length that says which window it is, as a code would.
    assert compare_versions("Attended a 3-day workshop on Kubernetes in March.",
                            "Attended a 5-day workshop on Terraform in May.").verdict != UPDATE
    assert not judged_update("The 30-day return window at Acme applies to shoes.",
                             "The 60-day return window at Acme applies to electronics.").taken

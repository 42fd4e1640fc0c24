"""A number, code or ordinal inside a name is part of the subject, not its value. Pure.

"Ticket 3301 ..." and "Ticket 3302 ..." are two tickets: superseding one by the other hides a
fact that is still current (issue "Integrity, round three", point 3). A number after the verb is
still a value: "The printer is on floor 3." / "... on floor 5." is an update.
"""

from __future__ import annotations

import pytest

from curation_pipeline.core.supersession import UPDATE, compare_versions


@pytest.mark.parametrize(("older", "newer"), [
    ("Ticket 3301 is about a failed password reset.", "Ticket 3302 is about a failed login."),
    ("Ticket 3301 is assigned to Dana.", "Ticket 3302 is assigned to Sam."),
    ("Room 101 is booked for the design review.", "Room 205 is booked for the design review."),
    ("Payment 1 is due on March 5.", "Payment 2 is due on April 5."),
    ("Server 1 runs Postgres 16.", "Server 2 runs Postgres 15."),
    ("Invoice 4471 was paid on May 2.", "Invoice 4472 was paid on May 9."),
    ("Port 5432 is used by Postgres.", "Port 6379 is used by Redis."),
    ("Child 1 is allergic to peanuts.", "Child 2 is allergic to shellfish."),
    ("The export for invoice 4471 failed at 02:00.", "The export for invoice 4472 failed at 03:00."),
    ("The gym opens at 6:00 on weekdays.", "The gym opens at 8:00 on weekends."),
    # A record's code after the verb still names the record: two events on two tickets.
    ("Dana Reyes postponed the SSO rollout on ticket T-1073.", "Dana Reyes postponed the SSO rollout on ticket T-1065."),
    ("Dana closed ticket 1073.", "Dana closed ticket 1065."),
    ("Sam merged PR #212 into main.", "Sam merged PR #215 into main."),
    # A capitalised "-ing" word before a number may be a name.
    ("Building 4 is closed for repairs.", "Building 7 is closed for repairs."),
    # A count after a past verb is how many, and two such events are two events, not an update.
    ("Completed 12 geometry problems on Monday.", "Completed 15 geometry problems on Tuesday."),
])
def test_a_numbered_name_is_another_thing_not_a_new_value(older, newer):
    assert compare_versions(older, newer).verdict != UPDATE


@pytest.mark.parametrize(("older", "newer"), [
    # Counter-examples: the number is the value, after the verb or of a quantity.
    ("The office printer is on floor 3.", "The office printer is on floor 5."),
    ("Postgres listens on port 5432.", "Postgres now listens on port 6543."),
    ("The support team has 5 engineers.", "The support team has 7 engineers."),
    ("Ticket 3301 is assigned to Dana.", "Ticket 3301 is now assigned to Sam."),
    ("The gym opens at 6:00 on weekdays.", "The gym now opens at 7:00 on weekdays."),
    # A place or a version after the verb is not a record: a new one is a new value.
    ("We run Postgres version 15.", "We run Postgres version 16."),
    ("The refund for order 4471 is 30 dollars.", "The refund for order 4471 is now 45 dollars."),
    # A record's code in a state, not an event: where the bug is tracked now.
    ("The Nettle login bug is tracked in ticket OPS-4412.", "The Nettle login bug is tracked in ticket NET-118."),
    # A day after a month is a date, not a name, even after "for" or "of".
    ("The inspection is booked for June 4.", "The inspection was moved to June 11."),
    ("The deadline of April 1 is firm.", "The deadline of April 5 is firm."),
    # A count or share after a verb is how many, not which: a newer one that says it changed
    # is its new value.
    ("Achieved 65% test coverage on the billing module.", "Test coverage on the billing module has increased to 78%."),
    ("The portfolio page is highlighting 5 success stories.", "The portfolio page is now highlighting 7 success stories."),
])
def test_a_number_that_is_the_value_is_still_an_update(older, newer):
    assert compare_versions(older, newer).verdict == UPDATE

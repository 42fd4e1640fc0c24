"""A trusted judge's "update" (CURATOR_JUDGE_TRUSTED): the judge reads which attribute changed;
the words check that the newer memory states a current value, that a value gave way to one of
its family, and that nothing of the older memory is lost."""

from __future__ import annotations

import pytest

from curation_pipeline.core.judged_updates import ENTANGLED, NO_CHANGE, TWO_THINGS, judged_update
from curation_pipeline.core.trusted_updates import NOT_ASSERTED, family, trusted_update

# Updates as people write them: the checked reading finds no shared frame, so it refuses each
# whatever the judge says; a trusted judge's "update" supersedes.
TAKEN_WHEN_TRUSTED = [
    ("Hearth's CI pipeline takes about 25 minutes.", "With caching, Hearth CI finishes in 90 seconds."),
    ("The Vantage monorepo contains 37 microservices.", "Consolidation brought Vantage down to 22 services."),
    ("Dentist appointment with Dr. Okafor on March 14 at 10am.", "Moved the Dr. Okafor visit to March 21, same time."),
    # The capital that opens the older note reads as a name; the newer memory writes the word.
    ("Lease on the Dunmore apartment runs 6 months.", "Extended the Dunmore lease to 2 years."),
]


@pytest.mark.parametrize(("older", "newer"), TAKEN_WHEN_TRUSTED)
def test_a_trusted_judges_update_supersedes_what_the_words_cannot_read(older, newer):
    assert not judged_update(older, newer).taken
    assert trusted_update(older, newer).taken


def test_what_the_update_leaves_is_carried_without_the_replaced_value():
    # "10am" is no new value of the time: it stays said, the old date goes.
    taken = trusted_update("Dentist appointment with Dr. Okafor on March 14 at 10am.",
                           "Moved the Dr. Okafor visit to March 21, same time.")
    assert taken.carried_text == ("Moved the Dr. Okafor visit to March 21, same time. "
                                  "Dentist appointment with Dr. Okafor at 10am.")
    assert [change["changed"] for change in taken.changes] == [["when"]]


def test_an_older_statement_the_update_does_not_touch_is_carried_whole():
    taken = trusted_update("The Vantage monorepo contains 37 microservices. It deploys to Fly.io.",
                           "Consolidation brought Vantage down to 22 services.")
    assert taken.taken and taken.carried_text == ("Consolidation brought Vantage down to 22 services. "
                                                  "It deploys to Fly.io.")


@pytest.mark.parametrize("older", ["Haircut March 20. Dentist March 14.", "Dentist March 14. Haircut March 20."])
def test_a_new_value_goes_to_the_claim_the_newer_memory_speaks_of_and_the_other_is_carried(older):
    taken = trusted_update(older, "Dentist moved to March 21.")
    assert taken.taken and taken.carried_text == "Dentist moved to March 21. Haircut March 20."
    assert [change["old"] for change in taken.changes] == ["Dentist March 14"]


def test_of_several_claims_none_gives_way_to_a_value_the_newer_memory_names_no_owner_of():
    # Which appointment moved? The shared month says nothing: nothing is superseded.
    assert trusted_update("Haircut March 20. Dentist March 14.", "Moved it to March 21.").refused == NO_CHANGE


def test_one_office_of_two_wordings_takes_a_new_holder():
    # Counter-example of one noun "of" two things: the same office, said another way round.
    taken = trusted_update("The head of marketing at Quarry is Ana Reyes.",
                           "Ben Osei took over as head of marketing at Quarry.")
    assert taken.taken


def test_the_checked_reading_stands_where_it_takes_the_verdict():
    older, newer = "The office printer is on floor 3.", "The office printer is on floor 5."
    assert trusted_update(older, newer) == judged_update(older, newer)


# Counter-examples: whatever the judge says, these replace nothing, or would hide a fact.
REFUSED_WHEN_TRUSTED = [
    # Not a current value: a plan, an intention weighed, a question, a denial, an exception.
    ("Drives a 2014 Honda Civic.", "Will trade in the Civic once the Niro arrives in March.", NOT_ASSERTED),
    ("The standup is at 9:30am.", "Thinking of moving the standup to 10am.", NOT_ASSERTED),
    ("The standup is at 9:30am.", "Should the standup move to 10am?", NOT_ASSERTED),
    ("The basic plan costs $12.", "Didn't raise the basic plan to $15 after all.", NOT_ASSERTED),
    ("The store closes at 6pm.", "The store closes at 9pm during Black Friday week only.", NOT_ASSERTED),
    # One more of a relation that holds many.
    ("Ellen's sister is Joan.", "Ellen's sister is Ruth.", TWO_THINGS),
    # Two things named apart: another kind of one noun, another owner, another qualifier.
    ("The word limit for my philosophy essay is 2,500 words.",
     "The professor raised the word limit for my history essay to 3,000 words.", TWO_THINGS),
    ("Hugo's weekday alarm is set for 6:45am.", "Hugo set his weekend alarm to 8am.", TWO_THINGS),
    ("Abigail's yoga class is at 7pm on Tuesdays.", "Abigail's spin class moved to 6pm on Tuesdays.", TWO_THINGS),
    ("The name of the current head of state in India is Ram Nath Kovind.",
     "The name of the current head of the India government is Thomas Fügmann.", TWO_THINGS),
    # Not one thing: nothing the older sentence names is named again, or the value that changed
    # names what the clause is about.
    ("Noemi Castellano approves marketing budgets above €5,000.",
     "The Lighthouse project budget has been cut to €180,000.", TWO_THINGS),
    ("Ticket SUP-3301 is about a failed password reset.", "Ticket SUP-3302 is about a failed password reset.",
     TWO_THINGS),
    # A value nothing replaces beside the replaced one, which does not cut away: superseding
    # would hide that the partner lives there too.
    ("Ana lives in Leeds with partner Tamsin.", "Ana relocated to Bristol last month.", ENTANGLED),
    # Counter-example of a word the newer memory writes: a value it does not write still needs
    # a place ("£15/hr" of the cleaner, "Harbour Lettings" of the lease).
    ("Cleaner Rosa comes Thursdays, £15/hr.", "Rosa does Mondays instead now.", ENTANGLED),
    ("Lease on the Dunmore apartment runs 6 months with Harbour Lettings.", "Extended the Dunmore lease to 2 years.",
     ENTANGLED),
    # No value gave way to one of its family.
    ("Vegetarian.", "Went fully vegan in January.", NO_CHANGE),
]


@pytest.mark.parametrize(("older", "newer", "reason"), REFUSED_WHEN_TRUSTED)
def test_a_trusted_judges_update_is_refused_where_it_would_lose_or_misdate_a_fact(older, newer, reason):
    verdict = trusted_update(older, newer)
    assert not verdict.taken and verdict.refused == reason


@pytest.mark.parametrize("newer", [
    "We'll move the standup to 10am.", "The standup may move to 10am.", "Going to move the standup to 10am.",
    "Plans to move the standup to 10am.", "Hoping to move the standup to 10am.",
    "Considering moving the standup to 10am.",
])
def test_what_will_may_or_is_meant_to_happen_replaces_nothing(newer):
    assert trusted_update("The standup is at 9:30am.", newer).refused == NOT_ASSERTED


@pytest.mark.parametrize(("older", "newer"), [
    # The month May, "about" a time, "Will" as a name and "to" of a purpose are no plan.
    ("The Kestrel standup is at 9:30am.", "Since May, Kestrel's daily sync starts at 10am."),
    ("The Kestrel standup is at 9:30am.", "Kestrel's daily sync starts at about 10am now."),
    ("Will Hart leads the billing team of 6.", "Will Hart's billing team is down to 4 people."),
    ("Cached recent translations in Redis with a 15-minute TTL.",
     "The Redis cache TTL for recent translations was extended to 20 minutes to further reduce API calls."),
])
def test_a_name_or_a_purpose_is_no_plan(older, newer):
    assert trusted_update(older, newer).taken


def test_values_give_way_within_their_family():
    assert family("number:money") == family("number:money") == "money"
    assert family("weekday") == family("number:date") == family("month") == "when"
    assert family("number:duration") == family("time unit") == "duration"
    assert family("number") != family("number:percent")  # a count is no share

"""An update of part of a memory: the older sentence, without its replaced value, stays said.

"Added the project gallery with 8 cards using Bootstrap 5.3.0." and a later "The gallery now
includes 10 cards." are an update of the count, but the older memory also says the gallery
uses Bootstrap 5.3.0, which the newer one does not. Superseding it as it is would hide that;
leaving both current keeps the outdated 8 beside the 10. The newer memory carries the older
sentence without the phrase of its replaced value ("with 8 cards"), and the older memory is
superseded, keeping its words. Pure.
"""

from __future__ import annotations

import pytest

from curation_pipeline.core.judged_updates import ENTANGLED, judged_update
from curation_pipeline.core.supersession import PARTIAL, UPDATE, compare_versions


@pytest.mark.parametrize(("older", "newer", "carried"), [
    ("Added the project gallery with 8 cards using Bootstrap 5.3.0.", "The gallery now includes 10 cards.",
     "The gallery now includes 10 cards. Added the project gallery using Bootstrap 5.3.0."),
    # "with 150 commits and 12 merged branches": the count goes, "with" stays for the branches.
    ("Pushed the Lumen release to GitHub with 150 commits and 12 merged branches.",
     "The number of commits in the Lumen release has grown to 165.",
     "The number of commits in the Lumen release has grown to 165. Pushed the Lumen release to GitHub with 12 merged branches."),
    # "of" and a value with its unit, right after the noun it measures ("time of 480ms"), go
    # together, up to a preposition ("under").
    ("Measured an average page load time of 480ms under 200 concurrent sessions with k6 0.45.",
     "The average page load time is now 390ms under 200 concurrent sessions.",
     "The average page load time is now 390ms under 200 concurrent sessions. "
     "Measured an average page load time under 200 concurrent sessions with k6 0.45."),
])
def test_the_newer_memory_carries_the_older_sentence_without_its_replaced_value(older, newer, carried):
    check = compare_versions(older, newer)
    assert check.verdict == UPDATE and check.carried_text == carried


@pytest.mark.parametrize(("older", "newer"), [
    # The replaced value is the verb's own object, not a phrase of its own: nothing to cut.
    ("The gallery has 8 cards built with Bootstrap 5.3.0.", "The gallery now includes 10 cards."),
    # The phrase of the value says when it held, with another value: cutting it would lose the date.
    ("The backlog reached 40 tickets on May 2 with Omar as owner.", "The backlog now has 55 tickets."),
    # The phrase goes on with another value: "at 3 PM Lisbon time" is not cut to "Lisbon time".
    ("The weekly sync with the design team is at 3 PM Lisbon time.", "The weekly sync with the design team moved to 4 PM."),
    # What the value counts differs ("questions" / "problems"): maybe another count, of another thing.
    ("After one week, retained 90% accuracy on a quiz with 10 probability questions.",
     "I have now increased my practice to 12 probability problems."),
    # The phrase says nothing of what it measures.
    ("Tuned the checkout API, from 800ms to 300ms by caching the cart.", "The checkout API now takes about 250ms."),
    # Two sentences: which of them to carry is not this rule's to decide.
    ("Added the project gallery with 8 cards using Bootstrap 5.3.0. Omar reviewed it.", "The gallery now includes 10 cards."),
])
def test_what_cannot_be_cut_cleanly_keeps_the_update_partial(older, newer):
    assert compare_versions(older, newer).verdict != UPDATE


def test_a_link_word_goes_with_the_value_only_before_another_count():
    check = compare_versions("Pushed the Lumen release to GitHub with 150 commits and Omar signed it off.",
                             "The number of commits in the Lumen release has grown to 165.")
    assert check.verdict == UPDATE
    assert check.carried_text.endswith(" Pushed the Lumen release to GitHub and Omar signed it off.")


@pytest.mark.parametrize(("older", "newer", "carried"), [
    # A value with its sign or unit before the noun it measures goes alone; "a" agrees with
    # the word that follows it, and the older event keeps its date.
    ("Ordered a 2TB drive for the backup server from Newegg on May 3.", "The backup server drive was upgraded to 4TB.",
     "The backup server drive was upgraded to 4TB. Ordered a drive for the backup server from Newegg on May 3."),
    ("Bought a $1,200 espresso machine for the office from Acme on May 3.", "The office espresso machine now costs $1,350.",
     "The office espresso machine now costs $1,350. Bought an espresso machine for the office from Acme on May 3."),
    # Right after a verb of something done, the value measures the noun after it.
    ("Reached 40% test coverage on the billing service after the March refactor.",
     "Test coverage on the billing service is now 55%.",
     "Test coverage on the billing service is now 55%. Reached test coverage on the billing service after the March refactor."),
    # A phrase that only says when goes whole: the rest of the event stays said.
    ("Signed up for a pottery class on Tuesdays at 7 PM at the Riverside community center.",
     "The pottery class moved to Thursdays at 7 PM because the studio was double-booked.",
     "The pottery class moved to Thursdays at 7 PM because the studio was double-booked. "
     "Signed up for a pottery class at 7 PM at the Riverside community center."),
    # What the value measures ends at a preposition ("after"), not at the next value.
    ("Agreed on a firm $900 marketing budget after comparing quotes from three vendors in April.",
     "We raised the marketing budget to $950.",
     "We raised the marketing budget to $950. Agreed on a firm marketing budget after comparing quotes from three vendors in April."),
])
def test_a_judges_update_carries_the_older_sentence_without_a_value_before_its_noun(older, newer, carried):
    judged = judged_update(older, newer)
    assert judged.taken and judged.carried_text == carried
    # Offline the words alone leave such a pair partial (below): the judge has read it.
    assert compare_versions(older, newer).verdict == PARTIAL


@pytest.mark.parametrize("older, newer", [
    # A bare count before its noun measures the word after it: "a 2 TB drive" is no "TB drive".
    ("Ordered a 2 TB drive for the backup server from Newegg on May 3.", "The backup server now uses a 4 TB drive."),
    # After "has", a value with its unit is what the thing has: "has memory" would say nothing.
    ("The build box has 16GB memory for the CI jobs, with swap off.", "The build box memory is now 32GB."),
    # After "of", a bare number counts something unsaid, and a value with its unit measures the
    # noun before it, which the newer clause must name ("spike" is no "time").
    ("Measured an average page load time of 480 under 200 concurrent sessions with k6 0.45.",
     "The average page load time is now 390 under 200 concurrent sessions."),
    ("Logged a page load spike of 480ms under 200 concurrent sessions with k6 0.45.",
     "The average page load time is now 390ms under 200 concurrent sessions."),
])
def test_a_bare_count_or_a_value_after_has_is_not_cut_for_the_judge_either(older, newer):
    assert judged_update(older, newer).refused == ENTANGLED
    assert compare_versions(older, newer).verdict != UPDATE


def test_offline_a_value_before_its_noun_is_never_cut():
    # The words alone take the accuracy of one quiz for an update of another's (BEAM's
    # development chats, in other words); cut, the older quiz's value would leave current memory.
    older, newer = ("Retained 80% accuracy on the vocabulary quiz after 3 hours of study.",
                    "After another week of practice, improved accuracy to 100% on grammar drills.")
    assert compare_versions(older, newer).verdict != UPDATE


def test_a_length_of_time_goes_with_its_units_and_the_rest_of_the_event_stays_said():
    # Whole, the update would hide that Maria was hired as a part-time bookkeeper, and carry
    # "starting November 4" onto the new hours, which did not start then.
    check = compare_versions("Hired Maria as a part-time bookkeeper at 15 hours a week, starting November 4.",
                             "Maria's hours were increased to 20 hours a week.")
    assert check.verdict == UPDATE
    assert check.carried_text == ("Maria's hours were increased to 20 hours a week. "
                                  "Hired Maria as a part-time bookkeeper, starting November 4.")


@pytest.mark.parametrize(("older", "newer"), [
    # What follows the counted noun tells of it ("visitors from organic search"): cut, it would
    # tell of something else ("converts at 3.2% from organic search").
    ("The landing page converts at 3.2% with 1,200 daily visitors from organic search.",
     "Daily visitors reached 1,800 after the SEO update."),
    ("Launched the beta on Product Hunt on February 20, with 340 signups in the first week.",
     "Beta signups have climbed to 910."),
])
def test_a_phrase_that_goes_on_about_its_counted_noun_is_not_cut(older, newer):
    assert compare_versions(older, newer).verdict != UPDATE
    assert judged_update(older, newer).refused == ENTANGLED


@pytest.mark.parametrize(("older", "newer", "carried"), [
    # A value with its unit and nothing it counts ("at 6.1%") goes whole for the judge.
    ("Mortgage pre-approval for $350,000 at 6.1% from Chase, valid until May 15.",
     "The pre-approval rate was lowered to 5.9%.",
     "The pre-approval rate was lowered to 5.9%. Mortgage pre-approval for $350,000 from Chase, valid until May 15."),
    # "May 9" is a date as "April 9" is: the when goes, the time that still holds stays.
    ("Scheduled the dentist cleaning for May 9 at 10 AM with Dr. Okafor at Lakeside Dental.",
     "The dentist cleaning was moved to May 16.",
     "The dentist cleaning was moved to May 16. Scheduled the dentist cleaning at 10 AM with Dr. Okafor at Lakeside Dental."),
    # A dotted version right after the name the newer clause names too.
    ("The backend team uses Python 3.10 with FastAPI and deploys through GitHub Actions.",
     "The backend was upgraded to Python 3.12.",
     "The backend was upgraded to Python 3.12. The backend team uses Python with FastAPI and deploys through GitHub Actions."),
])
def test_a_judges_update_cuts_a_value_with_its_unit_a_date_in_may_or_a_version(older, newer, carried):
    judged = judged_update(older, newer)
    assert judged.taken and judged.carried_text == carried


@pytest.mark.parametrize(("older", "newer"), [
    # Two values of the kind, one replaced: which one the phrase held nothing tells.
    ("Mortgage pre-approval for $350,000 at 6.1% with 20% down from Chase, valid until May 15.",
     "The pre-approval rate was lowered to 5.9%."),
    # A number after a name that is no version says which one: "in Room with the whole team" is no cut.
    ("The design review is in Room 101 with the whole team on Friday.", "The design review moved to Room 204."),
])
def test_a_judges_update_does_not_cut_a_value_it_cannot_tell_apart(older, newer):
    assert judged_update(older, newer).refused == ENTANGLED


@pytest.mark.parametrize(("older", "newer"), [
    # A review's pairs. A person in the phrase of the value is no value to cut away: "Swim"
    # opening the newer sentence reads as a name, and Coach Kim would go with the 2 lessons.
    ("Signed up for swim lessons with Coach Kim at 2 lessons a week.", "Swim lessons were increased to 3 lessons a week."),
    ("Practiced guitar with Coach Lee for 30 minutes a day.", "Guitar practice went up to 45 minutes a day."),
])
def test_a_name_is_never_cut_with_a_replaced_value(older, newer):
    check = compare_versions(older, newer)
    assert check.verdict != UPDATE or "Coach" in check.carried_text
    judged = judged_update(older, newer)
    assert not judged.taken or "Coach" in judged.carried_text


def test_a_value_and_its_units_are_cut_and_the_person_with_it_stays():
    # Counter-example: the person is outside the phrase of the value.
    check = compare_versions("Joined the rowing club with Marcus at 3 sessions a week.",
                             "Rowing sessions were cut to 2 sessions a week.")
    assert check.verdict == UPDATE
    assert check.carried_text == "Rowing sessions were cut to 2 sessions a week. Joined the rowing club with Marcus."


@pytest.mark.parametrize(("older", "newer"), [
    # A review's pairs. The price of a thing done still holds: it is no rate to replace.
    ("Bought the house in 2015 at $320,000.", "The house is now valued at $480,000."),
    ("We bought the house in 2015 at $320,000.", "The house is now valued at $480,000."),
    ("Last year we refinanced at 5.2% with Chase.", "Chase's refinance rate is now 6.8%."),
    ("Sold 40 tickets at $25 for the school play.", "The ticket price for the school play went up to $30."),
    # A value of what follows it ("95% of target") cut alone leaves "Ended Q3 of target".
    ("Closed the year at 95% of target for the sales team.", "The sales team is now at 102% of target."),
    # A dotted number that says which room is no version: "in Room of the Kelvin Building".
    ("The seminar is in Room 2.14 of the Kelvin Building on Tuesdays.", "The seminar moved to Room 3.05."),
])
def test_a_judges_update_does_not_cut_the_price_of_a_thing_done_a_share_or_a_room(older, newer):
    assert not judged_update(older, newer).taken


def test_a_count_whose_noun_goes_on_with_of_is_not_cut():
    # Cut, "to 5 sessions" would leave "extended my study sessions of 45 minutes each".
    check = compare_versions("I extended my study sessions to 5 sessions of 45 minutes each, to review factorials.",
                             "I extended my study sessions to 4 one-hour sessions, to review Markov chains.")
    assert check.verdict != UPDATE or "sessions of 45" not in (check.carried_text or "")
    # Counter-example: with nothing after the counted noun, the value is cut and the rest carried.
    check = compare_versions("Pushed the Lumen release to GitHub with 150 commits and Omar signed it off.",
                             "The number of commits in the Lumen release has grown to 165.")
    assert check.verdict == UPDATE and "Omar signed it off" in check.carried_text


@pytest.mark.parametrize(("older", "newer", "carried"), [
    # A note's list: the replaced value stands alone between commas, with its units ("$250 CAD
    # per night"), and goes whole; the rest of the note (the hotel, the date) stays said.
    ("Booked two rooms at the Harbour Inn for the Halifax trip, $250 CAD per night, July 30, 2024.",
     "The Harbour Inn rate for our Halifax trip was raised to $270 CAD per night.",
     "The Harbour Inn rate for our Halifax trip was raised to $270 CAD per night. "
     "Booked two rooms at the Harbour Inn for the Halifax trip, July 30, 2024."),
    ("Ordered 3 boxes of printer paper from Staples, $42 per box.", "Staples raised the printer paper price to $45 per box.",
     "Staples raised the printer paper price to $45 per box. Ordered 3 boxes of printer paper from Staples."),
    # A unit after the amount is the amount's.
    ("Set up the photo archive on the NAS, 340 GB, RAID 1, nightly sync.", "The photo archive has grown to 410 GB.",
     "The photo archive has grown to 410 GB. Set up the photo archive on the NAS, RAID 1, nightly sync."),
    # A count between commas goes with what it counts, when the newer clause names it.
    ("Finished the first draft of the thesis, 14,200 words, on March 3.",
     "The thesis draft has grown to 15,100 words.",
     "The thesis draft has grown to 15,100 words. Finished the first draft of the thesis, on March 3."),
    # The item replaced is the whole change: what the note's first words say stays said.
    ("Booked two rooms at the Harbour Inn for the Halifax trip, $250 CAD per night.",
     "The Harbour Inn rate for our Halifax trip was raised to $270 CAD per night.",
     "The Harbour Inn rate for our Halifax trip was raised to $270 CAD per night. "
     "Booked two rooms at the Harbour Inn for the Halifax trip."),
])
def test_a_judges_update_cuts_a_value_that_stands_alone_between_commas(older, newer, carried):
    judged = judged_update(older, newer)
    assert judged.taken and judged.carried_text == carried


@pytest.mark.parametrize(("older", "newer"), [
    # A bare number between commas says nothing of what it counts: "math, English, 85" would
    # give English the wrong score.
    ("Scores this term: math, 90, English, 85.", "My math score rose to 95."),
    # What the value counts ("deposit") is not what the newer clause names (a quote).
    ("Booked the venue at the Grange, $5,000 deposit, June 3.", "The catering quote for the Grange rose to $6,000."),
    # Two values of the kind between commas: which one changed nothing tells.
    ("Priced the two flats on Elm Street, $1,450 a month, $1,600 a month.",
     "The Elm Street rent went up to $1,500 a month."),
    # What is left depends on the value that changed: "$750 in total" of three nights at $250.
    ("Booked 3 nights at the Harbour Inn, $250 per night, $750 in total.", "The Harbour Inn rate went up to $270 per night."),
    # The item goes on with another value: "at 60 bpm" would be left alone.
    ("Practiced scales with the metronome, 1 hour at 60 bpm, on Sunday.", "My scale practice with the metronome was extended to 90 minutes."),
])
def test_a_value_between_commas_that_cannot_be_told_apart_is_not_cut(older, newer):
    judged = judged_update(older, newer)
    assert not judged.taken


@pytest.mark.parametrize(("older", "newer", "carried"), [
    # A length of time after a comma, with its unit, in a note that goes on: the value goes
    # alone, and the time of day (a when, no count) stays with the rest.
    ("Started weekly piano lessons at the Harbor Music School, 1 hour every Tuesday at 6 PM.",
     "The weekly piano lessons were extended to 90 minutes.",
     "The weekly piano lessons were extended to 90 minutes. "
     "Started weekly piano lessons at the Harbor Music School, every Tuesday at 6 PM."),
    # A bare count right before the noun it counts, which the newer clause names.
    ("Secured 3 interviews for product design roles at Figma and Canva.", "I have now secured 5 interviews.",
     "I have now secured 5 interviews. Secured interviews for product design roles at Figma and Canva."),
    # A version after a name says which release, not a count that held with the old one.
    ("Added the project gallery with 8 cards built on Bootstrap 5.3.0.", "The gallery now includes 10 cards.",
     "The gallery now includes 10 cards. Added the project gallery with cards built on Bootstrap 5.3.0."),
])
def test_a_judges_update_cuts_the_replaced_value_alone_where_it_has_no_phrase_of_its_own(older, newer, carried):
    judged = judged_update(older, newer)
    assert judged.taken and judged.carried_text == carried
    # Offline the words alone never cut a value so: the judge has read the pair.
    assert compare_versions(older, newer).verdict != UPDATE


@pytest.mark.parametrize(("older", "newer"), [
    # Another count stays in the sentence, which held with the replaced one: without the 7,
    # "scoring 6 correct" would be read against the 9.
    ("Completed 7 geometry proofs for the Euclid course, scoring 6 correct.", "I have now completed 9 geometry proofs."),
    # A rate the newer clause does not say: "interviews a week" would be read of the 5 in all.
    ("Secured 3 interviews a week for product design roles at Figma.", "I have now secured 5 interviews."),
    # One end of a range: "from 22 to minutes" says nothing.
    ("Cut the build time from 22 to 15 minutes with remote caching.", "The build time is now 12 minutes."),
    # A value with its own unit or sign is no bare count: without it, the words around it say
    # nothing ("after PM", "for TRY", "below mg/dL", ", duration").
    ("Agreed with Nancy on no work calls after 5 PM on Saturdays.", "Nancy asked for no work calls after 7 PM."),
    ("Bought trail running shoes for 950 TRY at the Kadikoy store.", "I raised my trail running shoe budget to 1,100 TRY."),
    ("Cholesterol goal on track, aiming for below 170 mg/dL by October.", "My cholesterol goal is now below 160 mg/dL."),
    ("Signed up for a strength course starting July 25, 6-week duration.", "The strength course duration was extended to 8 weeks."),
    # The measure of a comparison: "beyond concurrent users" would compare with nothing.
    ("Decided to shard the chat collection by roomId for future scalability beyond 1,000 concurrent users.",
     "The chat backend now serves 1,500 concurrent users."),
    # A number of a formula counts nothing: "L_n ≤ ^n" would be left.
    ("Defined the Lucas sequence recursively, proved L_n ≤ 3^n using strong induction.",
     "I am applying induction to combinatorics, proving identities like Σ C(n,k) = 2^n."),
])
def test_a_value_is_not_cut_alone_where_the_words_left_would_say_nothing_or_something_false(older, newer):
    assert judged_update(older, newer).refused == ENTANGLED


def test_when_an_older_value_held_is_never_carried_onto_the_value_that_replaced_it():
    # "on March 3" is when the first draft had 14,200 words: carried after "has grown to 15,100
    # words" it would date the new count to March 3. The note's other words stay said, with
    # their date, and the replaced count goes.
    older, newer = "Finished the first draft of the thesis, 14,200 words, on March 3.", "The thesis draft has grown to 15,100 words."
    carried = "The thesis draft has grown to 15,100 words. Finished the first draft of the thesis, on March 3."
    check = compare_versions(older, newer)
    assert check.verdict == UPDATE and check.carried_text == carried
    judged = judged_update(older, newer)
    assert judged.taken and judged.carried_text == carried
    # Nor with other words: "checked on the bank's app, February" is when the older score was
    # taken, and "March 12, 9:30am" after "rescheduled to March 19" would say two dates.
    for older, newer in (("Credit score 705, checked on the bank's app, February.", "My credit score went up to 731."),
                         ("Physio session with Dr. Haas, stretching and massage, May 6, 10am.",
                          "Physio session rescheduled to May 13.")):
        for check in (compare_versions(older, newer), judged_update(older, newer)):
            text = check.carried_text or ""
            assert not ("731" in text and "February" in text) and not ("May 13" in text and "May 6" in text)
    # Counter-example: a when that follows a clause the newer memory says, unchanged, is still
    # said of it ("... at 03:00 UTC, and is deprecated").
    check = compare_versions("The export job writes invoices to S3 at 03:00 UTC, every Sunday.",
                             "The export job writes invoices to S3 at 03:00 UTC, and is deprecated.")
    assert check.verdict != UPDATE or "every Sunday" in check.carried_text


def test_a_particle_of_the_verb_is_no_word_of_what_changed():
    # "went up to": "up" is no word of the rate, and the rate of the note's item is found.
    judged = judged_update("Booked two rooms at the Harbour Inn for the Halifax trip, $250 CAD per night, July 30, 2024.",
                           "Harbour Inn rate for the Halifax trip went up to $275 CAD per night.")
    assert judged.taken
    assert judged.carried_text.endswith(" Booked two rooms at the Harbour Inn for the Halifax trip, July 30, 2024.")
    assert compare_versions("The fee for the evening pottery class is $180 per term.",
                            "The fee for the evening pottery class went up to $210 per term.").verdict == UPDATE
    # Counter-examples: another inn's rate is another thing, whatever the verb; "can hold up
    # to" is a ceiling, and "dining out" no particle of a change.
    assert compare_versions("The print queue holds 2,000 pending jobs.",
                            "The print queue can hold up to 10,000 pending jobs.").verdict != UPDATE
    assert not judged_update("Booked two rooms at the Harbour Inn for the Halifax trip, $250 CAD per night.",
                             "Seaview Lodge rate for the Halifax trip went up to $275 CAD per night.").taken

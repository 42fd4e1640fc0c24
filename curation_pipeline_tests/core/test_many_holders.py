"""Relations that hold many values at once: each entry of many_holders.py with a test and a
counter-example, and what comes of them offline and for a judge's "update"."""

from __future__ import annotations

import pytest

from curation_pipeline.core.judged_updates import judged_update
from curation_pipeline.core.many_holders import holds_many
from curation_pipeline.core.sentence_tokens import tokenize
from curation_pipeline.core.supersession import LOOK_ALIKE, UPDATE, compare_versions


@pytest.mark.parametrize(("entry", "holds", "counter"), [
    # kin and company, as the relation the clause states
    ("possessive, then 'is' and a name", "Ellen Marsh's sister is Joan Marsh.", "My sister is a nurse."),
    ("the relative last", "Ruth is Ellen's cousin.", "My cousin lives in Oslo."),
    ("'named' after the relative", "Patrick Flynn has a daughter named Ada Flynn.", "My daughter's school is Oak Hill."),
    ("'of' after the relative", "The son of Tom Hale is Ben Hale.", "The mother of Leo Marsh is Ellen Marsh."),
    ("company", "Dana's colleague is Priya Shah.", "Our son is 7."),
    ("the relative's noun inside a name", "Mark Ellis's brother is Owen Ellis.", "Sister Act opened in London."),
    ("the relative as a clause's subject", "Tom's friend is Ana Ruiz.", "Changed the routine so the kids are in bed by 8:30 PM."),
    ("a step-relative or one by marriage", "Tom's brother-in-law is Ben Hale.", "Tom's father-in-law is Ben Hale."),
    ("grandparents and housemates", "Tom's grandmother is Ada Hale.", "Tom's roommate pays the rent."),
    ("a pronoun's relative, last", "Ruth is my sister.", "The user's emergency contact is their brother."),
    ("the one of their kind", "Ana's daughter is Mia.", "Ana's eldest daughter is Mia."),
    ("'of' then who they are", "The sister of Tom is Ruth.", "The daughter of Ana is 5 years old."),
    # twin towns
    ("sister city", "Kestrel is a sister city of Kyoto.", "Kestrel is the capital city of Arvenia."),
    ("twinned", "Port Alden is twinned with Brest.", "Port Alden is the twin of nothing."),
    # borders
    ("shares a border with", "Freedonia shares a border with Sylvania.", "Ana lives near the border with France."),
    ("borders", "Arvenia borders Norwyn.", "The borders of the form are blue."),
    # other names
    ("also known as", "Lucas Moreau is also known as Lulu.", "Lucas Moreau is known as a chef."),
    # one of several
    ("one of", "One of Ines Varga's notable works is The Glass Orchard.", "Ines Varga's best-known work is The Glass Orchard."),
    ("one of, saying which", "One of Ana's hobbies is chess.", "Ana works at one of the Big Four firms, Deloitte."),
    ("one of, its member after 'is'", "One of Ines Varga's notable works is The Glass Orchard.", "One of my sisters, Eva, lives in Graz."),
    ("one of, not the subject's rank", "One of Ana's hobbies is chess.", "The project is one of our top priorities."),
    ("a family's name after 'the'", "Our neighbours are the Hendersons.", "Our neighbours are very quiet."),
    # languages a person speaks
    ("a language spoken", "Kofi Mensah speaks Twi.", "Kofi Mensah speaks at the Accra summit on Friday."),
    ("fluent in", "Ana Ruiz is fluent in Catalan.", "Ana Ruiz is in Catalonia."),
    # founders
    ("founded by", "Acme Robotics was founded by Lena Ortiz.", "Acme Robotics was founded in 2011."),
    ("co-founded by", "Brightwave was co-founded by Omar Haddad.", "Brightwave was funded by Omar Haddad."),
    # awards won
    ("an award won", "Mara Quinn has won the Booker Prize.", "The Hawks have won 12 games."),
    # listings
    ("listed on", "Veltra is listed on the London Stock Exchange.", "The Elm Street house is listed at $450,000."),
    # a river's or road's course
    ("flows through", "The Sava flows through Zagreb.", "The Sava flows into the Danube."),
    # one place of several: an indefinite article
    ("an office in", "Brightwave has an office in Leeds.", "Brightwave has its headquarters in Leeds."),
    ("a branch in", "Kettle Bank has a branch in Fenwick.", "Kettle Bank has the largest branch in Fenwick."),
    # instruments and allergies
    ("an instrument played", "Maya Lund plays the cello.", "Maya Lund plays the role of Hamlet."),
    ("an allergy", "Alice Moreau is allergic to peanuts.", "Alice Moreau is afraid of spiders."),
])
def test_each_entry_and_its_counter_example(entry, holds, counter):
    assert holds_many(tokenize(holds)), entry
    assert not holds_many(tokenize(counter)), entry


@pytest.mark.parametrize(("older", "newer"), [
    ("Ellen Marsh's sister is Joan Marsh.", "Ellen Marsh's sister is Ruth Marsh."),
    ("Patrick Flynn has a daughter named Ada Flynn.", "Patrick Flynn has a daughter named Rose Flynn."),
    ("Port Alden is twinned with Brest.", "Port Alden is twinned with Cork."),
    ("Freedonia shares a border with Sylvania.", "Freedonia shares a border with Tarvia."),
    ("Lucas Moreau is also known as Lulu.", "Lucas Moreau is also known as The Professor."),
    ("One of Ines Varga's notable works is The Glass Orchard.", "One of Ines Varga's notable works is Salt and Iron."),
    # A fifteenth-round review of facts written by others: each took the older value away offline.
    ("Kofi Mensah speaks Twi.", "Kofi Mensah speaks Ewe."),
    ("Acme Robotics was founded by Lena Ortiz.", "Acme Robotics was founded by Tariq Bell."),
    ("Mara Quinn has won the Booker Prize.", "Mara Quinn has won the Costa Book Award."),
    ("Veltra is listed on the London Stock Exchange.", "Veltra is listed on the Frankfurt Stock Exchange."),
    ("The Sava flows through Zagreb.", "The Sava flows through Belgrade."),
    ("Brightwave has an office in Leeds.", "Brightwave has an office in Bristol."),
    ("Maya Lund plays the cello.", "Maya Lund plays the piano."),
    ("Alice Moreau is allergic to peanuts.", "Alice Moreau is allergic to penicillin."),
])
def test_one_more_of_many_is_linked_never_superseded(older, newer):
    # Before, each read offline as one value for another, and a judge's "update" was taken:
    # the older sister, daughter, twin town ... would have been marked no longer current.
    assert compare_versions(older, newer).verdict == LOOK_ALIKE
    assert not judged_update(older, newer).taken


def test_a_correction_still_replaces_one_of_many():
    # Counter-example: the newer memory says the older value was wrong.
    older, newer = "Ellen Marsh's sister is Joan Marsh.", "Correction: Ellen Marsh's sister is Ruth Marsh."
    assert compare_versions(older, newer).verdict == UPDATE
    assert judged_update(older, newer).taken


def test_a_relation_of_one_holder_is_still_one_value_for_another():
    # Counter-example: parents and spouses are one at a time in the words.
    older, newer = "The mother of Leo Marsh is Ellen Marsh.", "The mother of Leo Marsh is Joan Marsh."
    assert compare_versions(older, newer).verdict == UPDATE
    assert judged_update(older, newer).taken
    # And what a relative does is their own value: where she lives changed.
    assert compare_versions("My sister lives in Oslo.", "My sister moved to Bergen.").verdict == UPDATE


@pytest.mark.parametrize(("older", "newer"), [
    # Counter-examples a review wrote: the one of their kind, a relative who is the value of
    # another attribute, what is said of a relative, a place near a border, a firm said to be
    # one of several. Each is one value for another.
    ("Ellen's best friend is Joan.", "Ellen's best friend is Ruth."),
    ("Ana's eldest daughter is Mia.", "Ana's eldest daughter is Lea."),
    ("Ana's only child is Mia.", "Ana's only child is Lea."),
    ("The user's emergency contact is their brother.", "The user's emergency contact is their sister."),
    ("Ana lives near the border with France.", "Ana lives near the border with Spain."),
    ("The daughter of Ana is 5 years old.", "The daughter of Ana is 6 years old."),
])
def test_a_relation_of_one_said_with_a_relatives_word_is_still_an_update(older, newer):
    assert compare_versions(older, newer).verdict == UPDATE


def test_memberships_of_two_kinds_are_two_and_one_party_for_another_is_one():
    # A second review's pair: the Green Party read as a name made it one name for another.
    assert compare_versions("Ana is a member of the Green Party.", "Ana is a member of the Sierra Club.").verdict == LOOK_ALIKE
    assert not judged_update("Ana is a member of the Green Party.", "Ana is a member of the Sierra Club.").taken
    # Counter-example: the same noun ends both names, one party for another.
    assert compare_versions("Ana is a member of the Labour Party.", "Ana is a member of the Green Party.").verdict == UPDATE


def test_a_change_of_rank_among_several_is_an_update_for_the_judge():
    # "one of" after "is" says where the subject stands, and that changed (a second review).
    assert judged_update("The project is one of our top priorities.", "The project is one of our lowest priorities.").taken


@pytest.mark.parametrize(("older", "newer"), [
    # A change word written as a name: the first or last word of a name, or alone after "is".
    ("Ana's friend is Rose Chase.", "Ana's friend is Tom Fell."),
    ("My neighbour is Daisy.", "My neighbour is Rose."),
])
def test_a_relative_named_with_a_change_word_is_still_one_more(older, newer):
    assert compare_versions(older, newer).verdict != UPDATE
    assert not judged_update(older, newer).taken


@pytest.mark.parametrize(("older", "newer"), [
    # Counter-examples: one value of each of these is one for another.
    ("Acme Robotics was founded in 2011.", "Acme Robotics was founded in 2012."),
    ("The Hawks have won 12 games.", "The Hawks have won 14 games."),
    ("The Elm Street house is listed at $450,000.", "The Elm Street house is listed at $425,000."),
    ("The Sava flows into the Danube.", "The Sava flows into the Drava."),
    ("Brightwave has its headquarters in Leeds.", "Brightwave has its headquarters in Bristol."),
])
def test_one_value_said_with_a_many_valued_word_is_still_an_update(older, newer):
    assert compare_versions(older, newer).verdict == UPDATE


@pytest.mark.parametrize(("older", "newer"), [
    # What a review of the first version found blocked: each gives one value for another.
    ("Dr. Adeyemi speaks Tuesday afternoon at the Lagos summit.", "Dr. Adeyemi speaks Wednesday afternoon at the Lagos summit."),
    ("The voice assistant speaks English to callers by default.", "The voice assistant speaks Spanish to callers by default."),
    ("The Elm Street house is listed on Zillow for $450,000.", "The Elm Street house is listed on Zillow for $425,000."),
    ("All customer payments flow through Stripe.", "All customer payments flow through Adyen."),
])
def test_words_of_many_values_used_of_one_value_are_still_an_update(older, newer):
    assert compare_versions(older, newer).verdict == UPDATE


@pytest.mark.parametrize("text", [
    "The Ashgrove fund was founded by a single donor, Harold Greene.",
    "Row 12 has a seat in the shade.",
    "Brightwave has a budget in the range of $50k.",
])
def test_a_founder_or_a_place_said_of_one_holds_no_many(text):
    assert not holds_many(tokenize(text))


def test_a_word_of_a_name_is_no_word_of_change():
    # "New" of "New York" said no change, and so let a listing replace another.
    older, newer = "Shell is listed on the London Stock Exchange.", "Shell is listed on the New York Stock Exchange."
    assert compare_versions(older, newer).verdict == LOOK_ALIKE
    assert not judged_update(older, newer).taken
    # Counter-example: one office for another, wherever it went.
    assert compare_versions("The Ledger office is in Boston.", "The Ledger office is in New York.").verdict == UPDATE


@pytest.mark.parametrize(("entry", "older", "newer"), [
    ("also", "Kofi Mensah speaks Twi.", "Kofi Mensah also speaks French."),
    ("also, of a thing's make-up", "The Ravel app is written in Kotlin.", "The Ravel app is also written in Swift."),
    ("too", "Dana Cole volunteers at the Hillside food bank.", "Dana Cole volunteers at the Eastgate animal shelter too."),
    ("as well", "Ines Varga plays the cello.", "Ines Varga plays the piano as well."),
    ("in addition", "Priya Shah teaches at Oakridge College.", "In addition, Priya Shah teaches at Elmfield School."),
])
def test_a_newer_memory_that_says_also_adds_one_more_and_replaces_nothing(entry, older, newer):
    # "Also" says the older value still holds beside the new one: offline the pair is linked,
    # and a judge's "update" is refused whatever it read.
    assert compare_versions(older, newer).verdict != UPDATE, entry
    assert not judged_update(older, newer).taken, entry


@pytest.mark.parametrize(("older", "newer"), [
    # Counter-examples: "also" beside a word of change, or in a correction, still replaces; and
    # a sentence that opens with "Also," or "In addition," goes on to another point.
    ("Tom Hale's mobile number is 555-0142.", "Tom Hale also changed his mobile number to 555-0199."),
    ("Kofi Mensah speaks Twi.", "Correction: Kofi Mensah also speaks Ewe, not Twi."),
    ("The office Wi-Fi password is bluefish22.", "Also, the office Wi-Fi password is greenowl9."),
    ("The quarterly report is due on 5 May.", "In addition, the quarterly report is due on 12 May."),
])
def test_also_beside_a_change_or_a_correction_still_replaces(older, newer):
    assert judged_update(older, newer).taken

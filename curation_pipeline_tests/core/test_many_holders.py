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

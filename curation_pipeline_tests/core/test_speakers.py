"""A speaker label says who said it, and a question is not its answer. Pure.

Memories of conversation turns ("Jon: Thanks, Gina! ...") were merged and superseded across
speakers on LoCoMo's dialogues: Jon's words became Gina's, and one speaker's farewell superseded
another's (issue "Integrity, round three", point 12).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from curation_pipeline.core.coverage import KeptText, uncovered
from curation_pipeline.core.speakers import speaker_of, without_vocative
from curation_pipeline.core.steps.consolidate import NODE_SCHEMA, offline_merge
from curation_pipeline.core.steps.pair_decisions import decide_pairs
from curation_pipeline.core.steps.similarity import PAIR_SCHEMA
from curation_pipeline.core.supersession import UPDATE, compare_versions

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _decide(*texts: str, similarity: float = 0.97):
    nodes = pl.DataFrame([{"id": str(n), "memory_type": "episodic", "pointer_summary": text, "base_utility": 0.5,
                           "pinned": False, "confidence": "default", "recall_count": 1,
                           "created_at": NOW - timedelta(days=10 - n), "row_version": 1}
                          for n, text in enumerate(texts)], schema={**NODE_SCHEMA, "row_version": pl.Int64})
    pairs = pl.DataFrame([(0, 1, similarity)], schema=PAIR_SCHEMA, orient="row")
    return decide_pairs(nodes, pairs, merge_threshold=0.92, merge_cap=20, supersede_cap=20, judge_cap=0,
                        max_chars=2000, judge_band_low=0.75)


@pytest.mark.parametrize(("text", "speaker"), [
    ("Jon: Thanks, Gina!", "jon"),
    ("Melanie Smith: I went camping.", "melanie smith"),
    ("The deploy runs at 02:00: ask Dana.", None),  # a time, not a speaker
    ("Note: the deploy runs nightly.", None),  # a label word, not a name
    ("Dana prefers email.", None),
])
def test_a_speaker_label_is_a_capitalised_name_before_a_colon(text, speaker):
    assert speaker_of(text) == speaker


@pytest.mark.parametrize(("first", "second"), [
    ("Jon: Thanks, Gina! Your support's really been awesome.", "Gina: Thanks, Jon! Your support's really been awesome."),
    ("Sam: Bye, see you soon!", "Evan: Bye, see you soon!"),
    ("Sam: I moved to Berlin.", "Evan: I moved to Munich."),
])
def test_turns_of_two_speakers_are_never_merged_or_superseded(first, second):
    decisions = _decide(first, second)
    assert decisions.merges.plan.is_empty() and decisions.supersessions.is_empty()


def test_the_same_speaker_still_updates_and_merges():
    assert not _decide("Sam: I live in Berlin.", "Sam: I now live in Munich.").supersessions.is_empty()
    assert _decide("Sam: Bye, see you soon!", "Sam: Bye, see you soon!", similarity=1.0).merges.plan.height == 1


def test_small_talk_is_no_update():
    assert compare_versions("Gina: Remember Jon, Just do it!", "Gina: That's the spirit! Bye!").verdict != UPDATE


def test_a_question_is_not_said_by_a_statement_nor_replaced_by_its_answer():
    question, answer = "Jon: What do you do to relax?", "Jon: To relax, I do yoga."
    assert uncovered([question], KeptText.of([answer]))
    merged = offline_merge(question, answer)
    assert "What do you do to relax?" in merged.text and "I do yoga" in merged.text


def test_a_turn_that_carries_older_clauses_keeps_its_speakers_label():
    # The newer turn is written back with what it carries: who said it must stay in it (LoCoMo:
    # 25 turns lost their "Speaker:" label this way, and read as another speaker's).

    check = compare_versions("Jon: The backup job runs at 02:00 UTC, and is deprecated.",
                             "Jon: The backup job now runs at 03:00 UTC.")
    assert check.verdict == UPDATE
    assert check.carried_text == "Jon: The backup job now runs at 03:00 UTC, and is deprecated."


@pytest.mark.parametrize(("text", "compared"), [
    ("Wow, Caroline! You're so inspiring.", "You're so inspiring."),
    ("Hey Caroline! Great to hear from you!", "Great to hear from you!"),
    ("Thanks, Jon! Your support's been awesome.", "Your support's been awesome."),
    ("Caroline! Look at this.", "Look at this."),
    # No vocative: a name that is the subject, an interjection without a name, a bare greeting.
    ("Paris, the city of light, is lovely in May.", "Paris, the city of light, is lovely in May."),
    ("Caroline, the meeting is at 5.", "Caroline, the meeting is at 5."),
    ("Wow, that's awesome!", "Wow, that's awesome!"),
    ("Wow, Caroline!", "Wow, Caroline!"),
])
def test_whom_a_turn_addresses_is_left_out_when_turns_are_compared(text, compared):
    assert without_vocative(text) == compared


def test_another_addressee_is_no_new_value_and_a_question_is_never_carried():

    # LoCoMo: "Wow, Caroline! ..." was superseded by "Hey Caroline! ... Wow, ..." of the same
    # speaker, and its questions carried into the newer turn as statements.
    older = "Melanie: Wow, Caroline! It's great that you're helping out. How's it going? Got any experiences to share?"
    newer = "Melanie: Wow, Mel! It's great that you're helping out."
    assert compare_versions(older, newer).verdict != UPDATE
    assert compare_versions("Sam: The demo is on Friday. What should I bring?",
                            "Sam: The demo is on Monday.").verdict != UPDATE


@pytest.mark.parametrize(("older", "newer"), [
    # LoCoMo development dialogues: small talk of one speaker read as updates.
    ("Gina: Yeah Jon, I'm here for you! Chasing our dreams and helping each other out.",
     "Gina: Yeah Jon, you've got the right attitude! Keep learning and growing through it all."),
    ("Maria: Yeah, John. It's amazing how minor tweaks can make a big difference.",
     "Maria: Yeah, we can really get amazing stuff done together."),
    ("John: Got it! Thanks, Maria. I definitely will.",
     "John: It's definitely isn't, Maria. My kids have so much and others don't."),
])
def test_small_talk_of_one_speaker_is_no_update(older, newer):
    assert compare_versions(older, newer).verdict != UPDATE

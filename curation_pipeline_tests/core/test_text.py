"""Sentence splitting, merge-marker flattening and word-boundary truncation."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curation_pipeline.core.text import (
    append_sentence,
    has_merge_marker,
    normalise_sentence,
    split_sentences,
    strip_merge_markers,
    truncate_at_word_boundary,
)

# ----------------------------------------------------------------------------- split_sentences


def test_split_keeps_punctuation_and_drops_empty_pieces() -> None:
    text = "  Hello world.  How are you?\n\nFine!  Wait… ok "
    assert split_sentences(text) == ["Hello world.", "How are you?", "Fine!", "Wait…", "ok"]


def test_split_on_newline_without_punctuation() -> None:
    assert split_sentences("first line\nsecond line\r\nthird") == ["first line", "second line", "third"]


def test_split_does_not_break_numbers_or_dotted_names() -> None:
    assert split_sentences("Pi is 3.14 and v1.2.3 shipped.") == ["Pi is 3.14 and v1.2.3 shipped."]


def test_abbreviations_are_split_as_documented() -> None:
    # Documented choice: no abbreviation list, "e.g." ends a piece.
    assert split_sentences("Use tea e.g. green tea.") == ["Use tea e.g.", "green tea."]


def test_a_persons_initials_end_no_sentence() -> None:
    # Cut after each "G.", a supersession carried "G. Ponnambalam." into the newer memory as a
    # statement of its own: half the replaced value, said again.
    assert split_sentences("All Ceylon Tamil Congress was founded by G. G. Ponnambalam. It is big.") == [
        "All Ceylon Tamil Congress was founded by G. G. Ponnambalam.", "It is big."]
    assert split_sentences("John F. Kennedy was shot. J. R. R. Tolkien wrote it.") == [
        "John F. Kennedy was shot.", "J. R. R. Tolkien wrote it."]


def test_a_title_before_a_name_ends_no_sentence() -> None:
    # Cut after "Dr.", a supersession carried "Created an emergency contact list including Dr."
    # into the newer memory: a statement with its name cut off.
    assert split_sentences("Created an emergency contact list including Dr. Mbeki. Shared it.") == [
        "Created an emergency contact list including Dr. Mbeki.", "Shared it."]
    assert split_sentences("Attended the service at St. Mary's Church on March 5. Mr. O'Neil spoke.") == [
        "Attended the service at St. Mary's Church on March 5.", "Mr. O'Neil spoke."]
    # Counter-examples: a street, or a title, that ends a sentence before one that opens another.
    assert split_sentences("She lives on Oak St. The house is blue.") == ["She lives on Oak St.", "The house is blue."]
    assert split_sentences("Ask the Dr. Then rest.") == ["Ask the Dr.", "Then rest."]


def test_an_abbreviation_before_a_number_ends_no_sentence() -> None:
    # Cut at "No." the "2" was a statement of its own, and "No" read as a negation.
    assert split_sentences("John Lennon is famous for String Quartet No. 2.") == [
        "John Lennon is famous for String Quartet No. 2."]
    assert split_sentences("Beethoven wrote Op. 27 in 1801. It has two sonatas.") == [
        "Beethoven wrote Op. 27 in 1801.", "It has two sonatas."]
    # Without a number after it, it still ends one.
    assert split_sentences("She said No. Then she left.") == ["She said No.", "Then she left."]


def test_a_lone_capital_at_a_sentences_end_still_ends_it() -> None:
    # Counter-examples: a capital that names a plan, a vitamin or a grade, then a new sentence.
    assert split_sentences("He chose plan B. The rest waited.") == ["He chose plan B.", "The rest waited."]
    assert split_sentences("Take vitamin D. Zinc helps too.") == ["Take vitamin D.", "Zinc helps too."]
    assert split_sentences("Got an A. Then a B. It was fine.") == ["Got an A.", "Then a B.", "It was fine."]
    assert split_sentences("A. B. C.") == ["A.", "B.", "C."]


def test_split_cjk_full_stops_need_no_space() -> None:
    assert split_sentences("今日は晴れ。明日は雨？ Café ouvert.") == ["今日は晴れ。", "明日は雨？", "Café ouvert."]


def test_split_empty_and_blank() -> None:
    assert split_sentences("") == []
    assert split_sentences(" \n\t ") == []


# ----------------------------------------------------------------------------- merge markers


def test_nested_markers_become_plain_sentences() -> None:
    assert strip_merge_markers("A. [merged: B. [merged: C.]]") == "A. B. C."


def test_marker_body_without_punctuation_stays_a_separate_sentence() -> None:
    flat = strip_merge_markers("User likes tea [merged: User drinks green tea]")
    assert flat == "User likes tea\nUser drinks green tea"
    assert split_sentences(flat) == ["User likes tea", "User drinks green tea"]


def test_plain_brackets_inside_a_marker_survive() -> None:
    assert strip_merge_markers("See docs. [merged: Ref [1] applies.]") == "See docs. Ref [1] applies."


def test_unclosed_marker_keeps_its_trailing_text() -> None:
    assert strip_merge_markers("A. [merged: B. [merged: C.") == "A. B. C."


def test_stray_closing_bracket_is_kept_as_text() -> None:
    assert strip_merge_markers("A] b. [merged: C.]]") == "A] b. C. ]"


def test_marker_matching_is_case_insensitive() -> None:
    assert has_merge_marker("x [MERGED: y]")
    assert strip_merge_markers("X. [Merged: Y.]") == "X. Y."


def test_text_without_marker_is_returned_untouched() -> None:
    text = "  spaced   text [not a marker]\n"
    assert strip_merge_markers(text) is text
    assert not has_merge_marker(text)
    assert not has_merge_marker("[merged without colon]")


def test_marker_only_text_flattens_to_empty() -> None:
    assert strip_merge_markers("[merged: ]") == ""


@given(st.lists(st.sampled_from(["a", " ", ".", "]", "[", "[merged:", "[MERGED:", "merged:", "\n"])).map("".join))
def test_flattening_never_leaves_a_marker(text: str) -> None:
    assert not has_merge_marker(strip_merge_markers(text))


def test_append_sentence_separates_with_space_or_newline() -> None:
    assert append_sentence("Done.", "Next.") == "Done. Next."
    assert append_sentence("no stop  ", "Next.") == "no stop\nNext."
    assert append_sentence("", "Only.") == "Only."


# ----------------------------------------------------------------------------- normalise


def test_normalise_ignores_case_spacing_and_trailing_punctuation() -> None:
    assert normalise_sentence("  User likes\t TEA. ") == normalise_sentence("user likes tea")
    assert normalise_sentence("Straße!") == normalise_sentence("STRASSE")
    assert normalise_sentence("Is it?") != normalise_sentence("Is it not?")


def test_normalise_unifies_composed_and_decomposed_accents() -> None:
    composed = "Café."
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    assert normalise_sentence(composed) == normalise_sentence(decomposed) == "café"


# ----------------------------------------------------------------------------- truncate


def test_text_within_limit_is_unchanged() -> None:
    text = "x" * 200
    assert truncate_at_word_boundary(text, 200) == text
    assert truncate_at_word_boundary("short", 200) == "short"


def test_cut_at_last_word_boundary_with_ellipsis_counted() -> None:
    text = "alpha beta gamma delta"
    result = truncate_at_word_boundary(text, 13)
    assert result == "alpha beta…"
    assert len(result) <= 13


def test_window_ending_exactly_at_a_space_keeps_the_last_word() -> None:
    # limit 11 -> 10 characters of text + "…": "alpha beta" ends right before a space.
    assert truncate_at_word_boundary("alpha beta gamma", 11) == "alpha beta…"


def test_trailing_punctuation_is_trimmed_before_ellipsis() -> None:
    assert truncate_at_word_boundary("one, two; three: four five six", 17) == "one, two; three…"
    assert truncate_at_word_boundary("one two, three", 10) == "one two…"


def test_hard_cut_without_whitespace() -> None:
    # 19 characters of budget end inside the URL; the "/" would be trimmed anyway.
    assert truncate_at_word_boundary("https://example.com/" + "a" * 50, 20) == "https://example.com…"


def test_hard_cut_exact_value() -> None:
    assert truncate_at_word_boundary("abcdefghijklmnop", 10) == "abcdefghi…"


def test_cjk_and_emoji_are_counted_as_characters() -> None:
    cjk = "漢字" * 30
    assert truncate_at_word_boundary(cjk, 10) == cjk[:9] + "…"
    emoji = "😀 " * 30
    result = truncate_at_word_boundary(emoji, 10)
    assert len(result) <= 10 and result.endswith("…") and result.startswith("😀 😀")


def test_hard_cut_never_splits_a_combining_mark() -> None:
    text = "abcde\u0301" + "f" * 20  # "e" + combining acute at index 4-5
    result = truncate_at_word_boundary(text, 6)  # 5 chars budget would end between e and accent
    assert result == "abcd…"


def test_custom_ellipsis_and_too_small_limit() -> None:
    assert truncate_at_word_boundary("alpha beta gamma", 12, ellipsis="...") == "alpha..."
    with pytest.raises(ValueError):
        truncate_at_word_boundary("alpha beta gamma", 1)


@given(st.text(max_size=400), st.integers(min_value=2, max_value=300))
def test_truncation_is_a_prefix_within_limit(text: str, limit: int) -> None:
    result = truncate_at_word_boundary(text, limit)
    assert len(result) <= limit
    if len(text) <= limit:
        assert result == text
    else:
        assert result.endswith("…")
        assert text.startswith(result[:-1])


def test_a_names_suffix_ends_no_sentence() -> None:
    # Cut after "Sr.", "Cynthia and Scott Sr" was a statement of names of its own, which "Cynthia
    # and I discussed ..." read as their new value.
    assert split_sentences("Cynthia and Scott Sr. have been married 30 years.") == [
        "Cynthia and Scott Sr. have been married 30 years."]
    assert split_sentences("Martin Luther King Jr. Day is in January.") == ["Martin Luther King Jr. Day is in January."]
    # Counter-example: a sentence that opens after the suffix.
    assert split_sentences("I met Scott Sr. The talk ran long.") == ["I met Scott Sr.", "The talk ran long."]

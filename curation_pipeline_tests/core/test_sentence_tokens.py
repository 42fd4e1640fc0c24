"""Tokens and content keys: two phrasings of one claim share their keys."""

from __future__ import annotations

from curation_pipeline.core.sentence_tokens import content_keys, root, tokenize


def keys(text: str) -> frozenset[str]:
    return content_keys(tokenize(text))


def test_inflections_share_a_root():
    assert len({root(w) for w in ("approve", "approves", "approved", "approving", "approval")}) == 1
    assert root("stopped") == root("stop") and root("ships") == root("shipping")
    assert root("pass") == root("passed") and root("less") != root("le")


def test_function_words_and_negations_carry_no_key():
    assert keys("She is not the one who does not have it.") == {root("one")}
    assert keys("She doesn't drink coffee.") == {root("drink"), root("coffee")}


def test_numbers_urls_and_ids_are_whole_tokens():
    tokens = tokenize("Refunds above $5,000 go to https://acme.example/refunds, see HV-ATL-02 at 9:00.")
    kinds = {token.text: token.kind for token in tokens}
    assert kinds["$5,000"] == "number" and kinds["https://acme.example/refunds"] == "url"
    assert kinds["HV-ATL-02"] == "word" and kinds["9:00"] == "number"
    assert "5000" in keys("Refunds above $5,000.")


def test_hyphenated_words_are_their_parts_but_ids_stay_whole():
    assert keys("It needs sign-off.") >= keys("It needs a sign off.")
    assert "hv-atl-02" in keys("Warehouse HV-ATL-02.")


def test_names_are_capitalised_non_function_words():
    names = [token.text for token in tokenize("The admin of Harbor & Vine is Priya Raman.") if token.is_name]
    assert names == ["Harbor", "Vine", "Priya", "Raman"]


def test_a_pronouns_contraction_is_no_name_and_says_nothing_the_sentence_is_about():
    # "I've now read 15 books" names no one: read as a name, "I've" made the newer clause name
    # another thing than "Read 12 books this year".
    tokens = tokenize("I've now read 15 books; we're done, they'll see.")
    assert not any(token.is_name for token in tokens)
    assert keys("I've now read 15 books.") == keys("Now read 15 books.")
    # An apostrophe inside a name is no contraction.
    assert [token.text for token in tokenize("We met Dara O'Neil today.") if token.is_name] == ["Dara", "O'Neil"]


def test_may_inside_a_sentence_or_before_a_day_is_the_month():
    # The modal is never capitalised inside a sentence: "for May 9" is a date like "for April 9".
    assert "may" in keys("The cleaning is booked for May 9.")
    assert "may" in keys("May 9 is the deadline.")
    # The modal says nothing of what the sentence is about.
    assert "may" not in keys("The cleaning may move to June.")
    assert "may" not in keys("May I move the cleaning?")


def test_may_as_a_name_is_no_month():
    # A review's pair: "Aunt May is visiting" / "Aunt May's visit moved": May is a person here,
    # in both, and no month is left unsaid.
    assert "may" not in keys("Aunt May is visiting on the 12th.")
    assert "may" not in keys("Aunt May's visit moved to the 19th.")
    assert "may" in keys("The visit moved to early May.")
    # A second review's: "by May Chen" is a person, with her surname; "The May rent" a month.
    assert "may" not in keys("The Q3 report by May Chen is due on Friday.")
    assert "may" in keys("The May rent payment was $1,450.")


def test_a_metric_at_a_cutoff_is_one_word():
    # "MAP@10" names a metric; its 10 is no value that "0.35" could replace.
    assert [(t.text, t.kind) for t in tokenize("The MAP@10 metric is 0.35.") if t.kind != "punct"] == [
        ("The", "word"), ("MAP@10", "word"), ("metric", "word"), ("is", "word"), ("0.35", "number")]
    # Counter-example: an email address stays one email, a handle's "@" is no part of a word.
    assert [t.kind for t in tokenize("Write to a@b.com or @bob")] == ["word", "word", "email", "word", "word"]

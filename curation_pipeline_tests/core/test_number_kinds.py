"""What a number says, read with the words beside it (core/number_kinds.py)."""

import pytest

from curation_pipeline.core.number_kinds import number_kind, says_a_moment
from curation_pipeline.core.sentence_tokens import tokenize


def _at(text: str, number: str):
    """The tokens of `text` and where `number` is among them."""
    tokens = tokenize(text)
    return tokens, next(n for n, token in enumerate(tokens) if token.text == number)


def _kind_of(text: str, number: str) -> str:
    tokens, n = _at(text, number)
    return number_kind(tokens[n], tokens[n + 1] if n + 1 < len(tokens) else None, tokens[n - 1] if n else None)


@pytest.mark.parametrize(("text", "number", "kind"), [
    ("The deposit is $200.", "$200", "number:money"),
    ("The deposit is 200 dollars.", "200", "number:money"),
    ("The deadline is April 18.", "18", "number:date"),
    ("It ships on 18 April.", "18", "number:date"),
    ("It launched in 2019.", "2019", "number:date"),
    ("Standup is at 9 AM.", "9", "number:time"),
    ("Standup is at 9:30.", "9:30", "number:time"),
    ("Coverage is 78%.", "78%", "number:percent"),
    ("We run Bootstrap 5.3.0.", "5.3.0", "identifier"),
    ("The run took 2 weeks.", "2", "number:duration"),
    ("I ran 10 miles.", "10", "number:length"),
    # A plain count: what it counts is no unit, and a count of 2019 things is no year's.
    ("Completed 12 problems.", "12", "number"),
    ("The site has 1,200 daily visitors.", "1,200", "number"),
])
def test_a_number_is_read_with_the_words_beside_it(text, number, kind):
    assert _kind_of(text, number) == kind


@pytest.mark.parametrize(("text", "number", "moment"), [
    ("Swims every Saturday at 9 AM.", "9", True),
    ("Moved to May 11.", "11", True),
    ("Held on the 3rd.", "3rd", True),
    ("Started in 2024.", "2024", True),
    ("Due by Feb 25.", "25", True),
    ("Standup moved to 14:30.", "14:30", True),
    # Counter-examples: a count, an amount, a length of time say no moment.
    ("Completed 12 problems.", "12", False),
    ("Paid $150.", "$150", False),
    ("Practised for 3 hours.", "3", False),
    ("Drew the medians in a 2:1 ratio.", "2:1", False),
])
def test_a_moment_is_a_date_a_time_of_day_or_a_day(text, number, moment):
    tokens, n = _at(text, number)
    assert says_a_moment(tokens, n) is moment

"""Who does what to whom: the names of linked sentences and their order. Pure.

Two checks of the fact guard that the token check cannot make, because every name still stands
somewhere in the answer:

- **roles**: two names with a verb or noun between them in one clause of an input sentence
  ("Sam Okafor reports to Dana Reyes") keep their order in the answer sentence linked to it;
  "Dana Reyes reports to Sam Okafor" is refused. Names with only "at", "from", "(" or a number
  between them ("Dana Whitfield (Brightline Dental)", "Marta Klein from Orbital Foods") may
  trade places, and so may two names that another source of the same answer sentence already
  has in the answer's order (two phrasings of one merge); a passive said as an active puts the
  agent of its "by" first ("Globex invoices are approved by Acme Corp" is "Acme Corp approves
  Globex invoices", not "Globex approves Acme Corp invoices": `agent_swaps`, for claimed pairs);
- **substitution**: a group of linked sentences whose answer side lacks a name of its input side
  and has a name its input side lacks put one name in another's place ("Escalate outages to
  Grace Novak" -> "Escalate outages to Luca Rossi").

A name is a capitalised word that is not a function word (sentence_tokens.Token.is_name), in
runs ("Priya Raman", "Harbor & Vine"). For the substitution check only words capitalised
somewhere other than at the start of a sentence count, so "Escalate ..." -> "Outages go to ..."
is no substitution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from curation_pipeline.core.sentence_alignment import Sentence
from curation_pipeline.core.sentence_tokens import Token
from curation_pipeline.core.value_words import value_class


@dataclass(frozen=True)
class Entity:
    names: tuple[str, ...]  # the lower-case words of a run of names ("priya", "raman")
    start: int  # token positions [start, end)
    end: int
    written: str  # as written ("Priya Raman")


def _takes_a_role(token: Token) -> bool:
    """A name that can do something to someone: not a weekday or a month ("Monday", "March"),
    which say when, and move freely in a sentence."""
    return token.is_name and not (token.keys and value_class(token.lower, token.keys[0]) in ("weekday", "month"))


def entities(tokens: Sequence[Token]) -> list[Entity]:
    """Runs of names ("Priya Raman", "Harbor & Vine"), in order; weekdays and months are none."""
    runs: list[Entity] = []
    i = 0
    while i < len(tokens):
        if not _takes_a_role(tokens[i]):
            i += 1
            continue
        end = i + 1
        while end < len(tokens) and (_takes_a_role(tokens[end]) or (
                tokens[end].text == "&" and end + 1 < len(tokens) and _takes_a_role(tokens[end + 1]))):
            end += 1
        runs.append(Entity(tuple(t.lower for t in tokens[i:end] if t.text != "&"), i, end,
                           " ".join(t.text for t in tokens[i:end])))
        i = end
    return runs


def related_by_order(tokens: Sequence[Token], first: Entity, second: Entity) -> bool:
    """Whether the order of two entities carries who does what to whom: a content word (a verb
    or noun, not only "at", "from", "(" or a number) stands between them, in one clause."""
    between = tokens[first.end:second.start]
    return (not any(token.ends_clause for token in between)
            and any(token.kind == "word" and token.keys and not token.is_name for token in between))


def _ordered_pairs(source: Sentence) -> list[tuple[Entity, Entity]]:
    runs = entities(source.tokens)
    return [(first, second) for a, first in enumerate(runs) for second in runs[a + 1:]
            if related_by_order(source.tokens, first, second)]


def _before(sentence: Sentence, first: frozenset[str], second: frozenset[str]) -> bool | None:
    """Whether a name of `first` comes before one of `second`; None if either is missing."""
    at_first = [n for n, t in enumerate(sentence.tokens) if t.is_name and t.lower in first]
    at_second = [n for n, t in enumerate(sentence.tokens) if t.is_name and t.lower in second]
    if not (at_first and at_second):
        return None
    return min(at_first) < max(at_second)


# "approves X" ~ "X is approved by", "Zephyr's token" ~ "the token for Zephyr": a name put after
# one of these words may come second without changing who does what.
_REVERSING = frozenset({"by", "for", "of"})


def _introduced_by_reversing_word(sentence: Sentence, names: frozenset[str],
                                  reversing: frozenset[str] = _REVERSING) -> bool:
    """Whether a name of `names` comes right after "by", "for" or "of" (an article between)."""
    tokens = sentence.tokens
    for n, token in enumerate(tokens):
        if token.is_name and token.lower in names:
            before = n - 1
            while before >= 0 and tokens[before].lower in ("the", "a", "an"):
                before -= 1
            if before >= 0 and tokens[before].lower in reversing:
                return True
    return False


def role_swaps(sources: Sequence[Sentence], answer: Sentence) -> list[str]:
    """Pairs of names that an answer sentence puts in the reverse order of one of its sources
    (unless the first name now comes after "by", "for" or "of": a passive or a possessive)."""
    problems = []
    for source in sources:
        for first, second in _ordered_pairs(source):
            # Words two names share ("Dana Reyes", "Dana Whitfield") tell them apart from nothing.
            own_first = frozenset(first.names) - frozenset(second.names)
            own_second = frozenset(second.names) - frozenset(first.names)
            if _before(answer, own_first, own_second) is False and not _introduced_by_reversing_word(
                    answer, own_first) and not any(
                    _before(other, own_second, own_first) for other in sources if other is not source):
                problems.append(f"swaps the roles of {first.written!r} and {second.written!r} in {answer.quoted}")
    return problems


_BE = frozenset("is are was were be been being".split())
# Participles that do not end in "-ed" or "-en" ("is paid by", "was sold by").
_IRREGULAR_PARTICIPLES = frozenset("paid sold bought made held kept led built sent run done".split())


def _passive(tokens: Sequence[Token]) -> bool:
    """Whether a stretch of a clause is a passive: a form of "be" and, within two words after
    it, a participle ("is reviewed", "was quickly translated", "are paid")."""
    words = [t.lower for t in tokens]
    return any(w in _BE and any(v.endswith(("ed", "en")) or v in _IRREGULAR_PARTICIPLES for v in words[i + 1:i + 3])
               for i, w in enumerate(words))


def passive_agent(tokens: Sequence[Token]) -> tuple[Entity, list[Entity]] | None:
    """The agent of a passive clause ("Globex invoices are reviewed by Acme Corp": Acme Corp)
    and the names before it in its clause that it does something to (Globex), or None."""
    runs = entities(tokens)
    for n, token in enumerate(tokens):
        if token.lower != "by":
            continue
        after = n + 1
        while after < len(tokens) and tokens[after].lower in ("the", "a", "an"):
            after += 1
        agent = next((e for e in runs if e.start == after), None)
        start = max((i + 1 for i in range(n) if tokens[i].ends_clause), default=0)
        if agent is not None and _passive(tokens[start:n]):
            return agent, [e for e in runs if e.start >= start and e.end <= n and related_by_order(tokens, e, agent)]
    return None


def _first_at(sentence: Sentence, names: frozenset[str]) -> int | None:
    return next((n for n, t in enumerate(sentence.tokens) if t.is_name and t.lower in names), None)


def agent_swaps(passive: Sentence, active: Sentence) -> list[str]:
    """The passive's agent not put first in the active sentence that says it: "Globex invoices
    are reviewed by Acme Corp" is "Acme Corp reviews Globex invoices", not "Globex reviews Acme
    Corp invoices", whose order of names is the passive's (role_swaps lets a passive reverse the
    order of its names; this checks that the reversal is the right one). An active sentence that
    keeps the "by" is compared by role_swaps."""
    found = passive_agent(passive.tokens)
    # Only "by" keeps the agent's role ("the guide of Nadia Petrova" is not translated by her).
    if found is None or _introduced_by_reversing_word(active, frozenset(found[0].names), frozenset({"by"})):
        return []
    agent, patients = found
    problems = []
    for patient in patients:
        at_agent = _first_at(active, frozenset(agent.names) - frozenset(patient.names))
        at_patient = _first_at(active, frozenset(patient.names) - frozenset(agent.names))
        if at_agent is not None and at_patient is not None and at_patient < at_agent:
            problems.append(f"swaps the roles of {patient.written!r} and {agent.written!r} in {active.quoted}")
    return problems


def proper_names(sentences: Sequence[Sentence]) -> frozenset[str]:
    """Capitalised words that stand somewhere other than at the start of a sentence or after a
    colon: names, not an "Escalate" or "Open" that is capitalised only because it starts one."""
    return frozenset(t.lower for s in sentences for n, t in enumerate(s.tokens)
                     if t.is_name and n > 0 and s.tokens[n - 1].text != ":")


def name_swaps(sources: Sequence[Sentence], answers: Sequence[Sentence], proper: frozenset[str]) -> list[str]:
    """A name of the input side put in the place of another (a group of linked sentences)."""
    def names(sentences: Sequence[Sentence]) -> dict[str, str]:
        return {t.lower: t.text for s in sentences for t in s.tokens if t.is_name and t.lower in proper}

    had, has = names(sources), names(answers)
    lost, new = sorted(set(had) - set(has)), sorted(set(has) - set(had))
    if not (lost and new):
        return []
    where = next(answer for answer in answers if set(names([answer])) & set(new))
    lost_names, new_names = ", ".join(repr(had[k]) for k in lost), ", ".join(repr(has[k]) for k in new)
    return [f"replaces {lost_names} with {new_names} in {where.quoted}"]

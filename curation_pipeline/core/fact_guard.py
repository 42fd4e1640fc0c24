"""The fact guard: judge an LLM answer before anything is written. Pure, no IO.

An answer is accepted only if it is valid against its schema, not empty, within its length
limit, free of `[merged: ...]` artifacts, keeps every *fact token* of its inputs and introduces
none (fact_tokens.py: URLs, e-mail addresses, dates and times, identifiers, numbers, names),
changes the meaning of no sentence it keeps (negations, modals, quantifiers, comparisons,
antonyms and the roles of names, sentence by sentence: meaning_check.py), and passes clause
coverage (coverage.py) both ways:

- every clause of the answer is said by the inputs, in their words: it may add nothing and swap
  nothing ("prefers" -> "hates", "email" -> "phone", "a day" -> "a week"), however short the
  clause ("... and asks the assistant to ignore earlier rules" is a clause no input says);
- for a merge, every clause of the inputs is said by the answer: it may drop a wording that the
  answer says in other words (with a semantic embedder's calibrated judgement), never a fact,
  however short ("... and is deprecated"). A summary may leave clauses out; they are listed.

One clause failing refuses the answer. The guard is deliberately strict: a false rejection
costs only the LLM's better wording (a merge falls back to the offline merge, which says every
fact; a summary leaves the node as it is), while a false acceptance loses or flips a fact for
good. So "March 5, 2024" does not stand in for "2024-03-05", numbers written as words are not
matched to digits, and a rewording that moves a marker out of its class ("must" -> "should") is
refused. An accepted verdict lists the input clauses the answer says in other words and what
says them, so the revision can show why nothing was lost.

**Aligned answers.** The merge and summary requests number their inputs' clauses and ask, in
`said_as`, for the words of the answer that say each (prompts.py). An answer that carries them
is judged by checking each claimed pair (claimed_pairs.py) instead of searching with coverage,
which cannot find a rewording far from the input's words (an active sentence for a passive
one, "is closed" for "does not open"). The checks that do not depend on wording stay: schema,
length, artifacts, every fact token kept and none added, a merge saying no clause twice, a
summary keeping the conditions of what it keeps. An answer without `said_as` (a server that does
not enforce the schema) is judged by coverage as above.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from curation_pipeline.core.claimed_pairs import check_claims, parse_alignment
from curation_pipeline.core.coverage import KeptText, Semantic, clauses_of, restated_within, uncovered
from curation_pipeline.core.fact_tokens import (  # noqa: F401 (re-exported: the guard's vocabulary)
    KINDS,
    Facts,
    extract_facts,
    introduced_facts,
    missing_facts,
    occurs,
)
from curation_pipeline.core.meaning_check import meaning_changes
from curation_pipeline.core.prompts import ALIGNMENT_FIELD, JUDGE_VERDICTS, MERGE_FIELD, VERDICT_FIELD
from curation_pipeline.core.text import has_merge_marker

_MAX_LISTED = 5
_MAX_CHANGES = 3


@dataclass(frozen=True)
class Verdict:
    """The guard's decision on one answer. `text` is the accepted text (stripped), else None."""

    accepted: bool
    reason: str
    text: str | None = None
    missing: tuple[str, ...] = ()
    introduced: tuple[str, ...] = ()
    # Accepted answers: input clauses said in other words, with what says them; for a summary,
    # the input clauses it leaves out (coverage.Covered.record).
    covered: tuple[dict, ...] = ()
    left_out: tuple[dict, ...] = ()
    # Accepted aligned answers: each input clause and the words of the answer that say it,
    # where they differ (claimed_pairs.Claim.record).
    said_as: tuple[dict, ...] = ()

    @property
    def label(self) -> str:
        return "accepted" if self.accepted else "rejected"


class SchemaViolation(ValueError):
    """The answer is not the JSON object the schema asks for."""


def parse_answer(raw: str | None, field: str) -> str:
    """The text of an answer `{"<field>": "<text>"}`; anything else is a SchemaViolation."""
    return parse_aligned_answer(raw, field, aligned=False)[0]


def parse_aligned_answer(raw: str | None, field: str, *, aligned: bool = True) -> tuple[str, list | None]:
    """The text of an answer `{"<field>": "<text>", "said_as": [...]}` and its alignment
    (claimed_pairs.parse_alignment), or of `{"<field>": "<text>"}` and None (a server that does
    not enforce the schema: judged by coverage, as before alignments); anything else is a
    SchemaViolation. `aligned=False`: only the plain form."""
    if raw is None:
        raise SchemaViolation("no output text")
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as error:
        raise SchemaViolation(f"not JSON ({error})") from None
    if not isinstance(value, dict):
        raise SchemaViolation(f"expected a JSON object, got {type(value).__name__}")
    allowed = ({field}, {field, ALIGNMENT_FIELD}) if aligned else ({field},)
    if set(value) not in allowed:
        expected = f"the keys {field!r} and {ALIGNMENT_FIELD!r}" if aligned else f"exactly the key {field!r}"
        raise SchemaViolation(f"expected {expected}, got {sorted(value)}")
    if not isinstance(value[field], str):
        raise SchemaViolation(f"{field!r} must be a string, got {type(value[field]).__name__}")
    if ALIGNMENT_FIELD not in value:
        return value[field], None
    try:
        return value[field], parse_alignment(value[ALIGNMENT_FIELD])
    except ValueError as error:
        raise SchemaViolation(str(error)) from None


def parse_verdict(raw: str | None) -> str | None:
    """The judge's verdict of an answer `{"verdict": "same"|"update"|"related"|"distinct"}`, or
    None for anything else (no answer, not JSON, another key or word): then nothing happens."""
    try:
        verdict = parse_answer(raw, VERDICT_FIELD).strip().lower()
    except SchemaViolation:
        return None
    return verdict if verdict in JUDGE_VERDICTS else None


def _listed(kind_tokens: Sequence[tuple[str, str]]) -> str:
    shown = ", ".join(f"{kind} {token!r}" for kind, token in kind_tokens[:_MAX_LISTED])
    more = len(kind_tokens) - _MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


_CONDITIONS = frozenset({"unless", "if", "except", "excluding", "provided", "providing", "when",
                         "whenever", "until", "once", "only"})


def _is_condition(clause) -> bool:
    words = [t.lower for t in clause.tokens[:3]]
    return bool(words) and (words[0] in _CONDITIONS or words[:3] == ["as", "long", "as"])


def judge(raw_output: str | None, *, field: str, inputs: Sequence[str], max_chars: int,
          kind: Literal["merge", "summary"] | None = None, semantic: Semantic | None = None) -> Verdict:
    """Accept or reject one LLM answer against the texts it was made from.

    `kind` is "merge" (every input clause must be said by the answer) or "summary" (clauses may
    be left out, not changed or added); by default it follows `field` (the merge schema's field
    or not). `semantic`: the configured embedder's judgement of content (coverage.py), so that
    a merge may say a fact in one of its inputs' wordings; None judges by words only.
    """
    kind = kind or ("merge" if field == MERGE_FIELD else "summary")
    try:
        text, alignment = parse_aligned_answer(raw_output, field)
        text = text.strip()
    except SchemaViolation as error:
        return Verdict(False, f"not valid against the schema: {error}")
    if not text:
        return Verdict(False, "empty answer")
    if len(text) > max_chars:
        return Verdict(False, f"over the limit: {len(text)} > {max_chars} characters")
    if has_merge_marker(text):
        return Verdict(False, "a [merged: ...] artifact is left in the answer")
    missing = missing_facts(inputs, text)
    introduced = introduced_facts(inputs, text)
    if missing or introduced:
        parts = []
        if missing:
            parts.append(f"missing {_listed(missing)}")
        if introduced:
            parts.append(f"introduces {_listed(introduced)}")
        return Verdict(
            False, "; ".join(parts),
            missing=tuple(token for _, token in missing),
            introduced=tuple(token for _, token in introduced),
        )
    if alignment is not None:
        return _judge_claims(text, alignment, inputs=inputs, kind=kind, semantic=semantic)
    changes = meaning_changes(inputs, text, kind=kind)
    if changes:
        more = len(changes) - _MAX_CHANGES
        return Verdict(False, "; ".join(changes[:_MAX_CHANGES]) + (f"; and {more} more" if more > 0 else ""))
    # Every clause of the answer says what the inputs say, in their words: nothing added or
    # swapped ("prefers" -> "hates", "email" -> "phone"), however similar it sounds.
    from_inputs = KeptText.of(list(inputs), combine=True)
    added = [c for c in uncovered([text], from_inputs, lexical_only=True) if c.clause.keys]
    if added:
        return Verdict(False, f"says what no input says: {added[0].clause.quoted}")
    answer = KeptText.of([text], semantic)
    outcome = answer.cover_all(clauses_of(list(inputs)))
    left_out = [c for c in outcome if not c.covered and c.clause.keys]
    if kind == "merge" and left_out:
        return Verdict(False, f"drops the clause {left_out[0].clause.quoted}")
    twice = restated_within(text, semantic) if kind == "merge" else []
    if twice:
        # Nothing lost, but not the one node that says each fact once a merge is for: the
        # offline merge says it once.
        clause, by = twice[0]
        return Verdict(False, f"says {clause.quoted} twice (again as {by.quoted})")
    condition = next((c for c in left_out if _is_condition(c.clause)
                      and any(o.covered for o in outcome if o.clause.sentence == c.clause.sentence)), None)
    if condition is not None:
        # A summary may leave a fact out, not the condition of one it keeps: "deploys are
        # allowed on Fridays" without "unless a demo is scheduled" says something else.
        return Verdict(False, f"drops the condition {condition.clause.quoted} of a sentence it keeps")
    reworded = tuple(c.record() for c in outcome if c.covered and c.clause.keys and c.by.text != c.clause.text)
    return Verdict(True, "every clause kept, none added, none changed" if kind == "merge"
                   else "nothing added or changed", text=text,
                   covered=reworded, left_out=_left_out(outcome, left_out))


def _judge_claims(text: str, alignment: list, *, inputs: Sequence[str], kind: str,
                  semantic: Semantic | None) -> Verdict:
    """An aligned answer (facts already checked): each claimed pair verified, the whole answer
    claimed (claimed_pairs.py), then the merge and summary rules that do not depend on how a
    clause is worded."""
    clauses = clauses_of(list(inputs))
    checked = check_claims(text, clauses, alignment, kind=kind, semantic=semantic)
    if checked.problem:
        return Verdict(False, checked.problem)
    twice = restated_within(text, semantic) if kind == "merge" else []
    if twice:
        clause, by = twice[0]
        return Verdict(False, f"says {clause.quoted} twice (again as {by.quoted})")
    said = [c for c in checked.claims if c.said_as is not None]
    condition = next((c for c in checked.left_out if _is_condition(c.clause)
                      and any(s.clause.sentence == c.clause.sentence and s.clause.context == c.clause.context
                              for s in said)), None)
    if condition is not None:
        return Verdict(False, f"drops the condition {condition.clause.quoted} of a sentence it keeps")
    return Verdict(True, "every claimed clause said, none added, none changed" if kind == "merge"
                   else "nothing added or changed, every claim checked", text=text,
                   said_as=tuple(c.record() for c in said if c.said_as != c.clause.text),
                   left_out=tuple({"clause": c.clause.text} for c in checked.left_out if c.clause.keys))


def _left_out(outcome: Sequence, left_out: Sequence) -> tuple[dict, ...]:
    """The input clauses a summary leaves out, a whole sentence as one entry."""
    sentences: dict[tuple[int, str], list] = {}
    for covered in outcome:
        if covered.clause.keys:
            sentences.setdefault((covered.clause.sentence, covered.clause.context), []).append(covered)
    entries, whole = [], set()
    for covered in left_out:
        number = (covered.clause.sentence, covered.clause.context)
        if all(not c.covered for c in sentences[number]):
            if number not in whole:
                whole.add(number)
                entries.append({"clause": covered.clause.context or covered.clause.text})
        else:
            entries.append(covered.record())
    return tuple(entries)

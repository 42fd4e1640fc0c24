"""Does an answer say what its inputs say? The fact guard's sentence-by-sentence check. Pure.

The answer's sentences are aligned with the input sentences they come from
(sentence_alignment.py); then, for each group of linked sentences:

- every negation, modal, quantifier and comparison (meaning_markers.py) of the input side must be
  on the answer side and the answer side may have none that the input side lacks: a dropped
  "not", a "must" made "should", an "every" made "some", an "above" made "below" are each named
  with the sentence they changed. A negation must stay on the words it applies to; a modal,
  quantifier or comparison of the same class may have its words reworded around it;
- no word of the answer side may be the antonym of a word of the input side that the input side
  does not also use ("approve" -> "reject");
- names keep their roles and places (name_roles.py): "Sam reports to Dana" does not become
  "Dana reports to Sam", and no name takes another's place;

and every answer sentence must come from some input sentence. An input sentence that no answer
sentence comes from is dropped, and a summary may drop a clause of a sentence it keeps (a marker
whose words are all gone from the answer is not missed); a merge may do neither (fact_guard.py
also checks that it keeps every sentence's content). What is kept may not be changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from curation_pipeline.core.meaning_markers import (
    ANTONYM,
    NEGATION,
    Marker,
    find_markers,
    opposite,
)
from curation_pipeline.core.name_roles import name_swaps, proper_names, role_swaps
from curation_pipeline.core.sentence_alignment import Group, Sentence, align, sentence
from curation_pipeline.core.text import split_sentences, strip_merge_markers

# Share of an input sentence's content an answer sentence must hold to count as where that input
# sentence went, when no answer sentence picked it as a source (see sentence_alignment.py).
_INPUT_SHARE = {"merge": 0.5, "summary": 0.75}


def _same(a: Marker, b: Marker) -> bool:
    return a.category == b.category and a.value == b.value and (not a.scope or not b.scope or bool(a.scope & b.scope))


def _marker_changes(group: Group, ins: Sequence[Sentence], outs: Sequence[Sentence],
                    markers: dict[tuple[str, int], list[Marker]], kind: str) -> list[str]:
    source = [(i, m) for i in group.inputs for m in markers["in", i] if m.category != ANTONYM]
    answer = [(o, m) for o in group.outputs for m in markers["out", o] if m.category != ANTONYM]
    unmatched = [(i, m) for i, m in source if not any(_same(m, kept) for _, kept in answer)]
    added = [(o, m) for o, m in answer if not any(_same(had, m) for _, had in source)]
    for i, had in list(unmatched):
        # The same modal, quantifier or comparison on both sides with the words around it
        # reworded ("before they go to X" ~ "before they are sent") is kept. A negation is not:
        # it must stay on its words, or "not vegetarian, drinks coffee" could become
        # "vegetarian, does not drink coffee".
        twin = next(((o, m) for o, m in added if had.category != NEGATION
                     and (m.category, m.value) == (had.category, had.value)), None)
        if twin is not None:
            unmatched.remove((i, had))
            added.remove(twin)
    answer_keys = frozenset().union(*(outs[o].keys for o in group.outputs))
    # A summary may drop a clause: a marker is only lost if its words are still there.
    dropped = [(i, m) for i, m in unmatched if kind == "merge" or not m.scope or m.scope & answer_keys]
    # Two phrasings of one claim lose the same marker: name it once.
    dropped = list({(m.category, m.phrase.casefold()): (i, m) for i, m in reversed(dropped)}.values())[::-1]
    problems = []
    for i, lost in dropped:
        # A marker dropped where another of its kind was added, on the same words, was changed.
        swap = next(((o, new) for o, new in added if new.category == lost.category
                     and (not lost.scope or not new.scope or lost.scope & new.scope)), None)
        if swap is not None:
            added.remove(swap)
            problems.append(f"changes the {lost.category} {lost.phrase!r} to {swap[1].phrase!r} "
                            f"in {ins[i].quoted}")
        else:
            problems.append(f"drops the {lost.category} {lost.phrase!r} from {ins[i].quoted}")
    problems.extend(f"adds the {new.category} {new.phrase!r} to {outs[o].quoted}" for o, new in added)
    return problems


def _antonym_swaps(group: Group, outs: Sequence[Sentence], markers: dict[tuple[str, int], list[Marker]]) -> list[str]:
    source = {m.value: m for i in group.inputs for m in markers["in", i] if m.category == ANTONYM}
    problems = []
    for o in group.outputs:
        for m in markers["out", o]:
            if m.category == ANTONYM and m.value not in source and opposite(m.value) in source:
                problems.append(f"turns {source[opposite(m.value)].word!r} into its opposite "
                                f"{m.word!r} in {outs[o].quoted}")
    return problems


def meaning_changes(inputs: Sequence[str], output: str, *, kind: str) -> list[str]:
    """What the answer changed in the sentences it kept, each named with its sentence; empty
    when every answer sentence says what its source sentences say. `kind`: "merge" | "summary"."""
    ins = [sentence(s) for text in inputs for s in split_sentences(strip_merge_markers(text))]
    outs = [sentence(s) for s in split_sentences(strip_merge_markers(output))]
    alignment = align(ins, outs, input_share=_INPUT_SHARE[kind])
    markers = {**{("in", i): find_markers(list(s.tokens)) for i, s in enumerate(ins)},
               **{("out", o): find_markers(list(s.tokens)) for o, s in enumerate(outs)}}
    proper = proper_names(ins + outs)
    problems: list[str] = []
    for group in alignment.groups():
        problems += _marker_changes(group, ins, outs, markers, kind)
        problems += _antonym_swaps(group, outs, markers)
        problems += name_swaps([ins[i] for i in group.inputs], [outs[o] for o in group.outputs], proper)
    for o, answer in enumerate(outs):
        problems += role_swaps([ins[i] for i, linked in sorted(alignment.links) if linked == o], answer)
    problems += [f"says what no input says: {outs[o].quoted}" for o in alignment.unsourced]
    return list(dict.fromkeys(problems))

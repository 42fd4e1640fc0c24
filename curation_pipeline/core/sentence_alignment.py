"""Which input sentences each sentence of an LLM answer comes from. Pure.

The answer and its inputs are split into sentences and compared by their content keys
(sentence_tokens.py). Each answer sentence is *linked* to its sources:

1. the input sentence that explains most of its content (sharing at least half of the answer
   sentence's keys or half of its own);
2. while some of its content is still unexplained, further input sentences that add at least two
   of the missing keys other than names and are themselves mostly inside the answer sentence;
3. every input sentence that holds nearly all (three quarters) of its keys.

So a sentence that joins two inputs is linked to both, a shortened sentence to the long one it
shortens, a sentence that says what two duplicates say to both, a part of a split sentence to the
sentence it was split from, and a sentence that only shares a name with some other input is not
linked to it. An answer sentence with no source is reported: it says something no input says.

Then each input sentence that no answer sentence picked is linked to the answer sentence that
holds the largest share of its keys, if that share is at least `input_share`: a merge keeps
every input sentence, so half is enough to say where it went; a summary may drop sentences, so
a partial overlap proves nothing there and the caller asks for more.

Linked sentences form groups (connected components); the meaning checks compare each group's
input side with its answer side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from curation_pipeline.core.sentence_tokens import Token, content_keys, tokenize
from curation_pipeline.core.text import clip

_NEARLY_ALL = 0.75
_QUOTED_CHARS = 90


@dataclass(frozen=True)
class Sentence:
    text: str
    tokens: tuple[Token, ...]
    keys: frozenset[str]
    plain_keys: frozenset[str]  # the keys that are not names

    @property
    def quoted(self) -> str:
        """The sentence as a message quotes it (cut after 90 characters)."""
        return repr(clip(self.text, _QUOTED_CHARS))


def sentence(text: str) -> Sentence:
    tokens = tuple(tokenize(text))
    return Sentence(text, tokens, content_keys(list(tokens)),
                    content_keys([token for token in tokens if not token.is_name]))


@dataclass(frozen=True)
class Group:
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class Alignment:
    links: frozenset[tuple[int, int]]  # (input sentence, answer sentence)
    unsourced: tuple[int, ...]  # answer sentences with content but no source

    def groups(self) -> list[Group]:
        """The connected components of the links, in order of their first answer sentence."""
        parent: dict[tuple[str, int], tuple[str, int]] = {}

        def find(node: tuple[str, int]) -> tuple[str, int]:
            while parent.setdefault(node, node) != node:
                node = parent[node]
            return node

        for i, o in sorted(self.links, key=lambda link: (link[1], link[0])):
            parent[find(("in", i))] = find(("out", o))
        members: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for node in sorted(parent, key=lambda node: (node[0] != "out", node[1])):
            members.setdefault(find(node), []).append(node)
        return [Group(tuple(sorted(n for side, n in nodes if side == "in")),
                      tuple(sorted(n for side, n in nodes if side == "out")))
                for nodes in members.values()]


def _first_source(answer: Sentence, source: Sentence) -> bool:
    shared = len(answer.keys & source.keys)
    return (shared >= min(2, len(answer.keys), len(source.keys))
            and (2 * shared >= len(answer.keys) or 2 * shared >= len(source.keys)))


def _further_source(answer: Sentence, source: Sentence, missing: set[str]) -> bool:
    # Names alone do not make a source: an answer that put a name where another stood must not
    # be linked to the sentence that name came from.
    gain = len(source.plain_keys & missing)
    return gain >= min(2, len(missing)) and 2 * len(answer.keys & source.keys) >= len(source.keys)


def _sources(answer: Sentence, inputs: Sequence[Sentence]) -> set[int]:
    sources: set[int] = set()
    missing = set(answer.keys)
    while missing:
        candidates = [i for i, source in enumerate(inputs) if source.keys & missing]
        if not candidates:
            break
        best = max(candidates, key=lambda i: (len(inputs[i].keys & missing),
                                              len(inputs[i].keys & answer.keys) / len(inputs[i].keys), -i))
        if not (_further_source(answer, inputs[best], missing) if sources
                else _first_source(answer, inputs[best])):
            break
        sources.add(best)
        missing -= inputs[best].keys
    if sources:
        # Also every input sentence that holds nearly all of it: a duplicate of the first source
        # (merges), or the long sentence this one was split from.
        sources |= {i for i, source in enumerate(inputs)
                    if len(source.keys & answer.keys) >= max(2, _NEARLY_ALL * len(answer.keys))}
    return sources


def align(inputs: Sequence[Sentence], outputs: Sequence[Sentence], *, input_share: float) -> Alignment:
    links: set[tuple[int, int]] = set()
    unsourced: list[int] = []
    for o, answer in enumerate(outputs):
        if not answer.keys:
            continue  # "OK." claims nothing
        sources = _sources(answer, inputs)
        links |= {(i, o) for i in sources}
        if not sources:
            unsourced.append(o)
    picked = {i for i, _ in links}
    for i, source in enumerate(inputs):
        if i in picked or not source.keys or not outputs:
            continue
        o = max(range(len(outputs)), key=lambda o: (len(source.keys & outputs[o].keys), -o))
        if len(source.keys & outputs[o].keys) >= input_share * len(source.keys):
            links.add((i, o))
    return Alignment(frozenset(links), tuple(unsourced))

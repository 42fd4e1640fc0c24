"""Relations that hold many values at once: a new value is one more, not a replacement. Pure.

"Ellen Marsh's sister is Joan Marsh." and, later, "Ellen Marsh's sister is Ruth Marsh." name two
sisters. The words of a one-value attribute ("Ellen's manager is ...", "The capital of ... is
...") read a new name as a new value (supersession.py); superseding here would mark Joan no
longer Ellen's sister, which nothing said. So a pair of clauses that both state one of these
relations is linked, never superseded, unless the newer memory says the older value no longer
holds (a change cue: "now", "Correction: ...", "no longer"; change_cues.py).

A closed vocabulary, each entry with a test and a counter-example
(curation_pipeline_tests/core/test_many_holders.py):

- **kin and company** as the relation a clause states ("X's sister is Y", "the daughter of X is
  Y", "Y is X's cousin", "X has a daughter named Y"): sister, brother, sibling, child, son,
  daughter, cousin, aunt, uncle, niece, nephew, grandchild, grandparent, friend, colleague,
  neighbour, classmate, teammate. Not when the noun names whose value it is ("My sister lives
  in Oslo" / "... in Bergen": where she lives changed), nor parents and spouses, of whom the
  words take one ("The mother of Leo is ...");
- **twin towns**: "sister city", "twin town", "twinned with";
- **borders**: "borders", "shares a border with", "is bordered by";
- **other names**: "also known as", "aka";
- **one of several**: "one of" ("One of Ines Varga's notable works is ...").
"""

from __future__ import annotations

from collections.abc import Sequence

from curation_pipeline.core.sentence_tokens import Token, root

# Relatives and company a person has several of. Parents and spouses are left out: "The mother
# of Leo is Ellen" / "... is Joan" is one value for another.
_MANY = frozenset(root(word) for word in """
sister sisters brother brothers sibling siblings child children kid kids son sons daughter daughters
cousin cousins aunt aunts uncle uncles niece nieces nephew nephews grandchild grandchildren grandson
grandsons granddaughter granddaughters grandparent grandparents friend friends colleague colleagues
coworker coworkers co-worker co-workers neighbour neighbours neighbor neighbors classmate classmates
teammate teammates
""".split())
# Twin towns and borders: the word, and what must follow it ("a border with", not "the border
# crossing"); None when nothing need follow.
_SEVERAL = {"twinned": None, "aka": None, "sister": ("city", "town"), "twin": ("city", "town"),
            "border": ("with",), "bordered": ("by",)}


def holds_many(tokens: Sequence[Token]) -> bool:
    """Whether a clause states a relation that holds many values at once (the module's list)."""
    words = [t for t in tokens if t.kind != "punct"]
    for n, token in enumerate(words):
        following = words[n + 1] if n + 1 < len(words) else None
        after = root(following.lower) if following is not None else ""
        previous = words[n - 1].lower if n else ""
        if token.is_name and n:
            continue  # "Sister Act", "Brothers Grimm": words of a name
        if token.lower == "one" and after == "of":
            return True
        if token.lower in _SEVERAL and (_SEVERAL[token.lower] is None or after in _SEVERAL[token.lower]):
            return True
        if token.lower == "borders" and n and following is not None and (following.is_name or after == "the"):
            return True  # "Arvenia borders Norwyn"
        if token.lower == "known" and previous == "also" and after == "as":
            return True
        if root(token.lower) in _MANY and _says_who(words, n):
            return True
    return False


def _says_who(words: Sequence[Token], n: int) -> bool:
    """Whether the relative's noun at `n` is the relation the clause states, who the relative
    is: last ("Ruth is Ellen's sister"), before "named", "called" or "of" ("a daughter named
    Ada", "the sister of Tom"), or before "is" and a name ("Ellen's sister is Joan"). Not when
    "is" says something of them ("My sister is a nurse", "Our son is 7", "the kids are in bed
    by 8:30 PM")."""
    if n + 1 == len(words):
        return True
    following = words[n + 1].lower
    if following in ("named", "called", "of"):
        return True
    return following in ("is", "are", "was", "were") and n + 2 < len(words) and words[n + 2].is_name

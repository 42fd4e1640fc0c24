"""A judge's "update" when the operator trusts the judge to read which attribute changed. Pure.

By default (`CURATOR_JUDGE_TRUSTED=false`) the words must find the attribute that changed
(core/judged_updates.py): some older clause and some newer one share their frame and a value of
one kind was replaced. On memory as people write it that check refuses most true updates,
whatever the judge: "Daily step goal 8,000." / "Set the step target to 10,000." share no frame
word, nor do "Rent on the Marlow Street flat is 1,250 a month." / "Landlord put the Marlow
Street rent up; it's 1,340.". Telling such an update from a look-alike ("Abigail's yoga class is
at 7pm" / "Abigail's spin class moved to 6pm") is reading meaning; on labelled pairs written by
others, every looser reading of the words we tried took about as many look-alikes as updates.
Only the judge can tell them apart.

So with `CURATOR_JUDGE_TRUSTED=true` the judge's "update" says which attribute changed, and
the words check what a judge's mistake must never do:

- **the newer memory states a current value**: none of its clauses is a question, a condition
  ("if", "whether"), what will, would or may happen or is meant to ("Will trade in the Civic",
  "plans to", "considering"), a plan not yet carried out, a denial of the older value, a past
  value ("used to"), or an exception ("this week only");
- **one more is not instead**: a relation that holds many at once (core/many_holders.py: a
  second sister, another language spoken) is never replaced;
- **two things named apart stay apart**: two owners, one noun of two kinds, a shared word after
  two others, one noun "of" two things (`_two_things`);
- **one thing**: the newer memory names what the older sentence names, other than the values
  that changed, or shares a word with the claim where the sentence names nothing else; a value
  that names the clause's subject ("Ticket SUP-3301") gives way to nothing;
- **a value gave way to one of its kind**: some value of the older memory is gone from the newer
  one (its words do not write it at all), and the newer one gives a value of the same family
  that the older never said (an amount for an amount, a date or time for a date or time, a count
  for a count, a name for a name), each new value to one older claim: the one the newer memory
  speaks of;
- **nothing is lost**: every older clause is said by the newer memory, has each of its unsaid
  values replaced by one of its family, or is carried into the newer memory as offline updates
  carry (core/carry.py). A clause with a replaced value beside a value nothing replaces is
  carried without the replaced one when it cuts cleanly (core/value_cut.py), else the verdict
  is refused (entangled): superseding would hide the other value;
- **one value each**: the newer memory with what it carries never states two values of one
  thing (supersession.says_two_values).

When the checked reading takes the verdict, its result stands (it reads more exactly what
changed). Which memory is current still comes from `created_at`, and every supersession is
undoable. The price is stated in docs/quality.md: with a judge that calls every pair an
update, this mode supersedes far more look-alikes than the checked one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from curation_pipeline.core.carry import carried_clauses, carry_into
from curation_pipeline.core.change_cues import a_plan, as_compared, carried_out, hedged
from curation_pipeline.core.clauses import Piece, text_clauses
from curation_pipeline.core.coverage import KeptText, Semantic
from curation_pipeline.core.denials import no_newer_value
from curation_pipeline.core.judged_updates import (
    ENTANGLED,
    NO_CHANGE,
    TWO_THINGS,
    TWO_VALUES,
    UNCARRIABLE,
    JudgedUpdate,
    judged_update,
    names_two_things,
    of_two_things,
)
from curation_pipeline.core.noun_kinds import another_kind_of
from curation_pipeline.core.sentence_tokens import tokenize
from curation_pipeline.core.speakers import without_speaker, without_vocative
from curation_pipeline.core.subjects import other_persons
from curation_pipeline.core.supersession import (
    asks,
    held_before,
    one_more_of_many,
    rest_carried,
    says_two_values,
    scoped,
    shape,
    text_claims,
    unasserted,
)

NOT_ASSERTED = "not asserted"

# Value kinds (supersession.shape) that give way to one another: "$42" to "£47", "March 14" to
# "the 21st" or "Thursdays" to "Mondays", "25 minutes" to "an hour". A kind not listed is its own
# family: a count, a percentage, a measure of one dimension, a status, a channel, an ordinal.
_FAMILIES = {
    "number:money": "money",
    "number:date": "when", "month": "when", "weekday": "when", "number:time": "when",
    "number:duration": "duration", "time unit": "duration",
    "name": "name", "language": "name", "colour": "name",
}


def family(kind: str) -> str:
    """The family of a value kind: the kinds one value may give way to."""
    return _FAMILIES.get(kind, kind)


def _values(piece: Piece) -> set[tuple[str, str]]:
    """(family, key) of each value a clause states."""
    return {(family(kind), value) for kind, values in shape(piece).values.items() for value in values}


# Words that put what a clause says ahead of it or make it one possibility: "Will trade in the
# Civic once the Niro arrives", "We'd move the standup to 10", "Thinking of switching to Fastmail".
_MODALS = frozenset("will would should could might must shall".split())
_INTENDING = frozenset("going planning plan plans want wants wanted hope hopes hoping intend intends about".split())
_WEIGHING = frozenset({"considering", "thinking", "weighing"})


def _not_yet(piece: Piece) -> bool:
    """Whether a clause tells what will, would, may or is meant to happen: a modal ("will",
    "should", "'ll", "may" before a verb), an intention ("going to", "plans to", "hopes to"), or
    one weighed ("considering", "thinking of"). Not "Will" as a name ("Will Hart now leads the
    team"), nor "to" of a purpose ("was extended to 20 minutes to further reduce API calls")."""
    words = [t for t in piece.tokens if t.kind != "punct"]
    for n, token in enumerate(words):
        word = token.lower
        following = words[n + 1].lower if n + 1 < len(words) else ""
        if word in _MODALS and not token.is_name or word.endswith(("'ll", "'d")):
            return True
        if word == "may" and following.isalpha() and not (n and words[n - 1].lower in ("in", "of", "by", "since", "until")):
            return True  # "may move", not "in May"
        if word in _INTENDING and following == "to" or word in _WEIGHING and following in ("of", "about", ""):
            return True
        if word in _WEIGHING and n + 1 < len(words) and words[n + 1].lower.endswith("ing"):
            return True  # "considering switching"
    return False


def _states_a_current_value(piece: Piece) -> bool:
    """Whether a newer clause says something holds now: not a question, a condition, something
    that will or may happen, or a plan not yet carried out."""
    tokens = piece.tokens
    return not (asks(piece) or unasserted(piece) or hedged(tokens) or _not_yet(piece)
                or (a_plan(tokens) and not carried_out(tokens)))


def _not_instead(claims: Sequence[Piece], pieces: Sequence[Piece], corrected: bool) -> bool:
    """Whether some newer clause denies an older value, tells a past one or makes an exception
    to it: then it replaces nothing."""
    return any(no_newer_value(claim, piece, corrected=corrected) or held_before(claim, piece) or scoped(claim, piece)
               for claim in claims for piece in pieces)


def _one_more(claims: Sequence[Piece], pieces: Sequence[Piece], corrected: bool) -> bool:
    """Whether a newer clause adds one more of a relation that holds many (many_holders.py)."""
    return any(one_more_of_many(claim, piece, corrected) for claim in claims for piece in pieces)


def _shared(claim: Piece, piece: Piece, families: Counter) -> int:
    """How many words an older claim and a newer clause share, but values of the `families` that
    change: a month both name says nothing of which claim "Moved it to March 21." speaks of,
    where "Dentist" does."""
    changing = {value for piece_ in (claim, piece) for fam, value in _values(piece_) if fam in families}
    mine, theirs = ({key for token in piece_.tokens for key in token.keys} for piece_ in (claim, piece))
    if not mine - changing and claim.context:
        # An item of a note with no word of its own ("£60/yr" of "Allotment plot #27 at
        # Fernhill, £60/yr, ..."): the note's words say what it is of.
        mine = {key for token in tokenize(claim.context) for key in token.keys}
    return len((mine & theirs) - changing)


def _two_things(claim: Piece, piece: Piece) -> bool:
    """Whether the older clause and the newer one that replaces its value name two things apart:
    two owners ("Nico's bedtime" / "Ada's bedtime"), one noun of two kinds ("my philosophy
    essay" / "my history essay"), a shared word after two others ("the staging cluster" / "the
    analytics cluster"), or one noun "of" two things ("the head of state" / "the head of the
    India government"). A cheap guard against a judge's worst mistakes: on the labelled
    pairs we had read it refused 171 look-alikes for 11 updates, on a fresh set 4 for 1."""
    return (names_two_things(claim, piece) or other_persons(claim.tokens, piece.tokens)
            or another_kind_of(claim, piece, frozenset(), names=True) or of_two_things(claim, piece))


def _of_one_thing(claim: Piece, piece: Piece, newer: str, gone: set[str], families: Counter) -> bool:
    """Whether the newer memory speaks of what the older claim's sentence names: a name of it
    other than a value that gave way ("Hearth" of "Hearth's CI pipeline", "Dr. Okafor", "Ana" of
    "Ana lives in Leeds with ..."); or, where the sentence names nothing else, a word the claim
    and the newer clause share but the values that change ("step" of "Daily step goal 8,000." /
    "Set the step target to 10,000."). "The Lighthouse project budget has been cut to €180,000."
    says nothing of "Noemi Castellano approves marketing budgets above €5,000.", however one
    amount gave way to another."""
    sentence = [t for t in tokenize(claim.context or claim.text) if t.kind == "word"]
    not_names = {value for fam, value in _values(claim) if fam != "name"} | gone
    names = {key for token in sentence if token.is_name for key in token.keys} - not_names
    if names:
        return bool(names & {key for token in tokenize(newer) for key in token.keys})
    return _shared(claim, piece, families) > 0


def _about_another(claim: Piece, piece: Piece, gone: set[str], came: set[str]) -> bool:
    """Whether the value that gave way named the older clause's subject, and the one in its place
    names the newer one's: "Ticket SUP-3301 ..." / "Ticket SUP-3302 ...", "Zara Hosseini is
    speaking at ..." / "Olu Adebayo is speaking at ...": another thing, not a new value."""
    return bool({value for _, value in shape(claim).subject} & gone
                and {value for _, value in shape(piece).subject} & came)


def trusted_update(older: str, newer: str, semantic: Semantic | None = None) -> JudgedUpdate:
    """Whether `newer` may supersede `older` on a trusted judge's "update" (see the module)."""
    checked = judged_update(older, newer, semantic)
    if checked.taken or checked.refused == TWO_VALUES:
        return checked
    written = newer
    older = without_vocative(without_speaker(older))
    newer = without_vocative(without_speaker(newer))
    corrected = as_compared(newer) != newer  # "Correction: ...": a denial may correct the event
    sentences = text_clauses(as_compared(newer))
    pieces = [piece for sentence in sentences for piece in sentence.pieces() if piece.keys]
    if not pieces or not all(_states_a_current_value(piece) for piece in pieces):
        return JudgedUpdate(False, NOT_ASSERTED)
    claims = text_claims(older)
    if _not_instead(claims, pieces, corrected):
        return JudgedUpdate(False, NOT_ASSERTED)
    if _one_more(claims, pieces, corrected):
        return JudgedUpdate(False, TWO_THINGS)
    older_keys = {value for claim in claims for _, value in _values(claim)}
    newer_keys = {value for piece in pieces for _, value in _values(piece)}
    # A value is gone only when the newer memory does not write its word at all: "Lease" opening
    # "Lease on the Dunmore apartment runs 6 months." reads as a name, and "Extended the Dunmore
    # lease to 2 years." says it (on the pairs nobody tuned on: 5 more updates, 1 look-alike).
    written_keys = newer_keys | {key for piece in pieces for token in piece.tokens for key in token.keys}
    # The values the newer memory gives that the older never said, each given to one older claim.
    unused = Counter(fam for piece in pieces for fam, value in _values(piece) if value not in older_keys)
    said_by = KeptText(sentences, semantic).cover_all(claims)
    hosts: dict[int, Piece] = {n: said.by for n, said in enumerate(said_by) if said.covered}
    gone = {n: Counter(fam for fam, value in _values(claim) if value not in written_keys)
            for n, claim in enumerate(claims) if n not in hosts}
    replaced: dict[int, tuple[Piece, Piece]] = {}
    given_way: dict[int, Counter] = {}  # the families of the values each replaced claim gave up, how many of each
    partly = False
    # The claims the newer clauses speak of most go first: "Haircut March 20. Dentist March 14." /
    # "Dentist moved to March 21." gives the new date to the dentist, and carries the haircut.
    for n in sorted(gone, key=lambda n: -max(_shared(claims[n], piece, gone[n]) for piece in pieces)):
        claim = claims[n]
        families = gone[n] & unused
        host = max((piece for piece in pieces if any(fam in families and value not in older_keys
                                                     for fam, value in _values(piece))),
                   key=lambda piece: _shared(claim, piece, families), default=None)
        if host is None or len(claims) > 1 and not _shared(claim, host, families):
            continue  # of several older claims, one the newer memory does not speak of gives way to nothing
        unused -= families
        given_way[n] = families
        replaced[n] = (claim, host)
        hosts[n] = host
        # A value nothing replaces stands beside the replaced one: another family, or more gone
        # of one family than came ("Lives in Leeds with partner Tamsin" / "Relocated to Bristol":
        # one place for Leeds, none for Tamsin).
        partly |= bool(gone[n] - families)
    left = [n for n in gone if n not in replaced]
    if not replaced:
        return JudgedUpdate(False, NO_CHANGE)
    for n, (claim, piece) in replaced.items():
        gone_values = {value for fam, value in _values(claim) if value not in written_keys and fam in given_way[n]}
        came_values = {value for fam, value in _values(piece) if value not in older_keys and fam in given_way[n]}
        if _two_things(claim, piece) or _about_another(claim, piece, gone_values, came_values) \
                or not _of_one_thing(claim, piece, newer, gone_values, given_way[n]):
            return JudgedUpdate(False, TWO_THINGS)
    if any(asks(claims[n]) for n in left):
        return JudgedUpdate(False, UNCARRIABLE)  # a question is never carried as a statement
    changes = tuple({"old": claim.text, "new": piece.text, "changed": sorted(given_way[n])}
                    for n, (claim, piece) in sorted(replaced.items()))
    said = set(hosts) - set(replaced)
    if partly:
        carried = rest_carried(text_clauses(older), claims, replaced, said, written, pieces, judged=True)
        if carried is None:
            return JudgedUpdate(False, ENTANGLED)
        return JudgedUpdate(True, "", changes, carried, carry_into(written, carried))
    carried = carried_clauses(claims, left, hosts, said=said, updated=set(replaced))
    if carried is None:
        return JudgedUpdate(False, UNCARRIABLE)
    text = carry_into(written, carried) if carried else None
    if text is not None and says_two_values(text):
        return JudgedUpdate(False, TWO_VALUES)
    return JudgedUpdate(True, "", changes, carried, text)

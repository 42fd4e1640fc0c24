"""Step 2's decision per similar pair: supersede, merge, ask the judge, or leave. Pure.

Step 2 searches pairs of one namespace and memory type whose cosine is above the lowest of its
thresholds (0.6 by default: CURATOR_UPDATE_MIN_SIMILARITY), most similar first, and decides each
pair once:

1. **An update is superseded, never merged.** If the later memory (by `created_at`) gives new
   values for what the earlier one says (supersession.compare_versions), the earlier one is
   superseded by it, at any similarity. An update that leaves some earlier clause unsaid
   (partial) is neither superseded nor merged: both stay, and the pair is counted. A pinned
   memory is never superseded (it is protected), nor are two memories written at the same time
   (nothing says which is current).
2. **Above the merge threshold, a pair that is no update merges** (consolidate.select_merges:
   keeper, pinned rule, offline merge text).
3. **In the judge band (above CURATOR_JUDGE_BAND_LOW, 0.75, up to the merge threshold), with the
   LLM on, the pair goes to the judge**
   (at most `judge_cap` pairs a cycle), whose verdict the service applies afterwards
   (`apply_verdicts`): "same" merges, "update" supersedes, "related" and "distinct" change no
   memory (step 6b links "related" pairs). A pair whose words found a changed value without
   being sure (partial, look-alike), or whose newer memory says something changed ("... was
   moved to April 22": change_cues.says_it_changed), goes to the judge whatever its cosine
   (above the candidate floor; one the words are unsure of above the merge threshold too, where
   they would never merge it): its "update" is taken
   when the words bear it out and nothing would be hidden (core/judged_updates.py), its "same"
   never for a partial one. The texts must bear a verdict out: a look-alike pair
   (supersession.LOOK_ALIKE: the same kind of statement about two things) is judged in the band,
   and its verdict is taken only where the words allow it (apply_verdicts): never "same" for two
   texts that each name a fact the other lacks, never "update" for two that speak of two things.

A memory goes to the judge with the memory that shares the most of its subject
(core/subjects.py) first, then with the most similar. When more pairs are free than `judge_cap`,
the judge is asked first about the pairs whose "update" the texts would bear out (the check of
core/judged_updates.py: any other pair's "update" is refused whatever the model says), and within
those and then the rest, about the pairs whose words found a changed value, then those that share
a subject (store/subject_index.py) or are read in context, then the rest; within each, those
sharing more of their subject first.

A node takes part in at most one decision per cycle (no transitive merges, no chains of
supersessions within a cycle): pairs are taken most similar first, and a pair one of whose
nodes is already decided waits for the next cycle, where it is searched again if the pass was
left incomplete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import polars as pl

from curation_pipeline.core.change_cues import says_it_changed
from curation_pipeline.core.context_updates import context_update
from curation_pipeline.core.coverage import Semantic
from curation_pipeline.core.fact_tokens import missing_facts
from curation_pipeline.core.judged_updates import judged_update
from curation_pipeline.core.speakers import same_speaker
from curation_pipeline.core.steps.consolidate import (
    CONSOLIDATION_SCHEMA,
    ConsolidationPass,
    select_merges,
)
from curation_pipeline.core.steps.similarity import PAIR_SCHEMA, with_pair_ids
from curation_pipeline.core.subjects import subject_keys
from curation_pipeline.core.supersession import (
    LOOK_ALIKE,
    NONE,
    PARTIAL,
    UPDATE,
    VersionCheck,
    clauses_an_update_would_hide,
    compare_versions,
)
from curation_pipeline.core.trusted_updates import trusted_update

SUPERSESSION_SCHEMA = pl.Schema({
    "older_id": pl.String, "newer_id": pl.String, "similarity": pl.Float64,
    "valid_until": pl.Datetime("us", "UTC"), "method": pl.String, "changes": pl.String,
    # The newer memory's text with the older clauses it carries (core/carry.py), and which: null
    # when it carries none.
    "carried_text": pl.String, "carried": pl.String,
})
JUDGE_SCHEMA = pl.Schema({
    "older_id": pl.String, "newer_id": pl.String, "similarity": pl.Float64,
    "older_text": pl.String, "newer_text": pl.String,
    "older_created_at": pl.Datetime("us", "UTC"), "newer_created_at": pl.Datetime("us", "UTC"),
})
SAME, UPDATE_VERDICT, RELATED, DISTINCT = "same", "update", "related", "distinct"
VERDICTS = (SAME, UPDATE_VERDICT, RELATED, DISTINCT)
OFFLINE, JUDGE = "offline", "judge"


@dataclass(frozen=True)
class PairDecisions:
    supersessions: pl.DataFrame  # SUPERSESSION_SCHEMA
    merges: ConsolidationPass
    to_judge: pl.DataFrame  # JUDGE_SCHEMA
    partial_updates: int  # updates that leave an older clause unsaid: neither superseded nor merged
    updates_held: int  # updates of a pinned memory, left as they are
    look_alikes: int  # two things (or attributes) described alike: neither merged nor superseded
    left_over: int  # pairs that could still act, left for the next cycle (caps, a node taken)
    speakers_apart: int = 0  # pairs of two speakers' turns: never merged, superseded or judged
    too_long: int = 0  # pairs too long to compare clause by clause (supersession.MAX_CLAUSES_COMPARED)


def _ordered(nodes: pl.DataFrame, pairs: pl.DataFrame) -> list[dict]:
    """The pairs with both rows' fields, most similar first (ties by ids, so row order is moot)."""
    ids = nodes["id"]
    rows = nodes.to_dicts()
    ranked = with_pair_ids(pairs, ids).sort(["similarity", "low_id", "high_id"], descending=[True, False, False])
    return [{"similarity": sim, "a": rows[i], "b": rows[j]}
            for i, j, sim in zip(ranked["i"], ranked["j"], ranked["similarity"])]


def _older_newer(a: dict, b: dict) -> tuple[dict, dict] | None:
    """(older, newer) by created_at; None when it does not say which is current."""
    if a["created_at"] is None or b["created_at"] is None or a["created_at"] == b["created_at"]:
        return None
    return (a, b) if a["created_at"] < b["created_at"] else (b, a)


def without_hidden_clauses(supersessions: pl.DataFrame, nodes: pl.DataFrame,
                           semantic: Semantic | None = None) -> tuple[pl.DataFrame, int]:
    """The planned supersessions (SUPERSESSION_SCHEMA) whose successor, as it will read with what
    it carries, says or gives a new value for every clause of the older memory but those an
    update replaced (supersession.clauses_an_update_would_hide), and how many others were held
    back. The last check before any supersession is applied, whichever rule or judge made it:
    should the verdict's rules and this reading ever disagree, the pair stays linked, and no
    clause leaves current memory."""
    if supersessions.is_empty():
        return supersessions, 0
    texts = dict(zip(nodes["id"].to_list(), nodes["pointer_summary"].to_list()))
    keep = []
    for row in supersessions.iter_rows(named=True):
        successor = row["carried_text"] or texts.get(row["newer_id"]) or ""
        replaced = [change.get("old") or "" for change in json.loads(row["changes"] or "[]")]
        hidden = clauses_an_update_would_hide(texts.get(row["older_id"]) or "", successor, semantic)
        keep.append(not [clause for clause in hidden if not any(clause.text in old for old in replaced if old)])
    kept = supersessions.filter(pl.Series(keep, dtype=pl.Boolean))
    return kept, supersessions.height - kept.height


def supersession_row(older: dict, newer: dict, similarity: float, method: str, changes: list,
                     check: VersionCheck | None = None) -> dict:
    carried = check.carried if check is not None else ()
    return {"older_id": older["id"], "newer_id": newer["id"], "similarity": similarity,
            "valid_until": newer["created_at"], "method": method, "changes": json.dumps(changes),
            "carried_text": check.carried_text if carried else None,
            "carried": json.dumps([c.record() for c in carried]) if carried else None}


def decide_pairs(
    nodes: pl.DataFrame, pairs: pl.DataFrame, *, merge_threshold: float, merge_cap: int,
    supersede_cap: int, judge_cap: int, max_chars: int, judge_band_low: float = 0.0,
    vetoed: pl.DataFrame | None = None, semantic: Semantic | None = None,
    by_subject: frozenset[frozenset[str]] = frozenset(), by_context: frozenset[frozenset[str]] = frozenset(),
    trusted: bool = False,
) -> PairDecisions:
    """Decide this cycle's pairs (PAIR_SCHEMA rows indexing `nodes`, the step's node columns
    with `created_at`): see the module docstring. `judge_cap` 0: no judge (the LLM is off).
    `by_subject`: pairs that share a subject (store/subject_index.py; {id, id} each), which the
    judge is asked about whatever their cosine. `by_context`: pairs of a memory that names no
    subject and the memory written just before it (core/context_updates.py), read together
    first, and judged whatever their cosine. `trusted`: the judge's "update" is checked as
    core/trusted_updates.py checks it (CURATOR_JUDGE_TRUSTED), which orders the budget."""
    pairs = pairs.cast(dict(PAIR_SCHEMA))
    if vetoed is not None and vetoed.height:
        pairs = with_pair_ids(pairs, nodes["id"]).join(vetoed, on=["low_id", "high_id"], how="anti").select(pairs.columns)
    ordered = _ordered(nodes, pairs)
    tally = _Tally()
    checks = [_check(pair, semantic, tally, in_context=frozenset((pair["a"]["id"], pair["b"]["id"])) in by_context)
              for pair in ordered]
    superseded = _supersessions([(pair, check) for pair, check in zip(ordered, checks)
                                 if check is not None and check.verdict == UPDATE], supersede_cap, max_chars, tally)
    in_supersession = {row[side] for row in superseded for side in ("older_id", "newer_id")}
    taken = set(in_supersession)  # decided this cycle
    reserved: set[str] = set()  # in a pair above the merge threshold: merged, not judged
    judged_anyway = by_subject | by_context  # whatever their cosine
    announces = _announcing(judge_cap)
    candidates, merge_pairs = [], []  # candidates: (priority, order in `ordered`, older, newer, similarity)
    for number, (pair, check) in enumerate(zip(ordered, checks)):
        a, b, similarity = pair["a"], pair["b"], pair["similarity"]
        if check is _APART or (check is not None and check.verdict == UPDATE):
            continue  # decided above
        # The words found a changed value but cannot be sure (partial, look-alike), or the newer
        # memory says something changed without the words seeing of what: the judge's question
        # whatever the cosine, as are pairs that share a subject or are read in context.
        flagged = check is not None and check.verdict in (PARTIAL, LOOK_ALIKE)
        found = frozenset((a["id"], b["id"])) in judged_anyway
        announcing = check is not None and announces(pair)
        # Above the merge threshold only the pairs the words are unsure of: never merged, only
        # the judge can tell an update from two things alike ("scored 6/7" / "scored 7/7" on one
        # quiz); the others are merged by the merge rules.
        judge_it = judge_cap > 0 and (flagged or similarity <= merge_threshold and (
            similarity > judge_band_low or found or announcing))
        if check is not None and check.verdict == PARTIAL and not judge_it:
            continue  # counted when checked; never merged
        acts = similarity > merge_threshold or judge_it
        if a["id"] in taken or b["id"] in taken:
            if acts and not {a["id"], b["id"]} & _superseded_ids(superseded):
                tally.left_over += 1  # it waits for the next cycle, which searches it again
            continue
        if check is not None and check.verdict == LOOK_ALIKE and not judge_it:
            tally.look_alikes += 1  # never merged; in the band the judge's verdict is checked (apply_verdicts)
            continue
        if similarity > merge_threshold and not judge_it:
            merge_pairs.append(pair)  # the merge rules (pinned, cap, disjoint) decide below
            reserved |= {a["id"], b["id"]}
            continue
        order = _older_newer(a, b)
        if order is not None and judge_it:
            # The judge's budget goes first where an update is likeliest: pairs whose words found
            # a changed value, then pairs that share a subject or are read in context, then the
            # rest (the band, newer memories that say something changed); within each, those
            # sharing more subject keys first, then the most similar.
            priority = 0 if flagged else 1 if found else 2
            candidates.append((priority, number, *order, similarity))
    # A memory takes part in one pair a cycle: the one that shares the most of what it is about
    # (core/subjects.py), then its most similar. "Gerald Ford plays the position of center" is
    # more alike "Babe Ruth plays the position of center" than "Gerald Ford plays the position of
    # starting pitcher", and would be asked about every look-alike before its own update. When
    # more pairs are left than the judge may be asked about, the likeliest updates go first.
    shared = _shared_subjects()
    candidates.sort(key=lambda c: (-shared(c[2], c[3]), c[1]))
    free = []
    for candidate in candidates:
        ids = {candidate[2]["id"], candidate[3]["id"]}
        if ids & (taken | reserved):
            tally.left_over += 1  # it waits for the next cycle, which searches it again
        else:
            free.append(candidate)
            taken |= ids
    ranked = sorted(free, key=lambda c: (c[0], -shared(c[2], c[3]), c[1]))
    if len(ranked) > judge_cap:
        ranked = _bearable_first(ranked, trusted)
    chosen, waiting = ranked[:judge_cap], ranked[judge_cap:]
    tally.left_over += len(waiting)
    taken -= {c[side]["id"] for c in waiting for side in (2, 3)}  # undecided: free for a merge
    to_judge = [{"older_id": older["id"], "newer_id": newer["id"], "similarity": similarity,
                 "older_text": older["pointer_summary"], "newer_text": newer["pointer_summary"],
                 "older_created_at": older["created_at"], "newer_created_at": newer["created_at"]}
                for _priority, _number, older, newer, similarity in chosen]
    merges = _merges(nodes, merge_pairs, taken, cap=merge_cap, max_chars=max_chars, semantic=semantic)
    return PairDecisions(
        supersessions=pl.DataFrame(superseded, schema=SUPERSESSION_SCHEMA),
        merges=merges,
        to_judge=pl.DataFrame(to_judge, schema=JUDGE_SCHEMA),
        partial_updates=tally.partial, updates_held=tally.held, look_alikes=tally.look_alikes,
        left_over=tally.left_over + merges.left_over, speakers_apart=tally.speakers_apart,
        too_long=tally.too_long,
    )


def _bearable_first(ranked: list, trusted: bool = False) -> list:
    """When more pairs are free than the judge may be asked about, those whose "update" the
    texts would bear out (core/judged_updates.py, the check apply_verdicts makes) go first, each
    group in its order: an "update" of any other pair is refused whatever the model says, so
    asking about it first would spend the budget on verdicts that change no memory while
    updates wait a cycle. Read only when the budget is short, and by the words alone (no
    embedder call for pairs that may not be asked about): the check costs a few milliseconds a
    pair."""
    check = trusted_update if trusted else judged_update

    def bearable(candidate) -> bool:
        older, newer = candidate[2], candidate[3]
        return check(older["pointer_summary"] or "", newer["pointer_summary"] or "").taken
    return sorted(ranked, key=lambda c: not bearable(c))  # stable: each group keeps its order


def _shared_subjects():
    """How many subject keys two memories share (core/subjects.subject_keys: names, possessive
    owners, head nouns), each text read once."""
    keys: dict[str, frozenset[str]] = {}

    def shared(a: dict, b: dict) -> int:
        for node in (a, b):
            if node["id"] not in keys:
                keys[node["id"]] = subject_keys(node["pointer_summary"] or "")
        return len(keys[a["id"]] & keys[b["id"]])
    return shared


def _announcing(judge_cap: int):
    """Whether a pair's newer memory says something changed (change_cues.says_it_changed), each
    text read once; never asked when there is no judge."""
    said: dict[str, bool] = {}

    def announces(pair: dict) -> bool:
        order = _older_newer(pair["a"], pair["b"]) if judge_cap > 0 else None
        if order is None:
            return False
        newer = order[1]
        if newer["id"] not in said:
            said[newer["id"]] = says_it_changed(newer["pointer_summary"] or "")
        return said[newer["id"]]
    return announces


@dataclass
class _Tally:
    partial: int = 0
    held: int = 0
    look_alikes: int = 0
    left_over: int = 0
    speakers_apart: int = 0
    too_long: int = 0


# A pair of two speakers' turns: nothing is decided for it.
_APART = VersionCheck(NONE)


def _check(pair: dict, semantic: Semantic | None, tally: _Tally, *, in_context: bool = False) -> VersionCheck | None:
    """What the words say of a pair: None when its dates do not say which is current (only a
    merge or the judge may act on it), _APART for two speakers' turns. `in_context`: the newer
    memory names no subject and the older one was written just before it."""
    a, b = pair["a"], pair["b"]
    if not same_speaker(a["pointer_summary"], b["pointer_summary"]):
        tally.speakers_apart += 1
        return _APART
    order = _older_newer(a, b)
    if order is None:
        return None
    older, newer = order[0]["pointer_summary"] or "", order[1]["pointer_summary"] or ""
    check = (context_update(older, newer) if in_context else None) or compare_versions(older, newer, semantic)
    tally.partial += check.verdict == PARTIAL
    tally.too_long += check.too_long
    return check


def _supersessions(updates: list[tuple[dict, VersionCheck]], cap: int, max_chars: int,
                   tally: _Tally) -> list[dict]:
    """The supersessions among the update pairs (most similar first): each older memory is
    superseded by its immediate successor, the earliest newer memory that updates it, so that
    A -> B -> C leaves C current with A superseded by B and B by C, and a value that comes back
    (A -> B -> A') supersedes B. A pinned memory is never superseded. A newer memory that must
    carry older clauses (core/carry.py) carries one older memory's a cycle, is not itself
    superseded in that cycle, and must not be pinned nor grow past `max_chars`: else the pair is
    partial. Counts the pinned held, the partial and the capped in `tally`."""
    successors: dict[str, tuple[dict, dict, float, VersionCheck]] = {}
    for pair, check in updates:
        older, newer = _older_newer(pair["a"], pair["b"])
        known = successors.get(older["id"])
        if known is None or (newer["created_at"], newer["id"]) < (known[1]["created_at"], known[1]["id"]):
            successors[older["id"]] = (older, newer, pair["similarity"], check)
    rows, carrying = [], set()
    for older, newer, similarity, check in successors.values():
        if check.carried:
            if newer["pinned"] is not False or len(check.carried_text or "") > max_chars:
                tally.partial += 1  # the newer memory cannot take the clauses over: both stay
                continue
            if newer["id"] in carrying:
                tally.left_over += 1  # it carries another older memory's clauses this cycle
                continue
            carrying.add(newer["id"])
        if older["pinned"] is not False:
            tally.held += 1
        elif len(rows) < cap:
            rows.append(supersession_row(older, newer, similarity, OFFLINE, [u.record() for u in check.updates], check))
        else:
            tally.left_over += 1
    # A memory that takes clauses over this cycle is superseded in the next (with them).
    kept = [row for row in rows if row["older_id"] not in carrying]
    tally.left_over += len(rows) - len(kept)
    return kept


def _superseded_ids(rows: list[dict]) -> set[str]:
    return {row["older_id"] for row in rows}


def _merges(nodes: pl.DataFrame, pairs: list[dict], taken: set[str], *, cap: int, max_chars: int,
            semantic: Semantic | None) -> ConsolidationPass:
    """The merges among the pairs above the threshold whose nodes no earlier decision took."""
    free = [p for p in pairs if p["a"]["id"] not in taken and p["b"]["id"] not in taken]
    row_of = {node_id: row for row, node_id in enumerate(nodes["id"].to_list())}
    frame = pl.DataFrame({"i": [row_of[p["a"]["id"]] for p in free], "j": [row_of[p["b"]["id"]] for p in free],
                          "similarity": [p["similarity"] for p in free]}, schema=PAIR_SCHEMA)
    return select_merges(nodes, frame, cap=cap, max_chars=max_chars, semantic=semantic)


_CLOCK_MARKS = frozenset({"am", "pm"})


def _renamed_with_values(older: str, newer: str) -> bool:
    """Whether a name or code was replaced together with a fact of another kind ("The Tessellate
    iOS app requires iOS 16 or later." / "... Android app requires Android 10 or later."):
    another thing described alike, not a new value (supersession's rule for its own updates)."""
    def kinds(missing):  # a name may come back as a code: "iOS" is an identifier, "Android" a name
        return {"naming" if kind in ("name", "identifier") else kind for kind, value in missing
                if value.lower().replace(".", "") not in _CLOCK_MARKS}  # "3 PM" / "11 AM": a time

    replaced = kinds(missing_facts([older], newer)) & kinds(missing_facts([newer], older))
    return len(replaced) > 1 and "naming" in replaced


@dataclass(frozen=True)
class Verdicts:
    """What the judge's verdicts come to: more merges and supersessions, and what was refused."""

    supersessions: pl.DataFrame  # SUPERSESSION_SCHEMA, method JUDGE
    merges: pl.DataFrame  # CONSOLIDATION_SCHEMA
    refused_updates: int  # "update" verdicts the texts give no reason for: linked, not superseded
    refused_same: int = 0  # "same" verdicts for texts that name different things: not merged


def apply_verdicts(nodes: pl.DataFrame, judged: pl.DataFrame, verdicts: dict[tuple[str, str], str], *,
                   merge_cap: int, supersede_cap: int, max_chars: int,
                   semantic: Semantic | None = None, trusted: bool = False) -> Verdicts:
    """Turn the judge's verdicts ((older_id, newer_id) -> verdict) into decisions.

    A verdict is a proposal the texts must bear out; the model never decides alone:
    - "update" is taken only when the texts bear it out (core/judged_updates.py: a clause of the
      older memory gets a new value of one thing in the newer one, "The Seville office closes at
      18:00." being no older "The Bilbao office closes at 19:00.", nor a read timeout an older
      connect timeout; and every other older clause is said by the newer memory or carried into
      it, as an offline update carries), no name or code was replaced together with another kind
      of fact (the iOS app needing iOS 16, the Android app Android 10), and the older is not
      pinned; a newer memory that must carry clauses is not pinned and stays within `max_chars`;
      which one is current comes from `created_at`. With `trusted` (CURATOR_JUDGE_TRUSTED) the
      judge reads which attribute changed, and the words check that a value gave way to one of
      its kind with nothing lost (core/trusted_updates.py);
    - "same" merges by the merge rules (the pinned rule, the cap), unless each text names a fact
      (a number, date, name, identifier, address) the other lacks: "Summit Roofing wants
      invoices in PDF." is not "Summit Plumbing ...", nor a badge number 4471 a desk number 212;
      and never for a pair the words read as an update or a partial one.
    """
    pinned = dict(zip(nodes["id"].to_list(), nodes["pinned"].to_list()))
    superseded, same, refused, refused_same = [], [], 0, 0
    for row in judged.iter_rows(named=True):
        verdict = verdicts.get((row["older_id"], row["newer_id"]))
        if verdict not in (UPDATE_VERDICT, SAME):
            continue
        older_text, newer_text = row["older_text"] or "", row["newer_text"] or ""
        if verdict == UPDATE_VERDICT:
            taken = (trusted_update if trusted else judged_update)(older_text, newer_text, semantic)
            carries = taken.carried_text is not None
            if (taken.taken and not _renamed_with_values(older_text, newer_text)
                    and pinned.get(row["older_id"]) is False and len(superseded) < supersede_cap
                    and not (carries and (pinned.get(row["newer_id"]) is not False
                                          or len(taken.carried_text) > max_chars))):
                superseded.append(supersession_row(
                    {"id": row["older_id"]}, {"id": row["newer_id"], "created_at": row["newer_created_at"]},
                    row["similarity"], JUDGE, list(taken.changes),
                    VersionCheck(UPDATE, carried=taken.carried, carried_text=taken.carried_text)))
            else:
                refused += 1
        elif (missing_facts([older_text], newer_text) and missing_facts([newer_text], older_text)) \
                or compare_versions(older_text, newer_text, semantic).verdict in (UPDATE, PARTIAL):
            refused_same += 1  # two things, or a new value: one node would say two values
        else:
            same.append(row)
    row_of = {node_id: n for n, node_id in enumerate(nodes["id"].to_list())}
    frame = pl.DataFrame({"i": [row_of[r["older_id"]] for r in same], "j": [row_of[r["newer_id"]] for r in same],
                          "similarity": [r["similarity"] for r in same]}, schema=PAIR_SCHEMA)
    merges = select_merges(nodes, frame, cap=merge_cap, max_chars=max_chars, semantic=semantic).plan if same \
        else pl.DataFrame(schema=CONSOLIDATION_SCHEMA)
    return Verdicts(pl.DataFrame(superseded, schema=SUPERSESSION_SCHEMA), merges, refused, refused_same)

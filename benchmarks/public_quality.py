"""Is memory written by others current after curation, with nothing lost? BEAM, LoCoMo, MQuAKE.

    python benchmarks/public_quality.py --data DATA                     # development parts, offline
    python benchmarks/public_quality.py --data DATA --split heldout     # the held-out parts
    python benchmarks/public_quality.py --data DATA --mode oracle       # a judge answering from the labels
    python benchmarks/public_quality.py --data DATA --mode always-update  # an adversarial judge
    python benchmarks/public_quality.py --data DATA --mode oracle --judge-trusted  # CURATOR_JUDGE_TRUSTED
    python benchmarks/public_quality.py --data DATA --dataset beam -v   # one dataset, every supersession listed
    python benchmarks/public_quality.py --data DATA --dataset mquake    # a knowledge-update stream
    python benchmarks/public_quality.py --data DATA --dataset beam500k  # BEAM's 35 longer chats (not in "all")
    python benchmarks/public_quality.py --data DATA --dataset beam1m    # 35 more, other topics (not in "all")

DATA holds the public datasets (benchmarks/public_data.py says how to get them; nothing of
them is in this repository). Each part's memories go into a fresh embedded store, one namespace
per conversation, embedded with the chosen embedder; the real `curate_namespace` job runs on
each namespace until a cycle merges nothing, supersedes nothing and leaves no pair for the next
cycle (the judge's cap per cycle reached, a node already taken), at most 6 cycles (`--cycles`).
Prints, per part:

- **updates superseded**: BEAM's knowledge updates (and MQuAKE's edits) whose older fact ends
  superseded, current where the newer one is (through a chain of supersessions and merges);
- **wrong supersessions**: a supersession of or by a statement the user contradicts (both must
  stay current), of a fact no newer one replaces, of the newest value of an update, or across
  two speakers; and, listed apart,
  the **other supersessions** the labels say nothing of (read them: `-v`);
- **merges**, the merged nodes that **say a fact twice**, and those that **state one thing with
  two values**;
- **clauses hidden**: clauses of a superseded memory that no current memory says and that its
  successor did not update (must be 0), and **clauses lost**: clauses of the memories as written
  that no active memory says (must be 0);
- **the recall probe** before and after curation: BEAM and MQuAKE, the newest value top-1 of
  `current_memory` for the update's question, and an outdated value among the top 3; LoCoMo,
  recall@10 of the turns that answer each question, and the questions that went from a hit to a
  miss;
- **cycles**: how many ran, the pairs the judge was asked about, and the pairs still left for a
  later cycle after the last (work a scheduled product would go on doing);
- **time**: the first cycle of each namespace, in all, and the cycles after it. With `-v`, each
  missed update says what the judge made of it (never judged; judged "update" and refused by
  the texts; ...).

Modes: `offline` (the LLM path off); `oracle` (a stub OpenAI-compatible server of ours on
127.0.0.1 that judges a labelled update pair (or two links of one chain) "update", a pair with a contradicted statement
"distinct", anything else "related", and merges faithfully; it knows a labelled memory by its words,
also once the curator has carried older words into it); `always-update` (the same stub as an
adversarial judge that calls every pair an update: what gets superseded is what the words let
through, core/judged_updates.py; on the knowledge-update stream every supersession no label
names is wrong). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import public_data
import scale_data
from curation_quality import MAX_CYCLES, RUN_CONFIG, _embedder, run_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the stub LLM lives with the tests

TENANT = "public"


def _vector_literal(vector) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def _seed(conn, part: public_data.Part, embedder) -> dict[str, str]:
    """Every memory of the part, embedded; returns memory key -> node id."""
    from curation_pipeline.store.nodes_io import insert_nodes

    vectors = embedder.embed([m.text for m in part.memories])
    ids, rows = {}, []
    for memory, vector in zip(part.memories, vectors):
        node_id = str(uuid.uuid4())
        ids[memory.key] = node_id
        rows.append({"id": node_id, "tenant_id": TENANT, "namespace": memory.namespace, "memory_type": "episodic",
                     "pointer_summary": memory.text, "embedding": vector, "embedding_model": embedder.name,
                     "base_utility": 0.5, "heat": 0.0, "pinned": False, "recall_count": 1,
                     "last_recalled_at": memory.created_at, "epoch": 0, "confidence": "default",
                     "archived_at": None, "merged_into": None, "created_at": memory.created_at,
                     "updated_at": memory.created_at})
    with conn.transaction():
        insert_nodes(conn, rows)
    return ids


def _words(text: str) -> list[str]:
    return [word.strip(".,;:!?") for word in text.split()]


def _as_written(labelled: set[str], written: set[str]):
    """The labelled text a memory was written with, when the curator has since carried older
    words into it (core/carry.py: "... optimized to 384MB. Deployed Pegasus ..."): the labels
    are of the memory, not of its first wording. A text nobody wrote is read as the longest
    labelled one whose every word it still has, in order."""
    known = sorted(labelled, key=len, reverse=True)
    words = {text: _words(text) for text in known}

    def within(inner: list[str], outer: list[str]) -> bool:
        rest = iter(outer)
        return all(word in rest for word in inner)  # a subsequence: `in` consumes the iterator

    @functools.lru_cache(maxsize=65536)
    def as_written(text: str) -> str:
        if text in written:
            return text
        outer = _words(text)
        return next((known_text for known_text in known
                     if len(words[known_text]) < len(outer) and within(words[known_text], outer)), text)

    return as_written


@contextlib.contextmanager
def _llm(mode: str, parts: list[public_data.Part]):
    if mode == "offline":
        yield {"CURATOR_LLM_ENABLED": "false"}
        return
    from curation_pipeline.core.prompts import VERDICT_FIELD
    from curation_pipeline_tests.support.llm_stub import StubLLMServer, answer, faithful, memory_texts, purpose

    texts = {m.key: m.text for part in parts for m in part.memories}
    updates = {frozenset((texts[a], texts[b])) for part in parts for a, b in [*part.updates, *part.chained]}
    contradictions = {texts[key] for part in parts for key in part.never_superseded}
    as_written = _as_written({text for pair in updates for text in pair} | contradictions, set(texts.values()))

    def respond(body: dict, _number: int):
        if purpose(body) != "judge":
            return faithful(body)
        pair = frozenset(as_written(text) for text in memory_texts(body))
        if mode == "always-update":
            return answer(VERDICT_FIELD, "update", output_tokens=4)  # adversarial: the words must refuse
        verdict = "update" if pair in updates else "distinct" if pair & contradictions else "related"
        return answer(VERDICT_FIELD, verdict, output_tokens=4)

    stub = StubLLMServer(respond)
    try:
        yield {"CURATOR_LLM_ENABLED": "true", "CURATOR_LLM_API": "chat", "CURATOR_LLM_MAX_CALLS": "100000",
               "CURATOR_LLM_MAX_TOKENS": "500000000", "CURATOR_LLM_CACHE": "false", "CURATOR_LLM_MAX_RETRIES": "1",
               "CURATOR_LLM_BASE_URL": stub.url, "CURATOR_LLM_MODEL": mode, "CURATOR_LLM_CONCURRENCY": "8"}
    finally:
        stub.close()


def _run_cycles(url: str, namespace: str, max_cycles: int,
                config: dict = RUN_CONFIG) -> tuple[list[dict], list[float], float]:
    """Cycles of the real job until one merges nothing, supersedes nothing and leaves no pair
    over (at most `max_cycles`): each cycle's step counts and time; then the time of one more
    cycle, with nothing written since the last."""
    import dagster as dg

    from curation_pipeline.core.partition_keys import partition_key
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.job import JOB_NAME
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
    from curation_pipeline.store.database import open_connection

    defs = load_defs()
    key = partition_key(TENANT, namespace)
    cycles, times = [], []
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, [key])

        def cycle():
            started = time.perf_counter()
            result = defs.resolve_job_def(JOB_NAME).execute_in_process(
                partition_key=key, instance=instance, run_config={**config, **scale_data.QUIET},
                raise_on_error=False)
            return result, time.perf_counter() - started

        for _ in range(max_cycles):
            result, took = cycle()
            times.append(took)
            with open_connection(url) as conn:
                [metadata] = conn.execute("SELECT metadata FROM activity_log WHERE run_id = %s AND action = 'curation_cycle'",
                                          (result.run_id,)).fetchone()
            if not result.success:
                raise SystemExit(f"the cycle of {namespace} failed: {metadata.get('errors')}")
            cycles.append(metadata["steps"])
            step2 = metadata["steps"]["consolidate_duplicates"]
            # A scheduled product keeps cycling: pairs left for the next cycle (the judge's cap
            # reached, a node taken) are work it will still do.
            if not (step2.get("pairs_merged") or step2.get("superseded") or step2.get("pairs_left_over")):
                break
        _, idle = cycle()
    return cycles, times, idle


# ----------------------------------------------------------------------------- what came of it


def _nodes(conn, namespaces: list[str]) -> dict[str, dict]:
    rows = conn.execute(
        "SELECT id::text, merged_into::text, superseded_by::text, archived_at IS NOT NULL, pointer_summary, namespace"
        " FROM memory_nodes WHERE tenant_id = %s AND namespace = ANY(%s)", (TENANT, namespaces)).fetchall()
    return {r[0]: {"merged_into": r[1], "superseded_by": r[2], "archived": r[3], "text": r[4], "namespace": r[5]}
            for r in rows}


def _keeper(nodes: dict, node_id: str) -> str:
    seen = set()
    while nodes[node_id]["merged_into"] is not None and node_id not in seen:
        seen.add(node_id)
        node_id = nodes[node_id]["merged_into"]
    return node_id


def _current_end(nodes: dict, node_id: str) -> str:
    """Where a memory's chain of merges and supersessions ends."""
    seen = set()
    node_id = _keeper(nodes, node_id)
    while nodes.get(node_id, {}).get("superseded_by") and node_id not in seen:
        seen.add(node_id)
        node_id = _keeper(nodes, nodes[node_id]["superseded_by"])
    return node_id


def _top(conn, namespace: str, vector, k: int) -> list[str]:
    return [row[0] for row in conn.execute(
        "SELECT id::text FROM current_memory WHERE tenant_id = %s AND namespace = %s AND embedding IS NOT NULL"
        " ORDER BY embedding <=> %s::vector LIMIT %s", (TENANT, namespace, _vector_literal(vector), k)).fetchall()]


def probe(conn, part: public_data.Part, ids: dict, nodes: dict, embedder) -> dict:
    """The recall probe on the store as it is: BEAM's newest-on-top and outdated-in-top-3;
    LoCoMo's recall@10 of the evidence, and which questions were hit."""
    vectors = embedder.embed([p.question for p in part.probes])
    newest = outdated = 0
    hits, recall = set(), []
    for n, (question, vector) in enumerate(zip(part.probes, vectors)):
        top = _top(conn, question.namespace, vector, 10)
        if question.newest is not None:
            newest += bool(top) and top[0] == _keeper(nodes, ids[question.newest])
            outdated += _keeper(nodes, ids[question.outdated]) in top[:3] and \
                _keeper(nodes, ids[question.outdated]) != _keeper(nodes, ids[question.newest])
        if question.evidence:
            found = sum(_keeper(nodes, ids[e]) in top for e in question.evidence)
            recall.append(found / len(question.evidence))
            if found:
                hits.add(n)
    return {"newest": newest, "outdated": outdated, "updates": sum(p.newest is not None for p in part.probes),
            "recall@10": 100 * sum(recall) / len(recall) if recall else None, "hits": hits}


def _supersessions(nodes: dict) -> list[tuple[str, str]]:
    return [(node_id, row["superseded_by"]) for node_id, row in nodes.items() if row["superseded_by"]]


def _speaker(text: str) -> str | None:
    from curation_pipeline.core.speakers import speaker_of
    return speaker_of(text)


@functools.cache
def _words(text: str) -> frozenset[str]:
    from curation_pipeline.core.sentence_tokens import content_keys, tokenize
    return content_keys(tokenize(text))


def _sharing_words(texts: list[str], text: str) -> list[str]:
    return [other for other in texts if _words(text) & _words(other)]


def report(conn, part: public_data.Part, ids: dict, before: dict, cycles: dict, times: dict, embedder,
           verbose: bool, *, idle: float) -> dict:
    from curation_pipeline.core.coverage import KeptText, clauses_of, restated_within, semantic_for, uncovered
    from curation_pipeline.core.supersession import says_two_values

    semantic = semantic_for(embedder.name, embedder.embed)
    namespaces = sorted({m.namespace for m in part.memories})
    nodes = _nodes(conn, namespaces)
    key_of = {node_id: key for key, node_id in ids.items()}
    after = probe(conn, part, ids, nodes, embedder)

    # Superseded, and current where the newer value is (its successor's, in a chain A -> B -> C).
    superseded = sum(_current_end(nodes, ids[older]) == _current_end(nodes, ids[newer])
                     and nodes[ids[older]]["superseded_by"] is not None for older, newer in part.updates)
    newest_keys = {newer for _, newer in part.updates} - {older for older, _ in part.updates}
    labelled = {(ids[o], ids[n]) for o, n in [*part.updates, *part.chained]}
    wrong, other = [], []
    for older, successor in _supersessions(nodes):
        older_key, successor_key = key_of.get(older), key_of.get(successor)
        why = None
        if older_key in part.never_superseded or successor_key in part.never_superseded:
            why = "a contradicted statement"
        elif older_key in part.stay_current:
            why = "a fact no newer one replaces"
        elif older_key in newest_keys:
            why = "the newest value of an update"
        elif _speaker(nodes[older]["text"]) != _speaker(nodes[successor]["text"]):
            why = "across speakers"
        if why:
            wrong.append((why, older, successor))
        elif (older, successor) not in labelled:
            other.append((older, successor))

    keepers = {_keeper(nodes, n) for n, row in nodes.items() if row["merged_into"]}
    twice = [k for k in keepers if restated_within(nodes[k]["text"], semantic)]
    two_values = [k for k in keepers if says_two_values(nodes[k]["text"])]

    # A memory is said only by nodes of its own namespace that share a word with it (coverage,
    # lexical or semantic, needs shared words): each is checked against those alone. All of a
    # part at once costs its size squared (half an hour for BEAM's 500K chats).
    hidden, lost = [], []
    for namespace in namespaces:
        mine = {n: row for n, row in nodes.items() if row["namespace"] == namespace}
        current = [row["text"] for row in mine.values() if not row["archived"] and not row["superseded_by"]]
        active = [row["text"] for row in mine.values() if not row["archived"]]
        for older, _successor in _supersessions(mine):
            updated = {change.get("old") for change in _changes(conn, older)}
            said_now = KeptText.of(_sharing_words(current, mine[older]["text"]), semantic)
            for covered in said_now.cover_all(clauses_of([mine[older]["text"]])):
                if not covered.covered and covered.clause.keys and not any(
                        old and covered.clause.text in old for old in updated):
                    hidden.append((older, covered.clause.text))
        for memory in part.memories:
            node = mine.get(ids[memory.key])
            if memory.namespace != namespace or (node and not node["archived"] and node["text"] == memory.text):
                continue  # a memory whose own node is active with its text unchanged says itself
            said = KeptText.of(_sharing_words(active, memory.text), semantic)
            lost += [c for c in uncovered([memory.text], said) if c.clause.keys]

    first = sum(times[ns][0] for ns in namespaces)
    later = [sum(times[ns][k] for ns in namespaces if len(times[ns]) > k) for k in range(1, max(map(len, times.values())))]
    print(f"\n## {part.name}: {len(part.memories)} memories in {len(namespaces)} namespaces")
    if part.updates:
        print(f"updates superseded: {superseded} of {len(part.updates)} ({superseded / len(part.updates):.0%})")
    print(f"wrong supersessions: {len(wrong)}" + "".join(f"; {n} {why}" for why, n in Counter(w[0] for w in wrong).items()))
    print(f"other supersessions (no label says): {len(other)}")
    print(f"merges: {sum(c['consolidate_duplicates'].get('pairs_merged', 0) for ns in namespaces for c in cycles[ns])}; "
          f"merged nodes saying a fact twice: {len(twice)} of {len(keepers)}; stating one thing with two values: {len(two_values)}")
    print(f"clauses hidden by supersessions: {len(hidden)}; clauses written that no active memory says: {len(lost)}")
    if part.updates:
        print(f"recall probe, newest value top-1 of current_memory: {before['newest']} -> {after['newest']} of {after['updates']}"
              f" ({before['newest'] / after['updates']:.0%} -> {after['newest'] / after['updates']:.0%})")
        print(f"recall probe, an outdated value in the top 3: {before['outdated']} -> {after['outdated']} of {after['updates']}"
              f" ({before['outdated'] / after['updates']:.0%} -> {after['outdated'] / after['updates']:.0%})")
    if after["recall@10"] is not None:
        print(f"recall@10 of the evidence: {before['recall@10']:.2f} -> {after['recall@10']:.2f}; questions from hit to miss:"
              f" {len(before['hits'] - after['hits'])}, from miss to hit: {len(after['hits'] - before['hits'])}")
    judged = sum(c["consolidate_duplicates"].get("judged", 0) or 0 for ns in namespaces for c in cycles[ns])
    waiting = sum(cycles[ns][-1]["consolidate_duplicates"].get("pairs_left_over", 0) or 0 for ns in namespaces)
    print(f"cycles: {max(len(cycles[ns]) for ns in namespaces)} at most; pairs judged: {judged};"
          f" pairs still left for a later cycle after the last: {waiting}")
    print(f"time: first cycle {first:.0f} s in all; later cycles " + ", ".join(f"{t:.0f} s" for t in later if t)
          + f"; a cycle with nothing written since the last: {idle:.0f} s")
    if verbose:
        for why, older, successor in wrong:
            print(f"  WRONG ({why}): {nodes[older]['text']!r}\n      superseded by {nodes[successor]['text']!r}")
        for older, successor in other:
            print(f"  other: {nodes[older]['text']!r}\n      superseded by {nodes[successor]['text']!r}")
        for older, newer in part.updates:
            if not (_current_end(nodes, ids[older]) == _current_end(nodes, ids[newer]) and nodes[ids[older]]["superseded_by"]):
                print(f"  missed ({_judged(conn, ids[older], ids[newer])}): {nodes[ids[older]]['text']!r}\n"
                      f"      -> {nodes[ids[newer]]['text']!r}")
        for older, clause in hidden[:20]:
            print(f"  hidden: {clause!r} of {nodes[older]['text']!r}")
        for node_id in twice[:10] + two_values[:10]:
            print(f"  merged: {nodes[node_id]['text']!r}")
    return {"superseded": superseded, "wrong": len(wrong), "other": len(other), "hidden": len(hidden), "lost": len(lost)}


def _judged(conn, older: str, newer: str) -> str:
    """What the judge made of a pair: its verdicts and their outcomes, or that it never saw it."""
    rows = conn.execute("SELECT verdict, outcome FROM pair_judgements WHERE older_id = ANY(%(p)s::uuid[]) AND newer_id = ANY(%(p)s::uuid[])"
                        " ORDER BY created_at", {"p": [older, newer]}).fetchall()
    return "; ".join(f"judged {verdict}, {outcome}" for verdict, outcome in rows) or "never judged"


def _changes(conn, node_id: str) -> list[dict]:
    row = conn.execute("SELECT reason->'changes' FROM node_revisions WHERE node_id = %s AND reason ? 'superseded_by'"
                       " ORDER BY id DESC LIMIT 1", (node_id,)).fetchone()
    return (row[0] or []) if row else []


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the folder holding BEAM/, locomo/ and MQuAKE/")
    parser.add_argument("--split", choices=(*public_data.SPLITS, "both"), default="dev")
    parser.add_argument("--dataset", choices=("beam", "beam500k", "beam1m", "locomo", "mquake", "all"), default="all")
    parser.add_argument("--mode", choices=("offline", "oracle", "always-update"), default="offline")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2", metavar="lexical|MODEL")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations of each part")
    parser.add_argument("--cycles", type=int, default=MAX_CYCLES,
                        help="cycles per namespace at most (it stops earlier once a cycle changes nothing and leaves nothing over)")
    parser.add_argument("--judge-trusted", action="store_true",
                        help="CURATOR_JUDGE_TRUSTED: the judge reads which attribute changed (core/trusted_updates.py)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    splits = list(public_data.SPLITS) if args.split == "both" else [args.split]
    datasets = ["beam", "locomo", "mquake"] if args.dataset == "all" else [args.dataset]
    parts = public_data.parts(args.data, splits, datasets)
    if args.conversations:
        for part in parts:
            keep = sorted({m.namespace for m in part.memories}, key=lambda ns: [m.namespace for m in part.memories].index(ns))
            keep = set(keep[:args.conversations])
            part.memories = [m for m in part.memories if m.namespace in keep]
            part.probes = [p for p in part.probes if p.namespace in keep]
            part.updates = [(a, b) for a, b in part.updates if a.split("/")[0] in keep]

    embedder, embedder_env = _embedder(args.embedder)
    url = scale_data.fresh_store()
    os.environ.update(embedder_env)
    from curation_pipeline.store.database import open_connection

    trusted = ", judge trusted" if args.judge_trusted else ""
    print(f"# public data: {', '.join(p.name for p in parts)}; mode {args.mode}{trusted}, embedder {embedder.name}")
    print("# targets, held-out: offline >= 60% of updates superseded and 0 wrong; oracle >= 90%;"
          " 0 clauses hidden or lost; 0 merged nodes with two values of one thing")
    with _llm(args.mode, parts) as llm_env:
        os.environ.update(llm_env)
        for part in parts:
            with open_connection(url) as conn:
                ids = _seed(conn, part, embedder)
                before = probe(conn, part, ids, _nodes(conn, sorted({m.namespace for m in part.memories})), embedder)
            cycles, times, idle = {}, {}, {}
            for namespace in sorted({m.namespace for m in part.memories}):
                cycles[namespace], times[namespace], idle[namespace] = _run_cycles(
                    url, namespace, args.cycles, run_config(judge_trusted=args.judge_trusted))
            with open_connection(url) as conn:
                report(conn, part, ids, before, cycles, times, embedder, args.verbose, idle=sum(idle.values()))


if __name__ == "__main__":
    main()

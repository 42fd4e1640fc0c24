"""Does a curation cycle leave memory cleaner and current? Labelled pairs, through the real job.

    python benchmarks/curation_quality.py                        # offline (no LLM), the default embedder (onnx-minilm)
    python benchmarks/curation_quality.py --mode oracle          # a judge and merger answering from the labels
    python benchmarks/curation_quality.py --mode llama           # the real llama-server (SmolLM2-135M)
    python benchmarks/curation_quality.py --mode always-update   # an adversarial judge: every pair an update
    python benchmarks/curation_quality.py --mode oracle --judge-trusted  # CURATOR_JUDGE_TRUSTED
    python benchmarks/curation_quality.py --embedder lexical     # the n-gram embedder: words only
    python benchmarks/curation_quality.py --embedder all-MiniLM-L6-v2  # sentence-transformers (torch)
    python benchmarks/curation_quality.py --calibrate            # how the semantic threshold was chosen
    python benchmarks/curation_quality.py --mode oracle -v       # ... and every answer the guard refused, whole

Reads labelled pairs (default benchmarks/curation_pairs.jsonl: one JSON object a line, `id`,
`kind` restatement | update | related | distinct, `shape`, `older` and `newer` {text,
created_at}, `memory_type`, and for updates a `question`) and, for the oracle, the ideal
one-wording merge of each restatement (benchmarks/curation_merges.jsonl). Every pair's two
memories go into ONE namespace of a fresh embedded store (no two pairs share a subject, so
anything done across two pairs is a mistake, counted as "crossed"), embedded with the chosen
embedder, and the real `curate_namespace` job runs on it until a cycle merges nothing,
supersedes nothing and leaves no pair for the next cycle (at most 6 cycles; caps raised so that
the cycles are about judgement, not caps; a memory still takes part in one pair a cycle).

Prints, per kind and per update shape: merged, superseded, linked (a `shares_concept_with`
edge), untouched, crossed; then

- the merged nodes that state one fact twice (clause coverage of the text against itself);
- the recall probe: for each update, the top `current_memory` row for its question (by the
  embedder), and whether it is the newer memory (or the node the newer one was merged into);
- words lost: clauses of the memories as written that no active memory says (must be 0);
- the LLM's counts (judge verdicts, accepted and refused answers with their reasons).

Modes: `offline` (the LLM path off); `oracle` (a stub OpenAI-compatible server of ours on
127.0.0.1, curation_pipeline_tests/support/llm_stub.py, that judges each pair by its label and
merges each restatement into its ideal text); `always-update` (the same stub as an adversarial
judge that calls every pair an update: any restatement, related or distinct pair superseded is
one the texts let a wrong verdict through); `llama` (llama.cpp's llama-server serving
SmolLM2-135M-Instruct, built once and cached by curation_pipeline_tests/support/llama_server.py:
the wiring and the guard against a real model, not quality). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import uuid
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import scale_data

from curation_pipeline.defs.job import step_run_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the stub LLM lives with the tests

PAIRS = Path(__file__).with_name("curation_pairs.jsonl")
IDEALS = Path(__file__).with_name("curation_merges.jsonl")
KINDS = ("restatement", "update", "related", "distinct")
OUTCOMES = ("merged", "superseded", "linked", "untouched", "crossed")
MAX_CYCLES = 6
JUDGE_BAND = (0.75, 0.92)  # the defaults: CURATOR_JUDGE_BAND_LOW, CURATOR_SIMILARITY_THRESHOLD
# What must never come of a pair of a kind: a look-alike merged or superseded, a restatement
# superseded, an update merged (one node holding two values of one attribute).
_MISTAKES = {("distinct", "merged"), ("distinct", "superseded"), ("restatement", "superseded"),
             ("update", "merged")}
TENANT = "bench"


def run_config(*, judge_trusted: bool = False) -> dict:
    """The step config of every benchmark run. Caps out of the way: 570 memories in one
    namespace, and every pair judged at once. `judge_trusted`: CURATOR_JUDGE_TRUSTED for the run
    (core/trusted_updates.py)."""
    return step_run_config({"consolidate_duplicates": {
        "cap": 400, "supersede_cap": 400, "judge_cap": 400, "max_archive_fraction": 0.5,
        "judge_trusted": judge_trusted}})


RUN_CONFIG = run_config()
TARGETS = (
    "offline: 0 merged nodes state a fact twice; >= 60% of value-change updates superseded; "
    "0 distinct pairs merged or superseded; 0 restatements superseded",
    "oracle: >= 95% of updates superseded; >= 90% of the restatements in the judge band merged",
)


def load_pairs(path: Path) -> list[dict]:
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            pair = json.loads(line)
            ok = (pair["kind"] in KINDS and all(isinstance(pair[side]["text"], str) for side in ("older", "newer"))
                  and (pair["kind"] != "update" or isinstance(pair.get("question"), str)))
        except (ValueError, KeyError, TypeError) as error:
            raise SystemExit(f"{path}:{number}: not a labelled pair ({error!r})") from None
        if not ok:
            raise SystemExit(f"{path}:{number}: kind must be one of {KINDS}, texts strings, an update needs a question")
        pairs.append(pair)
    return pairs


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


# ----------------------------------------------------------------------------- the store


def _embedder(name: str):
    """`onnx-minilm` (the default), `lexical`, or a sentence-transformers model by name or path."""
    from curation_pipeline.clients.embedders.lexical import LexicalEmbedder
    from curation_pipeline.clients.embedders.onnx_minilm import OnnxMiniLMEmbedder
    if name == "lexical":
        return LexicalEmbedder(scale_data.DIM), {"CURATION_EMBEDDER": "lexical"}
    if name == "onnx-minilm":
        return OnnxMiniLMEmbedder(), {"CURATION_EMBEDDER": "onnx-minilm"}
    from curation_pipeline.clients.embedders.local import SentenceTransformerEmbedder
    return (SentenceTransformerEmbedder(name),
            {"CURATION_EMBEDDER": "sentence-transformers", "CURATION_EMBEDDING_MODEL": name})


def _seed(conn, namespace: str, pairs: list[dict], embedder) -> dict[str, tuple[str, str]]:
    """Both memories of every pair, embedded; returns pair id -> (older id, newer id)."""
    from curation_pipeline.store.nodes_io import insert_nodes

    rows, ids = [], {}
    texts = [pair[side]["text"] for pair in pairs for side in ("older", "newer")]
    vectors = embedder.embed(texts)
    for n, pair in enumerate(pairs):
        pair_ids = []
        for m, side in enumerate(("older", "newer")):
            written = _when(pair[side]["created_at"])
            node_id = str(uuid.uuid4())
            pair_ids.append(node_id)
            rows.append({"id": node_id, "tenant_id": TENANT, "namespace": namespace,
                         "memory_type": pair.get("memory_type", "semantic"), "pointer_summary": pair[side]["text"],
                         "embedding": vectors[2 * n + m], "embedding_model": embedder.name,
                         "base_utility": 0.5, "heat": 0.0, "pinned": False, "recall_count": 1,
                         "last_recalled_at": written, "epoch": 0, "confidence": "default",
                         "archived_at": None, "merged_into": None, "created_at": written, "updated_at": written})
        ids[pair["id"]] = tuple(pair_ids)
    with conn.transaction():
        insert_nodes(conn, rows)
    return ids


# ----------------------------------------------------------------------------- the LLM


def _oracle(pairs: list[dict], ideals: dict[str, dict]):
    """A responder for the stub server: the label's verdict, the ideal merge with its
    hand-checked alignment (each numbered clause of the request and the words that say it)."""
    from curation_pipeline.core.coverage import clauses_of
    from curation_pipeline.core.prompts import ALIGNMENT_FIELD, MERGE_FIELD, VERDICT_FIELD, parse_data_block
    from curation_pipeline_tests.support.llm_stub import Answer, answer, faithful, memory_texts, purpose, user_message

    def aligned(pair: dict, body: dict) -> Answer:
        ideal = ideals[pair["id"]]
        said = dict(zip((c.text for c in clauses_of([pair["older"]["text"], pair["newer"]["text"]])),
                        ideal.get("said_as") or ()))
        numbered = parse_data_block(user_message(body))["clauses"]
        claims = [{"clause": c["clause"], "said_as": said.get(c["text"])} for c in numbered]
        return Answer(json.dumps({MERGE_FIELD: ideal["ideal"], ALIGNMENT_FIELD: claims}))

    by_texts = {frozenset((p["older"]["text"], p["newer"]["text"])): p for p in pairs}
    verdict_of = {"restatement": "same", "update": "update", "related": "related", "distinct": "distinct"}

    def respond(body: dict, _number: int):
        pair = by_texts.get(frozenset(memory_texts(body)))
        if purpose(body) == "judge":
            return answer(VERDICT_FIELD, verdict_of[pair["kind"]] if pair else "distinct", output_tokens=4)
        if purpose(body) == "merge" and pair is not None and pair["id"] in ideals:
            return aligned(pair, body)
        return faithful(body)

    return respond


def _always_update(body: dict, _number: int):
    """A responder for the stub server: a judge that calls every pair an update, so that what
    gets superseded is what the words let through (core/judged_updates.py); faithful merges."""
    from curation_pipeline.core.prompts import VERDICT_FIELD
    from curation_pipeline_tests.support.llm_stub import answer, faithful, purpose

    return answer(VERDICT_FIELD, "update", output_tokens=4) if purpose(body) == "judge" else faithful(body)


@contextlib.contextmanager
def _llm(mode: str, pairs: list[dict], ideals: dict[str, dict]):
    """The environment of the LLM path for `mode`, with its server running."""
    if mode == "offline":
        yield {"CURATOR_LLM_ENABLED": "false"}
        return
    common = {"CURATOR_LLM_ENABLED": "true", "CURATOR_LLM_API": "chat", "CURATOR_LLM_MAX_CALLS": "2000",
              "CURATOR_LLM_MAX_TOKENS": "5000000", "CURATOR_LLM_CACHE": "false", "CURATOR_LLM_MAX_RETRIES": "1"}
    if mode in ("oracle", "always-update"):
        from curation_pipeline_tests.support.llm_stub import StubLLMServer
        stub = StubLLMServer(_oracle(pairs, ideals) if mode == "oracle" else _always_update)
        try:
            yield {**common, "CURATOR_LLM_BASE_URL": stub.url, "CURATOR_LLM_MODEL": mode, "CURATOR_LLM_CONCURRENCY": "8"}
        finally:
            stub.close()
        return
    from curation_pipeline_tests.support.llama_server import ensure_built, running_llama_server
    with running_llama_server(ensure_built(), slots=2) as server:
        yield {**common, "CURATOR_LLM_BASE_URL": server.url, "CURATOR_LLM_MODEL": server.model,
               "CURATOR_LLM_CONCURRENCY": "2", "CURATOR_LLM_TIMEOUT_SECS": "600"}


# ----------------------------------------------------------------------------- the cycles


def _run_cycles(url: str, namespace: str, config: dict = RUN_CONFIG) -> list[dict]:
    """Cycles of the real job until one merges and supersedes nothing; each cycle's step 2 counts."""
    import dagster as dg

    from curation_pipeline.core.partition_keys import partition_key
    from curation_pipeline.defs.definitions import load_defs
    from curation_pipeline.defs.job import JOB_NAME
    from curation_pipeline.defs.partitions import PARTITIONS_DEF_NAME
    from curation_pipeline.store.database import open_connection
    defs = load_defs()

    key = partition_key(TENANT, namespace)
    cycles = []
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(PARTITIONS_DEF_NAME, [key])
        for _ in range(MAX_CYCLES):
            result = defs.resolve_job_def(JOB_NAME).execute_in_process(
                partition_key=key, instance=instance, run_config={**config, **scale_data.QUIET},
                raise_on_error=False)
            with open_connection(url) as conn:
                [metadata] = conn.execute("SELECT metadata FROM activity_log WHERE run_id = %s AND action = 'curation_cycle'",
                                          (result.run_id,)).fetchone()
            steps = metadata["steps"]
            cycles.append(steps)
            step2 = steps["consolidate_duplicates"]
            if not result.success:
                raise SystemExit(f"the cycle failed: {metadata.get('errors')}")
            # Pairs left for the next cycle (a cap reached, a node already taken) are work a
            # scheduled product still does.
            if not (step2.get("pairs_merged") or step2.get("superseded") or step2.get("pairs_left_over")):
                break
    return cycles


# ----------------------------------------------------------------------------- what came of it


def _keeper(nodes: dict, node_id: str) -> str:
    seen = set()
    while nodes[node_id]["merged_into"] is not None and node_id not in seen:
        seen.add(node_id)
        node_id = nodes[node_id]["merged_into"]
    return node_id


def _outcomes(conn, namespace: str, pairs: list[dict], ids: dict) -> tuple[dict, dict]:
    rows = conn.execute(
        "SELECT id::text, merged_into::text, superseded_by::text, archived_at IS NOT NULL, pointer_summary"
        " FROM memory_nodes WHERE tenant_id = %s AND namespace = %s", (TENANT, namespace)).fetchall()
    nodes = {r[0]: {"merged_into": r[1], "superseded_by": r[2], "archived": r[3], "text": r[4]} for r in rows}
    edges = {frozenset(e) for e in conn.execute(
        "SELECT source_id::text, target_id::text FROM graph_edges WHERE tenant_id = %s AND namespace = %s"
        " AND label = 'shares_concept_with' AND retracted_at IS NULL", (TENANT, namespace)).fetchall()}
    pair_of = {node_id: pair_id for pair_id, both in ids.items() for node_id in both}
    outcome = {}
    for pair in pairs:
        older, newer = ids[pair["id"]]
        partners = set()
        for node_id in (older, newer):
            node = nodes[node_id]
            for other in (node["merged_into"], node["superseded_by"]):
                if other is not None:
                    partners.add(pair_of.get(_keeper(nodes, other)))
            partners |= {pair_of.get(n) for n, row in nodes.items() if row["merged_into"] == node_id or row["superseded_by"] == node_id}
        if partners - {pair["id"], None}:
            outcome[pair["id"]] = "crossed"
        elif _keeper(nodes, older) == _keeper(nodes, newer):
            outcome[pair["id"]] = "merged"
        elif nodes[older]["superseded_by"] is not None and _keeper(nodes, nodes[older]["superseded_by"]) == _keeper(nodes, newer):
            outcome[pair["id"]] = "superseded"
        elif nodes[newer]["superseded_by"] is not None:
            outcome[pair["id"]] = "crossed"  # the newer one superseded by the older: never right
        elif frozenset((older, newer)) in edges:
            outcome[pair["id"]] = "linked"
        else:
            outcome[pair["id"]] = "untouched"
    return outcome, nodes


def _similarities(pairs: list[dict], embedder) -> dict[str, float]:
    import numpy as np
    older = np.asarray(embedder.embed([p["older"]["text"] for p in pairs]), dtype=np.float32)
    newer = np.asarray(embedder.embed([p["newer"]["text"] for p in pairs]), dtype=np.float32)
    cosines = (older * newer).sum(1) / (np.linalg.norm(older, axis=1) * np.linalg.norm(newer, axis=1))
    return {p["id"]: float(c) for p, c in zip(pairs, cosines)}


def _print_table(title: str, groups: dict[str, Counter]) -> None:
    print(f"\n{title}")
    print("| " + " | ".join(["group", *OUTCOMES, "pairs"]) + " |")
    print("|" + "---|" * (len(OUTCOMES) + 2))
    for group, counts in groups.items():
        print("| " + " | ".join([group, *(str(counts[o]) for o in OUTCOMES), str(sum(counts.values()))]) + " |")


def _semantic(embedder):
    from curation_pipeline.core.coverage import semantic_for
    return semantic_for(embedder.name, embedder.embed)


def _report(conn, namespace: str, pairs: list[dict], ids: dict, cycles: list[dict], embedder,
            verbose: bool = False, mode: str = "offline") -> None:
    from curation_pipeline.core.coverage import KeptText, clauses_of, restated_within

    outcome, nodes = _outcomes(conn, namespace, pairs, ids)
    by_kind = {kind: Counter(outcome[p["id"]] for p in pairs if p["kind"] == kind) for kind in KINDS}
    _print_table("outcome per kind", by_kind)
    wrong = [p for p in pairs if outcome[p["id"]] == "crossed" or (p["kind"], outcome[p["id"]]) in _MISTAKES]
    if wrong:
        print("\nmistakes (" + ", ".join(f"{kind} {what}" for kind, what in sorted(_MISTAKES)) + ", crossed):")
        for pair in wrong:
            print(f"  {pair['id']} {outcome[pair['id']]}: {pair['older']['text']!r} / {pair['newer']['text']!r}")
    shapes = sorted({p["shape"] for p in pairs if p["kind"] == "update"})
    _print_table("updates per shape", {s: Counter(outcome[p["id"]] for p in pairs if p["shape"] == s) for s in shapes})
    similarity = _similarities(pairs, embedder)
    band = {p["id"] for p in pairs if JUDGE_BAND[0] < similarity[p["id"]] <= JUDGE_BAND[1]}
    _print_table(f"in the judge band ({JUDGE_BAND[0]}, {JUDGE_BAND[1]}] of {embedder.name}",
                 {kind: Counter(outcome[p["id"]] for p in pairs if p["kind"] == kind and p["id"] in band) for kind in KINDS})
    missed = [p for p in pairs if p["kind"] == "update" and outcome[p["id"]] != "superseded"]
    print("\nupdates not superseded: " + ", ".join(f"{p['id']} ({similarity[p['id']]:.2f})" for p in missed))

    semantic = _semantic(embedder)
    merged_keepers = {_keeper(nodes, ids[p["id"]][0]) for p in pairs if outcome[p["id"]] == "merged"}
    twice = [n for n in merged_keepers if restated_within(nodes[n]["text"], semantic)]
    print(f"\nmerged nodes that state one fact twice: {len(twice)} of {len(merged_keepers)}")
    for node_id in twice[:5]:
        print(f"  {nodes[node_id]['text']!r}")

    active = [row["text"] for row in nodes.values() if not row["archived"]]
    kept = KeptText.of(active, semantic)
    written = [p[side]["text"] for p in pairs for side in ("older", "newer")]
    lost = [c for c in kept.cover_all(clauses_of(written)) if not c.covered and c.clause.keys]
    # Coverage searches for a wording close to the clause's; an accepted aligned merge may say it
    # far from it ("dislikes" for "does not like"), a pair the guard checked: counted apart.
    claimed = _said_by_checked_claims(conn, namespace, nodes)
    in_other_words = [c for c in lost if c.clause.text in claimed]
    lost = [c for c in lost if c.clause.text not in claimed]
    print(f"clauses written by the agents that no active memory says: {len(lost)}"
          + (f" (and {len(in_other_words)} said in other words by the checked pairs of accepted merges)"
             if in_other_words else ""))
    for covered in lost[:5]:
        print(f"  {covered.clause.text!r}")

    _recall_probe(conn, namespace, pairs, ids, nodes, embedder)
    _llm_report(cycles, verbose)
    _merge_answers(conn, namespace, nodes, verbose, real_tokens=mode == "llama")


def _said_by_checked_claims(conn, namespace: str, nodes: dict) -> frozenset[str]:
    """The input clauses that an accepted merge's checked pairs say in other words, where the
    merge's node is active and still has the words claimed (its revision's `said_as`)."""
    rows = conn.execute(
        "SELECT reason FROM node_revisions WHERE tenant_id = %s AND namespace = %s"
        " AND reason->>'guard' = 'accepted' AND reason ? 'said_as' AND reason ? 'keeper_id'",
        (TENANT, namespace)).fetchall()
    said = set()
    for (reason,) in rows:
        keeper = nodes.get(reason["keeper_id"])
        if keeper is None or keeper["archived"]:
            continue
        said |= {pair["clause"] for pair in reason["said_as"] if pair["said_as"] in (keeper["text"] or "")}
    return frozenset(said)


def _recall_probe(conn, namespace: str, pairs: list[dict], ids: dict, nodes: dict, embedder) -> None:
    updates = [p for p in pairs if p["kind"] == "update"]
    vectors = embedder.embed([p["question"] for p in updates])
    current = 0
    for pair, vector in zip(updates, vectors):
        top = conn.execute(
            "SELECT id::text FROM current_memory WHERE tenant_id = %s AND namespace = %s AND embedding IS NOT NULL"
            " ORDER BY embedding <=> %s::vector LIMIT 1",
            (TENANT, namespace, "[" + ",".join(f"{x:.7g}" for x in vector) + "]")).fetchone()
        current += top is not None and top[0] == _keeper(nodes, ids[pair["id"]][1])
    print(f"recall probe: the top current_memory row answers with the newest value for {current} of {len(updates)} updates"
          f" ({current / len(updates):.0%})")


def _llm_report(cycles: list[dict], verbose: bool = False) -> None:
    totals, reasons = Counter(), Counter()
    for steps in cycles:
        step2 = steps["consolidate_duplicates"]
        for key, value in step2.items():
            if key.startswith(("judge", "llm_accepted", "llm_rejected", "llm_requests", "llm_unavailable")) and isinstance(value, int):
                totals[key] += value
        for note in step2.get("llm_fallbacks", []):
            reasons[(note.get("reason") or note.get("llm_outcome") or "?").split(" '")[0]] += 1
            if verbose:
                print(f"  fallback: {json.dumps(note, ensure_ascii=False)[:600]}")
    if not totals:
        print("LLM: off")
        return
    print("LLM (step 2, all cycles): " + ", ".join(f"{k}={v}" for k, v in sorted(totals.items())))
    for reason, count in reasons.most_common(8):
        print(f"  refused or failed: {count} x {reason}")


def _merge_answers(conn, namespace: str, nodes: dict, verbose: bool = False, real_tokens: bool = True) -> None:
    """How many merge answers the guard accepted, their token cost (as the server counted it),
    and (-v) each accepted merged text with the pairs the guard checked, for a person to read."""
    rows = conn.execute(
        "SELECT DISTINCT ON (reason->>'keeper_id', reason->>'absorbed_id') reason, after->>'pointer_summary'"
        " FROM node_revisions WHERE tenant_id = %s AND namespace = %s AND reason ? 'guard'"
        " AND reason ? 'absorbed_id' ORDER BY reason->>'keeper_id', reason->>'absorbed_id', id",
        (TENANT, namespace)).fetchall()
    if not rows:
        return
    accepted = [(reason, text) for reason, text in rows if reason.get("guard") == "accepted"]
    print(f"merge answers accepted: {len(accepted)} of {len(rows)}")
    tokens_in = [r.get("llm_input_tokens") or 0 for r, _ in rows]
    tokens_out = [r.get("llm_output_tokens") or 0 for r, _ in rows]
    if real_tokens:  # the oracle's stub reports the same made-up usage for every answer
        print(f"tokens per merge request: {sum(tokens_in) / len(rows):.0f} in, {sum(tokens_out) / len(rows):.0f} out"
          f" (mean of {len(rows)}, as the server counted them)")
    if verbose:
        for reason, text in accepted:
            print(f"  accepted: {text!r}")
            for pair in reason.get("said_as", []):
                print(f"    said as: {pair['clause']!r} -> {pair['said_as']!r}")


# ----------------------------------------------------------------------------- calibration


def calibrate(pairs: list[dict], embedder) -> None:
    """For each candidate threshold: how many directions of each kind (one memory's clauses all
    said by the other) the semantic rule would cover. The calibrated threshold is the lowest at
    which no update and no distinct pair is covered: a changed value must never read as said."""
    from curation_pipeline.core.coverage import KeptText, Semantic, clauses_of, covers_lexically

    semantic = Semantic(embedder.embed, threshold=1.0)
    weakest = defaultdict(list)
    for pair in pairs:
        for source, target in ((pair["older"]["text"], pair["newer"]["text"]), (pair["newer"]["text"], pair["older"]["text"])):
            kept = KeptText.of([target], semantic)
            pieces = [p for s in kept.sentences for p in s.pieces()]
            lowest = 1.0
            for clause in clauses_of([source]):
                if not clause.keys or any(covers_lexically(clause, p) for p in pieces):
                    continue
                closest = kept.closest(clause)
                lowest = min(lowest, closest[1] if closest else -1.0)
            weakest[pair["kind"]].append(lowest)
    print(f"calibration of {embedder.name}: directions whose every clause is said, per kind (of {2 * len(pairs)} directions)")
    print("| threshold | " + " | ".join(KINDS) + " |")
    print("|---|" + "---|" * len(KINDS))
    for threshold in (0.70, 0.75, 0.80, 0.85, 0.88, 0.90, 0.92, 0.95):
        print(f"| {threshold:.2f} | " + " | ".join(str(sum(v >= threshold for v in weakest[k])) for k in KINDS) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("offline", "oracle", "always-update", "llama"), default="offline")
    parser.add_argument("--embedder", default="onnx-minilm", metavar="onnx-minilm|lexical|MODEL")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every answer the guard refused, whole")
    parser.add_argument("--calibrate", action="store_true", help="print the semantic threshold's calibration and stop")
    parser.add_argument("--judge-trusted", action="store_true",
                        help="CURATOR_JUDGE_TRUSTED: the judge reads which attribute changed (core/trusted_updates.py)")
    args = parser.parse_args(argv)
    pairs = load_pairs(args.pairs)
    embedder, embedder_env = _embedder(args.embedder)
    if args.calibrate:
        calibrate(pairs, embedder)
        return
    ideals = {row["id"]: row for row in map(json.loads, IDEALS.read_text(encoding="utf-8").splitlines())
              if row} if IDEALS.exists() else {}

    url = scale_data.fresh_store()
    os.environ.update(embedder_env)
    from curation_pipeline.store.database import open_connection

    namespace = f"{args.mode}-{args.embedder.lower().replace('_', '-')}"
    trusted = ", judge trusted" if args.judge_trusted else ""
    print(f"# curation quality: {len(pairs)} labelled pairs, mode {args.mode}{trusted}, embedder {embedder.name}")
    for target in TARGETS:
        print(f"# target, {target}")
    with open_connection(url) as conn:
        ids = _seed(conn, namespace, pairs, embedder)
    with _llm(args.mode, pairs, ideals) as llm_env:
        os.environ.update(llm_env)
        started = time.perf_counter()
        cycles = _run_cycles(url, namespace, run_config(judge_trusted=args.judge_trusted))
        elapsed = time.perf_counter() - started
    print(f"{len(cycles)} cycle(s) in {elapsed:.0f} s")
    with open_connection(url) as conn:
        _report(conn, namespace, pairs, ids, cycles, embedder, args.verbose, args.mode)


if __name__ == "__main__":
    main()

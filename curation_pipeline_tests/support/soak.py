"""A seeded random driver that keeps attacking the real pipeline and checks every promise after
every action (the soak suite, service/test_soak.py, and the undo property test).

Actions, against the real embedded Postgres and the real `curate_namespace` job:

- agents insert memories (new ones, near-duplicates of what is there, verbose ones), edit them
  (replacing a sentence only they wrote, so no merged-in text is dropped by the agent itself)
  and recall them (a vector query, then the recall counters);
- curation runs of one namespace, clean or with a fault: the LLM path on against our stub server
  answering well, with 500s or with garbage; the step's database connection killed mid-step; the
  run's lease connection killed mid-step; an agent writing while a step holds its transaction;
- undos of a random earlier run or undo (so undos of undos), some with `force`;
- an import racing a run: a JSONL import of new memories, some archived into an active node of
  the partition, while a run of that partition starts between the import's check and its write
  (an agent has just written a near-duplicate of that node, so the run is likely to merge it);
- an export of the whole store imported into a second, empty store and exported again;
- an agent edits, moves to another partition or archives the successor of a supersession, and
  agents write chains of three updates of one value (floor 3, 5, 7, oldest first).

After each action (support/memory_invariants.py): no row deleted, every keeper chain ends at an
active node of its namespace, every sentence an agent wrote is in active memory or recorded, and
nothing changed outside the partition acted on; after a fault, what the fault must leave; after
an import racing a run, no archived node points at an archived keeper; after a round trip, the
second store's export is the first's, byte for byte, and the first store is unchanged; after a
clean run, its `supersessions_hold` check passed (every supersession a changed successor no
longer holds was undone); after every action, the newest value of a chain of updates whose three
memories are as their agent wrote them is current. At the
end (and every `unwind_every` actions) every run and undo is undone, newest first, which must
give back what the agents last wrote, and then those undos are undone, which must give back the
curated state.

Everything random comes from one `random.Random(seed)` (node ids included), so a seed replays
the same actions; a failure names the seed, the action and the problems.
"""

from __future__ import annotations

import json
import random
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dagster as dg
import psycopg

from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.jsonl_rows import format_node_jsonl
from curation_pipeline.core.partition_keys import validate_name
from curation_pipeline.core.prompts import MERGE_FIELD, SUMMARY_FIELD
from curation_pipeline.core.text import sentence_keys, split_sentences
from curation_pipeline.defs.job import step_run_config
from curation_pipeline.service.node_import import import_jsonl_file
from curation_pipeline.service.undo import NothingToUndoError, undo_run
from curation_pipeline.store.database import ensure_database, open_connection
from curation_pipeline.store.nodes_io import iter_nodes
from curation_pipeline.store.undo import namespaces_changed_by
from curation_pipeline_tests.conftest import EMBEDDER, NOW, insert, node, run_cycle
from curation_pipeline_tests.support import memory_invariants as inv
from curation_pipeline_tests.support.llm_stub import (
    Reply,
    StubResponsesServer,
    answer,
    error,
    faithful,
    purpose,
)
from curation_pipeline_tests.support.step_faults import PAUSABLE_STEPS, MidStepFault

PARTITIONS = (("acme", "support"), ("acme", "sales"), ("globex", "support"))
# Holds by which an undo refuses to point a node into another namespace (core/undo_links.py).
CROSSING_HOLDS = ("keeper_moved", "successor_moved")
# The lexical embedder scores a near-duplicate (one sentence more or less) about 0.8-0.9.
RUN_CONFIG = step_run_config({"consolidate_duplicates": {"similarity_threshold": 0.8}})

PEOPLE = ("Dana Reyes", "Sam Okafor", "Priya Nair", "Lena Fischer", "Tomás Ruiz", "Aiko Tanaka")
TOPICS = ("the invoice", "the SSO rollout", "the renewal", "the webhook retries", "the CSV export",
          "the Q3 roadmap", "the data retention policy", "the pilot in eu-central-1")
CHAIN_ITEMS = ("printer", "coffee machine", "whiteboard", "plotter", "standing desk", "first-aid kit")
VERBS = ("asked about", "escalated", "approved", "signed off on", "complained about", "postponed")

RUN_FAULTS = {  # fault: weight
    None: 30, "llm_ok": 12, "llm_500": 10, "llm_garbage": 10,
    "kill_step": 14, "kill_lease": 12, "agent_mid_step": 12,
}

LLM_ENV = {"CURATOR_LLM_API": "responses", "CURATOR_LLM_MODEL": "stub-model", "CURATOR_LLM_TIMEOUT_SECS": "2",
           "CURATOR_LLM_BACKOFF_SECS": "0.01", "CURATOR_LLM_MAX_RETRIES": "1",
           "CURATOR_LLM_MAX_RETRY_WAIT_SECS": "1"}


@dataclass(frozen=True)
class Mix:
    """How often each action is drawn (weights) and which run faults may be drawn."""

    insert: int = 20
    edit: int = 14
    recall: int = 8
    store_recall: int = 6  # an agent reads through the store's recall() (sql/016)
    run: int = 36
    undo: int = 22
    import_race: int = 4  # an import racing a run
    round_trip: int = 3  # export, import into a second store, export again
    # An agent edits, moves (to another partition) or archives the successor of a supersession;
    # an agent writes a chain of three updates of one value (floor 3, 5, 7, oldest first).
    successor: int = 0
    chain: int = 0
    force_share: float = 0.35  # of undos
    newest_share: float = 0.5  # of undos: the newest run or undo (else any earlier one)
    duplicate_share: float = 0.4  # of inserts: a near-duplicate of an active memory
    faults: tuple[str | None, ...] = tuple(RUN_FAULTS)
    # Action kinds done at least once: one the random draws left out is done after them, so a
    # test of those kinds never passes for want of them (nor fails by the luck of the draw).
    required: tuple[str, ...] = ()
    # Action kinds done first, in this order, all on one partition: a scene the random draws
    # would reach only by luck (a chain written, a run that supersedes, its successor changed).
    prelude: tuple[str, ...] = ()


@dataclass
class SoakLog:
    actions: Counter = field(default_factory=Counter)  # what was done, faults by kind
    fired: Counter = field(default_factory=Counter)  # mid-step faults that hit a paused step
    outcomes: Counter = field(default_factory=Counter)  # forced / held / conflict rows, failed runs
    recent: list[str] = field(default_factory=list)

    def note(self, line: str) -> None:
        self.recent = (self.recent + [line])[-40:]


class SoakFailure(AssertionError):
    pass


class _NoProgress:
    def advance(self, count: int = 1) -> None:
        pass


def _export(url: str, path: Path) -> None:
    with open_connection(url) as conn, path.open("w", encoding="utf-8") as out:
        for row in iter_nodes(conn):
            out.write(format_node_jsonl(row) + "\n")


def _first_difference(exported: str, reexported: str) -> str:
    """The first node whose exported line changed, and the columns that differ (JSONL lines)."""
    before = {row["id"]: row for row in map(json.loads, exported.splitlines())}
    after = {row["id"]: row for row in map(json.loads, reexported.splitlines())}
    for node_id in sorted(before.keys() | after.keys()):
        old, new = before.get(node_id), after.get(node_id)
        if old != new:
            if old is None or new is None:
                return f"node {node_id} {'appeared' if old is None else 'is missing'}"
            columns = sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))
            return f"node {node_id}: " + "; ".join(f"{key} {old.get(key)!r} -> {new.get(key)!r}" for key in columns)
    return "the same values, written differently (line order or formatting)"


class Soak:
    def __init__(self, db: psycopg.Connection, url: str, instance: dg.DagsterInstance, *, seed: int,
                 set_env: Callable[[str, str | None], None], llm: StubResponsesServer | None = None,
                 mix: Mix = Mix()) -> None:
        self.db, self.url, self.instance, self.seed = db, url, instance, seed
        self.rng = random.Random(seed)
        self.set_env, self.llm, self.mix = set_env, llm, mix
        self.record = inv.AgentRecord()
        self.history: list[str] = []  # curation runs and undos, oldest first
        self.log = SoakLog()
        self.step_number = 0
        self.chains: list[dict] = []  # chains of three updates the agents wrote (_chain_of_updates)
        self.moved_into: dict[tuple, set] = {}  # partition -> the partitions an agent moved nodes from
        self.unwind_every = 0
        self._llm_mode = "ok"
        self._serial = 0
        self._last_held: dict[str, dict] = {}  # node -> the last undo's hold of its restore (reason, nodes)
        if llm is not None:
            llm.responder = self._answer
        set_env("CURATOR_LLM_ENABLED", "false")

    # ------------------------------------------------------------------ driving

    def setup(self, nodes_per_partition: int = 8) -> None:
        for partition in PARTITIONS:
            for number in range(nodes_per_partition):
                self._insert(partition, fresh_only=number < nodes_per_partition // 2)
        self.db.execute("UPDATE namespace_activity SET current_epoch = 500")
        self.check("setup", set(PARTITIONS), inv.row_keys(self.db), inv.partition_digests(self.db))

    def run(self, actions: int, *, unwind_every: int = 0) -> SoakLog:
        self.unwind_every = unwind_every
        self.setup()
        scene = self.rng.choice(PARTITIONS)
        for kind in self.mix.prelude:
            self.act(kind, scene)
        for _ in range(actions):
            self.act()
            if unwind_every and self.step_number % unwind_every == 0 and self.step_number < actions:
                self.unwind_and_rewind()
        for kind in self.mix.required:
            if not self.log.actions[f"{kind} actions"]:
                self.act(kind)
        self.unwind_and_rewind()
        return self.log

    def act(self, kind: str | None = None, partition: tuple[str, str] | None = None) -> None:
        """One action: `kind`, or one drawn by the mix's weights (on `partition`, or a drawn one)."""
        self.step_number += 1
        mix = self.mix
        if kind is None:
            kind = self.rng.choices(
                ("insert", "edit", "recall", "run", "undo", "import_race", "round_trip", "successor", "chain",
                 "store_recall"),
                (mix.insert, mix.edit, mix.recall, mix.run, mix.undo, mix.import_race, mix.round_trip,
                 mix.successor, mix.chain, mix.store_recall))[0]
        partition = partition or self.rng.choice(PARTITIONS)
        keys, digests = inv.row_keys(self.db), inv.partition_digests(self.db)
        acted_on, problems = {partition}, []
        if kind == "insert":
            description = self._insert(partition)
        elif kind == "edit":
            description = self._edit(partition)
        elif kind == "recall":
            description = self._recall(partition)
        elif kind == "store_recall":
            description, problems = self._recall_through_store(partition)
        elif kind == "run":
            description, problems = self._run(partition)
            # Step 6 of the partition a node was moved into moves its graph vertex too, and
            # retracts that vertex's edges in the partition it came from.
            acted_on |= self.moved_into.pop(partition, set())
        elif kind == "import_race":
            description, problems = self._import_racing_a_run(partition)
            acted_on |= self.moved_into.pop(partition, set())  # it runs the partition too (above)
        elif kind == "round_trip":
            description, problems = self._round_trip()
            acted_on = set()  # it reads the store, and must change nothing in it
        elif kind == "successor":
            description, acted_on = self._change_a_successor(partition)
        elif kind == "chain":
            description = self._chain_of_updates(partition)
        else:
            description, acted_on, _ = self._undo()
        self.log.actions[f"{kind} actions"] += 1
        self.check(description, acted_on, keys, digests, problems)

    def check(self, description: str, acted_on: set, keys: dict, digests: dict, problems: list[str] = ()) -> None:
        """Every promise after an action; `problems`: what the action itself found wrong."""
        self.log.note(f"{self.step_number}: {description}")
        self._fail_if([
            *problems,
            *inv.deleted_rows(keys, inv.row_keys(self.db)),
            *inv.broken_chains(self.db),
            *inv.vectors_without_model(self.db),
            *inv.lost_sentences(self.db, self.record),
            *inv.changed_elsewhere(digests, inv.partition_digests(self.db), acted_on),
            *self._newest_hidden(),
        ], description)

    def _fail_if(self, problems: list[str], description: str) -> None:
        if problems:
            raise SoakFailure(
                f"soak seed {self.seed}, action {self.step_number} ({description}) broke a promise:\n  "
                + "\n  ".join(problems[:20])
                + "\nlast actions:\n  " + "\n  ".join(self.log.recent)
                + f"\nreplay: CURATION_SOAK_SEED={self.seed} CURATION_SOAK_ACTIONS={self.step_number}"
                + (f" CURATION_SOAK_UNWIND_EVERY={self.unwind_every}" if self.unwind_every else "")
            )

    # ------------------------------------------------------------------ agents

    def _new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _sentence(self) -> str:
        self._serial += 1
        rng = self.rng
        return (f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(TOPICS)}"
                f" on ticket T-{1000 + self._serial}.")

    def _active(self, partition: tuple[str, str]) -> list[tuple[str, str]]:
        return self.db.execute(
            "SELECT id::text, pointer_summary FROM memory_nodes"
            " WHERE tenant_id = %s AND namespace = %s AND archived_at IS NULL ORDER BY id",
            partition,
        ).fetchall()

    def _insert(self, partition: tuple[str, str], *, fresh_only: bool = False) -> str:
        rng = self.rng
        active = [] if fresh_only else self._active(partition)
        shape = "fresh"
        if active:
            shape = "duplicate" if rng.random() < self.mix.duplicate_share else rng.choice(("fresh", "fresh", "verbose"))
        if shape == "duplicate":
            source = rng.choice(active)[1]
            parts = split_sentences(source)
            if len(parts) > 1 and rng.random() < 0.4:
                parts.pop(rng.randrange(len(parts)))
            else:
                parts.append(self._sentence())
            text = " ".join(parts)
        else:
            count = rng.randint(9, 10) if shape == "verbose" else rng.randint(1, 4)
            text = " ".join(self._sentence() for _ in range(count))
        row = node(
            *partition, text, id=self._new_id(), embed=rng.random() < 0.8,
            base_utility=round(rng.random(), 2), pinned=rng.random() < 0.08,
            confidence=rng.choice(("default", "default", "verified")),
            recall_count=rng.choice((0, 0, 1, 5)), epoch=rng.choice((0, 0, 450)),
            last_recalled_at=rng.choice((None, NOW - timedelta(days=rng.randint(1, 90)))),
            created_at=NOW - timedelta(days=rng.randint(1, 200)),
        )
        insert(self.db, row)
        self.record.wrote(row["id"], partition, text)
        return f"agent inserts a {shape} node {row['id']} in {partition}"

    def _edit(self, partition: tuple[str, str], conn: psycopg.Connection | None = None) -> str:
        """An agent rewrites an active node. Mid-step (`conn` given) it takes a row the paused
        step does not hold, as an agent that must not wait would."""
        mid_step = conn is not None
        conn = conn or self.db
        candidates = conn.execute(
            "SELECT id::text, pointer_summary FROM memory_nodes WHERE tenant_id = %s AND namespace = %s"
            f" AND archived_at IS NULL ORDER BY id {'FOR UPDATE SKIP LOCKED' if mid_step else ''}",
            partition,
        ).fetchall()
        if not candidates:
            return "agent edit: nothing to edit"
        node_id, before = self.rng.choice(candidates)
        text = self._edited(node_id, before)
        conn.execute(
            "UPDATE memory_nodes SET pointer_summary = %s, embedding = NULL, embedding_model = NULL WHERE id = %s",
            (text, node_id),
        )
        self.record.wrote(node_id, partition, text, before=before)
        return f"agent edits {node_id} in {partition}"

    def _edited(self, node_id: str, text: str) -> str:
        """Replace one sentence no other node's agent wrote (or add one): an agent rewriting its
        own words, never the words merged in from another memory."""
        others = set().union(*(sentence_keys(t) for n, t in self.record.written.items() if n != node_id))
        parts = split_sentences(text)
        own = [i for i, part in enumerate(parts) if not (sentence_keys(part) & others)]
        if own and self.rng.random() < 0.7:
            parts[self.rng.choice(own)] = self._sentence()
        else:
            parts.append(self._sentence())
        return " ".join(parts)

    def _recall(self, partition: tuple[str, str]) -> str:
        written = sorted(n for n, p in self.record.partition.items() if p == partition)
        if not written:
            return "agent recall: nothing written yet"
        query = self.rng.choice(split_sentences(self.record.written[self.rng.choice(written)]))
        vector = EMBEDDER.embed([query])[0]
        recalled = [row[0] for row in self.db.execute(
            "SELECT id FROM memory_nodes WHERE tenant_id = %s AND namespace = %s AND archived_at IS NULL"
            " AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector, id LIMIT 3",
            (*partition, str(list(map(float, vector)))),
        ).fetchall()]
        self.db.execute(
            "UPDATE memory_nodes SET recall_count = recall_count + 1, last_recalled_at = now(),"
            " heat = least(1.0, heat + 0.1) WHERE id = ANY(%s)", (recalled,),
        )
        return f"agent recalls {len(recalled)} node(s) in {partition}"

    def _recall_through_store(self, partition: tuple[str, str]) -> tuple[str, list[str]]:
        """An agent that reads as the docs say: `recall()`, which records its accesses beside the
        nodes (no row_version bump) and moves the clock. What it returns must be current memory
        of its own namespace."""
        written = sorted(n for n, p in self.record.partition.items() if p == partition)
        if not written:
            return "agent recall() : nothing written yet", []
        query = self.rng.choice(split_sentences(self.record.written[self.rng.choice(written)]))
        found = self.db.execute(
            "SELECT r.id::text, m.tenant_id, m.namespace, m.archived_at IS NULL AND m.superseded_by IS NULL"
            " FROM recall(%s, %s, %s::vector, 3, model => %s) AS r JOIN memory_nodes m ON m.id = r.id",
            (*partition, str(list(map(float, EMBEDDER.embed([query])[0]))), EMBEDDER.name),
        ).fetchall()
        self.log.actions["nodes read through recall()"] += len(found)
        problems = [f"recall() in {partition} returned {node_id}, which is not current memory there"
                    for node_id, tenant, namespace, current in found if (tenant, namespace) != partition or not current]
        return f"agent recall() reads {len(found)} node(s) in {partition}", problems

    # ------------------------------------------------------------------ supersessions

    def _change_a_successor(self, partition: tuple[str, str]) -> tuple[str, set]:
        """An agent edits (one of its own sentences), moves to another partition or archives the
        successor of a supersession in `partition`: the next run of the partition must put the
        older memory back (checked after each clean run: _run_problems). Only a successor no
        node is merged into: moving or archiving a keeper breaks its chains, which is another
        promise's business (the no_orphaned_archives check)."""
        rows = self.db.execute(
            "SELECT DISTINCT s.id::text, s.pointer_summary FROM memory_nodes o JOIN memory_nodes s ON s.id = o.superseded_by"
            " WHERE o.tenant_id = %s AND o.namespace = %s AND s.tenant_id = o.tenant_id AND s.namespace = o.namespace"
            " AND s.archived_at IS NULL AND o.archived_at IS NULL"
            " AND NOT EXISTS (SELECT 1 FROM memory_nodes m WHERE m.merged_into = s.id) ORDER BY 1",
            partition,
        ).fetchall()
        if not rows:
            return f"agent changes a successor: none in {partition}", {partition}
        node_id, before = self.rng.choice(rows)
        how = self.rng.choice(("edit", "move", "archive"))
        self.log.actions[f"successor {how}"] += 1
        if how == "edit":
            text = self._edited(node_id, before)
            self.db.execute("UPDATE memory_nodes SET pointer_summary = %s, embedding = NULL, embedding_model = NULL"
                            " WHERE id = %s", (text, node_id))
            self.record.wrote(node_id, partition, text, before=before)
            return f"agent edits successor {node_id} in {partition}", {partition}
        if how == "move":
            elsewhere = self.rng.choice([p for p in PARTITIONS if p != partition])
            self.db.execute("UPDATE memory_nodes SET tenant_id = %s, namespace = %s WHERE id = %s",
                            (*elsewhere, node_id))
            self.record.partition[node_id] = elsewhere
            self.moved_into.setdefault(elsewhere, set()).add(partition)
            return f"agent moves successor {node_id} from {partition} to {elsewhere}", {partition, elsewhere}
        self.db.execute("UPDATE memory_nodes SET archived_at = now() WHERE id = %s", (node_id,))
        self.record.archived_by_agent.add(node_id)
        return f"agent archives successor {node_id} in {partition}", {partition}

    def _chain_of_updates(self, partition: tuple[str, str]) -> str:
        """Three memories of one value, each a newer update of the one before (written 10, 5
        and 1 days ago), about a subject no other chain of the partition has."""
        used = {chain["subject"] for chain in self.chains if chain["partition"] == partition}
        subjects = [f"The {item} of {person}'s team" for person in PEOPLE for item in CHAIN_ITEMS
                    if f"The {item} of {person}'s team" not in used]
        if not subjects:
            return f"agent chain of updates: every subject used in {partition}"
        subject = self.rng.choice(subjects)
        floors = sorted(self.rng.sample(range(2, 30), 3))
        rows = [node(*partition, f"{subject} is on floor {floor}.", id=self._new_id(),
                     created_at=NOW - timedelta(days=days), recall_count=1)
                for floor, days in zip(floors, (10, 5, 1))]
        insert(self.db, *rows)
        for row in rows:
            self.record.wrote(row["id"], partition, row["pointer_summary"])
        self.chains.append({"partition": partition, "subject": subject,
                            "nodes": [(row["id"], row["pointer_summary"]) for row in rows]})
        return f"agent writes a chain of three updates in {partition}: {subject} on floors {floors}"

    def _newest_hidden(self) -> list[str]:
        """The newest value of a chain whose three memories are as their agent wrote them (none
        edited, moved, archived or merged) is always current."""
        problems = []
        for chain in self.chains:
            ids = [node_id for node_id, _ in chain["nodes"]]
            rows = {row[0]: row[1:] for row in self.db.execute(
                "SELECT id::text, pointer_summary, tenant_id, namespace, archived_at IS NULL, superseded_by IS NULL"
                " FROM memory_nodes WHERE id = ANY(%s::uuid[])", (ids,)).fetchall()}
            if any(rows[node_id][:4] != (text, *chain["partition"], True) for node_id, text in chain["nodes"]):
                continue
            newest_id, newest_text = chain["nodes"][-1]
            if not rows[newest_id][4]:
                problems.append(f"the newest of a chain of updates, {newest_id} ({newest_text!r}), is superseded")
        return problems

    # ------------------------------------------------------------------ runs

    def _answer(self, body: dict, number: int) -> Reply:
        if self._llm_mode == "500":
            return error(500)
        if self._llm_mode == "garbage":
            field_name = MERGE_FIELD if purpose(body) == "merge" else SUMMARY_FIELD
            return self.rng.choice((Reply(body=b"{not json"), answer("text", "whatever"),
                                    answer(field_name, "APPROVED")))
        return faithful(body, number)

    def _run(self, partition: tuple[str, str]) -> tuple[str, list[str]]:
        fault = self.rng.choices(self.mix.faults, [RUN_FAULTS[f] for f in self.mix.faults])[0]
        self.log.actions[f"run fault: {fault}"] += 1
        llm = fault in ("llm_ok", "llm_500", "llm_garbage") and self.llm is not None
        self.set_env("CURATOR_LLM_ENABLED", "true" if llm else "false")
        if llm:
            self.set_env("CURATOR_LLM_BASE_URL", self.llm.url)
            for name, value in LLM_ENV.items():
                self.set_env(name, value)
            self._llm_mode = {"llm_ok": "ok", "llm_500": "500", "llm_garbage": "garbage"}[fault]
        mid_step = None
        if fault in ("kill_step", "kill_lease", "agent_mid_step"):
            # Some of the steps that write: the first of them to write is paused.
            steps = tuple(step for step in PAUSABLE_STEPS if self.rng.random() < 0.5) or PAUSABLE_STEPS
            kind = {"agent_mid_step": "agent_write"}.get(fault, fault)
            mid_step = MidStepFault(self.url, steps, kind, *partition,
                                    agent_write=lambda conn: self._mid_step_write(partition, conn))
        if mid_step is None:
            result = run_cycle(self.instance, *partition, run_config=RUN_CONFIG)
        else:
            with mid_step:
                result = run_cycle(self.instance, *partition, run_config=RUN_CONFIG)
        self.set_env("CURATOR_LLM_ENABLED", "false")
        self.history.append(result.run_id)
        description = f"run {result.run_id} of {partition}, fault {fault}" + (
            f" in {mid_step.outcome.step or 'no step (none of ' + ', '.join(mid_step.steps) + ' wrote)'}"
            if mid_step else "")
        if not result.success:
            self.log.outcomes["runs failed"] += 1
        return description, self._run_problems(result, fault, mid_step)

    def _mid_step_write(self, partition: tuple[str, str], conn: psycopg.Connection) -> None:
        """While a step holds its transaction open: an agent adds a memory and edits another.
        (A plain INSERT, as an agent writes: nothing that waits on the paused step's locks.)"""
        node_id, text = self._new_id(), self._sentence()
        conn.execute(
            "INSERT INTO memory_nodes (id, tenant_id, namespace, pointer_summary) VALUES (%s, %s, %s, %s)",
            (node_id, *partition, text),
        )
        self.record.wrote(node_id, partition, text)
        self._edit(partition, conn)

    def _run_problems(self, result, fault: str | None, mid_step: MidStepFault | None) -> list[str]:
        failures = [event for event in result.all_events if event.event_type_value == "STEP_FAILURE"]
        errors = [str(event.event_specific_data.error.message) for event in failures]
        fired = mid_step is not None and mid_step.outcome.fired
        if mid_step is not None:
            self.log.fired[f"{fault} {'fired' if fired else 'not reached'}"] += 1
        if fault in ("kill_step", "kill_lease") and fired:
            problems = [] if not result.success else [f"run {result.run_id} survived a {fault} as SUCCESS"]
            problems += self._writes_after(result.run_id, mid_step, only_paused=fault == "kill_step")
            if fault == "kill_lease" and not any("lost its lease" in message for message in errors):
                problems.append(f"run {result.run_id} lost its lease but no step said so: {errors}")
            return problems
        if not result.success:
            return [f"run {result.run_id} (fault {fault}) failed: {errors}"]
        if fault is None:
            # A clean run re-checked every supersession a changed successor no longer holds.
            checks = {check["name"]: check for check in self.db.execute(
                "SELECT metadata->'checks' FROM activity_log WHERE run_id = %s AND action = 'curation_cycle'",
                (result.run_id,)).fetchone()[0]}
            if not checks["supersessions_hold"]["passed"]:
                return [f"run {result.run_id}: {checks['supersessions_hold']['description']}"]
        return []

    def _writes_after(self, run_id: str, fault: MidStepFault, *, only_paused: bool) -> list[str]:
        """After a killed step: nothing of that step landed. After a killed lease: no later step
        of the run wrote anything (the paused step itself had proved its lease already)."""
        marks, paused = fault.outcome.marks, fault.outcome.step
        step_filter = "step = %(paused)s" if only_paused else "step <> %(paused)s"
        found = []
        for table in ("node_revisions", "graph_revisions"):
            count = self.db.execute(
                f"SELECT count(*) FROM {table} WHERE run_id = %(run)s AND id > %(mark)s AND {step_filter}",
                {"run": run_id, "mark": marks[table], "paused": paused},
            ).fetchone()[0]
            if count:
                found.append(f"run {run_id}: {count} {table} written after its {fault.kind} in {paused}")
        if not only_paused:
            signals = self.db.execute(
                "SELECT count(*) FROM training_signals WHERE run_id = %s AND id > %s",
                (run_id, marks["training_signals"]),
            ).fetchone()[0]
            if signals:
                found.append(f"run {run_id}: {signals} training signal(s) created after its lease was killed")
        return found

    # ------------------------------------------------------------------ imports and round trips

    def _import_racing_a_run(self, partition: tuple[str, str]) -> tuple[str, list[str]]:
        """Import new memories of `partition` (some archived into one of its active nodes, holding
        one of its sentences, as a merge leaves them) while a run of the partition starts right
        after the import has checked its merge targets and before it writes. An agent has just
        written a near-duplicate of that node, so the run is likely to merge it, either way."""
        rng, active = self.rng, self._active(partition)
        target = rng.choice(active) if active else None
        if target is not None:
            twin = node(*partition, f"{target[1]} {self._sentence()}", id=self._new_id(),
                        base_utility=round(rng.random(), 2))
            insert(self.db, twin)
            self.record.wrote(twin["id"], partition, twin["pointer_summary"])
        lines, written = [], []
        for _ in range(rng.randint(2, 6)):
            node_id = self._new_id()
            if target is not None and rng.random() < 0.6:
                keeper_id, keeper_text = target
                text = rng.choice(split_sentences(keeper_text))
                line = {"archived_at": "2024-01-01T00:00:00+00:00", "merged_into": keeper_id}
            else:
                text, line = self._sentence(), {}
            lines.append(json.dumps({"id": node_id, "tenant_id": partition[0], "namespace": partition[1],
                                     "pointer_summary": text, **line}))
            written.append((node_id, text, line.get("merged_into")))
        results: list = []
        threads: list[threading.Thread] = []
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "race.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            with open_connection(self.url) as conn:
                report = import_jsonl_file(conn, path, dimension=EMBEDDER.dimension, validate_name=validate_name,
                                           progress=self._racing_run(partition, results, threads))
        for thread in threads:
            thread.join()
        for node_id, text, keeper in written:
            if report.written:
                self.record.wrote(node_id, partition, text)
                if keeper is not None:
                    self.record.archived_into[node_id] = keeper
        self.log.actions["import races"] += 1
        problems = [f"import of {len(lines)} line(s) wrote nothing: {report.problems.first()}"] if not report.written else []
        if not results or not results[0].success:
            problems.append(f"the run racing the import failed: {results}")
        else:
            self.history.append(results[0].run_id)
            problems += [f"archived node {node_id} points at archived keeper {keeper} after a run raced its import"
                         for node_id, keeper in self.db.execute(
                             "SELECT a.id::text, k.id::text FROM memory_nodes a JOIN memory_nodes k ON k.id = a.merged_into"
                             " WHERE a.tenant_id = %s AND a.namespace = %s AND k.archived_at IS NOT NULL",
                             partition).fetchall()]
        run_id = results[0].run_id if results else "none"
        return f"import of {len(lines)} line(s) into {partition} racing run {run_id}", problems

    def _racing_run(self, partition: tuple[str, str], results: list, threads: list):
        """The import's progress hook: when it starts writing, a run of the partition starts (in
        `threads`, its result in `results`), and the import goes on once the run is waiting for
        it (on a lock) or is done. Nothing is timed: the deadline only stops a hang."""
        @contextmanager
        def progress(label: str, total):
            if label.startswith("importing"):
                thread = threading.Thread(target=lambda: results.append(
                    run_cycle(self.instance, *partition, run_config=RUN_CONFIG)))
                thread.start()
                threads.append(thread)
                deadline = time.monotonic() + 120
                while thread.is_alive() and time.monotonic() < deadline and not self._someone_waits():
                    time.sleep(0.01)
                self.log.fired["import race: the run " + ("waited for the import" if thread.is_alive()
                                                          else "finished first")] += 1
            yield _NoProgress()

        return progress

    def _someone_waits(self) -> bool:
        return self.db.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                               " AND datname = current_database()").fetchone()[0] > 0

    def _round_trip(self) -> tuple[str, list[str]]:
        """Export the whole store, import it into an empty second store, export that: the two
        exports must be the same, byte for byte."""
        copy_url = self._second_store()
        with open_connection(copy_url, autocommit=True) as copy:
            copy.execute("TRUNCATE memory_nodes, memory_access, namespace_activity, node_revisions, graph_vertices, graph_edges,"
                         " graph_revisions, training_signals, signal_revisions, activity_log, merge_vetoes, llm_cache CASCADE")
        with tempfile.TemporaryDirectory() as folder:
            first, again = Path(folder) / "first.jsonl", Path(folder) / "again.jsonl"
            _export(self.url, first)
            with open_connection(copy_url) as conn:
                report = import_jsonl_file(conn, first, dimension=EMBEDDER.dimension, validate_name=validate_name)
            _export(copy_url, again)
            exported, reexported = first.read_text(encoding="utf-8"), again.read_text(encoding="utf-8")
            rows = len(exported.splitlines())
        self.log.actions["round trips"] += 1
        problems = [] if report.written else [f"the export did not import: {report.problems.first()}"]
        if exported != reexported:
            problems.append("export -> import -> export changed the store's rows: "
                            + _first_difference(exported, reexported))
        return f"round trip of {rows} node(s) through a second store", problems

    def _second_store(self) -> str:
        parts = urlsplit(self.url)
        with open_connection(self.url, vector=False, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'soak_copy'").fetchone() is None:
                conn.execute("CREATE DATABASE soak_copy")
        return ensure_database(load_settings({"DATABASE_URL": parts._replace(path="/soak_copy").geturl()}))

    # ------------------------------------------------------------------ undos

    def _undo(self, target: str | None = None, *, force: bool | None = None,
              unwinding: bool = False) -> tuple[str, set, str | None]:
        """Undo `target` (default: the newest run or undo, or any earlier one; see Mix).
        Undos made while unwinding are not remembered: unwind and rewind cancel out (checked),
        so later undos and unwinds need not replay them."""
        if not self.history:
            return "undo: nothing run yet", set(), None
        if target is None:
            target = self.history[-1] if self.rng.random() < self.mix.newest_share else self.rng.choice(self.history)
        if force is None:
            force = self.rng.random() < self.mix.force_share
        how = f"undo{' --force' if force else ''} of {target}"
        acted_on = set(namespaces_changed_by(self.db, target))
        try:
            reports = undo_run(self.url, target, force=force)
        except NothingToUndoError:
            return f"{how}: nothing to undo", acted_on, None
        undo_id = reports[0].undo_id
        if not unwinding:
            self.history.append(undo_id)
        for report in reports:
            self.log.outcomes["rows forced"] += len(report.forced)
            self.log.outcomes["rows held back"] += len(report.held)
            self.log.outcomes["conflicts"] += len(report.conflicts)
        self.log.actions["unwinding undo" if unwinding else "undo --force" if force else "undo"] += 1
        self._last_held = {row["id"]: row for report in reports for row in report.held}
        left = [f"{row['id']} ({row['reason']}: {', '.join(row['nodes'])})" for report in reports for row in report.held]
        left += [f"{row['id']} (changed since: {', '.join(row['changed_since'])})"
                 for report in reports for row in report.conflicts]
        return f"{how} as {undo_id}" + (f", left alone: {'; '.join(left)}" if left else ""), acted_on, undo_id

    def unwind_and_rewind(self) -> None:
        """Undo every run and undo, newest first: the agents' last texts come back. Then undo
        those undos, newest first: the curated state comes back."""
        self.log.actions["unwind"] += 1
        curated = self._texts()
        keys = inv.row_keys(self.db)
        unwound = []
        # A keeper stays as a run left it when a node imported into it after the run started is
        # said only by what the run merged in: no import is undone (core/undo_links.py).
        kept_for_imports = set()
        for target in reversed(list(self.history)):
            self._last_held = {}
            description, _, undo_id = self._undo(target, force=False, unwinding=True)
            self.log.note(f"  unwind: {description}")
            if undo_id is not None:
                unwound.append(undo_id)
            kept_for_imports |= {node_id for node_id, hold in self._last_held.items()
                                 if hold["reason"] == "written_into_since"}
        self._fail_if(inv.not_as_agents_wrote(self.db, self.record, kept_for_imports), "undo every run, newest first")
        # A rewind may refuse to point a node across namespaces again: the curated state had such
        # a pointer only because an agent moved its keeper or successor after the curation (an
        # archived node keeps it: step 2 re-checks only active ones). Those rows alone may differ.
        across = set()
        for undo_id in reversed(unwound):
            self._last_held = {}  # an undo with nothing to undo holds nothing
            self.log.note(f"  rewind: {self._undo(undo_id, force=False, unwinding=True)[0]}")
            across |= {node_id for node_id, hold in self._last_held.items() if hold["reason"] in CROSSING_HOLDS}
        rewound = self._texts()
        self._fail_if([f"node {node_id}: {curated[node_id]} after the run(s), {rewound.get(node_id)} after undoing their undos"
                       for node_id in sorted(curated) if rewound.get(node_id) != curated[node_id] and node_id not in across],
                      "undo the undos of every run, newest first")
        self.check("unwind and rewind", set(PARTITIONS), keys, inv.partition_digests(self.db))

    def _texts(self) -> dict[str, tuple]:
        return {row[0]: tuple(row[1:]) for row in self.db.execute(
            "SELECT id::text, pointer_summary, archived_at IS NOT NULL, merged_into::text, confidence FROM memory_nodes"
        ).fetchall()}

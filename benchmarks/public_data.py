"""Public memory data written by others, turned into memories as an agent would store them.

Four datasets, each split into a development part and a held-out part (by conversation or
relation, fixed below; the held-out part's failures are never read while rules are written):

- **BEAM** (github.com/mohammadtavakoli78/BEAM, `chats/100K`): 20 long chats. Each chat's plan
  (`plan_new.txt`) lists, batch by batch, the facts the user states ("Tagged release v1.0.0 on
  April 20, ...", "Information Update: The number of commits ... has grown to 165", "Logical
  Contradiction: I have never ..."). An agent that extracts facts stores one memory per fact,
  without the plan's labels (the user never says "Information Update:"), dated by its batch's
  time anchor. The probing questions label what must come of them: `knowledge_update` names an
  original fact and the fact that updates it (the newer value must be current, the older one
  superseded), `contradiction_resolution` a statement the user contradicts (both must stay
  current, so that the agent can ask which is right: superseding either is wrong).
- **BEAM 500K** (the same repository, `chats/500K`): 35 other chats of the same making, each
  about five times as long (11,486 facts against 2,188), split the same way (chats 1-18 for
  development, 19-35 held out). More development data of BEAM's shape, and a second held-out
  part that no rule of this repository was written against.
- **BEAM 1M** (the same repository, `chats/1M`): 35 more chats of the same making, on other
  topics (no fact in common with the 500K or 100K chats), split the same way. Added at the tenth
  round, when every rule before it had been written: its held-out part is the first measure of
  rules that none of their authors could have tuned to it.
- **LoCoMo** (github.com/snap-research/locomo, `data/locomo10.zip`): 10 long conversations of
  two speakers. An agent that keeps the conversation stores each turn, "Speaker: text", dated by
  its session. Its questions name the turns that answer them (`evidence`): recall of those turns
  from `current_memory` must not get worse, and a turn of one speaker is never merged with or
  superseded by another speaker's.

- **MQuAKE** (github.com/princeton-nlp/MQuAKE, `prompts/`): a knowledge-update stream. Its
  relation prompts hold real Wikidata facts, a few per relation ("Which continent is India
  located in? A: Asia"), and its templates say each fact as a sentence ("India is located in the
  continent of Asia.", "The capital of Germany is Berlin."). The stream states every fact, then,
  as MQuAKE's edits do, a new value for every other one (another answer of the same relation),
  and for every fourth a third value after that: a chain. Each new value must supersede the one
  before it; a fact never edited, and the last value of each, must stay current. The recall
  probe asks the relation's question ("What is the capital of Germany?"). Split by relation.

Getting the data (not part of this repository; nothing of it is committed):

    git clone https://github.com/mohammadtavakoli78/BEAM DATA/BEAM
    git clone https://github.com/snap-research/locomo DATA/locomo
    (cd DATA/locomo/data && unzip locomo10.zip)
    git clone https://github.com/princeton-nlp/MQuAKE DATA/MQuAKE   # prompts/ only; no LFS needed
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

# The splits: fixed, by conversation. Development first, held out second.
BEAM_SPLITS = {"dev": [str(n) for n in range(1, 11)], "heldout": [str(n) for n in range(11, 21)]}
# BEAM's 500K chats: 35 other conversations of the same making, five times longer.
BEAM_500K_SPLITS = {"dev": [str(n) for n in range(1, 19)], "heldout": [str(n) for n in range(19, 36)]}
# BEAM's 1M chats: 35 more, on other topics; split as the 500K ones.
BEAM_1M_SPLITS = BEAM_500K_SPLITS
# Each BEAM dataset: its folder under chats/ and its splits.
BEAM_SETS = {"beam": ("100K", BEAM_SPLITS), "beam500k": ("500K", BEAM_500K_SPLITS), "beam1m": ("1M", BEAM_1M_SPLITS)}
LOCOMO_SPLITS = {"dev": ["26", "30", "41", "42", "43"], "heldout": ["44", "47", "48", "49", "50"]}
SPLITS = ("dev", "heldout")


@dataclass
class Memory:
    key: str  # unique within its dataset part
    namespace: str
    text: str
    created_at: datetime
    role: str = ""  # "update" (BEAM's Information Update), "contradiction", "" otherwise
    speaker: str = ""


@dataclass
class Probe:
    """A question and what its answer needs: `newest` must be top-1 of current_memory and not
    `outdated` (BEAM's knowledge updates); or `evidence` among the top 10 (LoCoMo)."""

    namespace: str
    question: str
    newest: str | None = None  # memory key
    outdated: str | None = None  # memory key
    evidence: list[str] = field(default_factory=list)


@dataclass
class Part:
    name: str  # "beam-dev", "locomo-heldout", ...
    memories: list[Memory]
    probes: list[Probe]
    updates: list[tuple[str, str]]  # (older key, newer key) that must end superseded
    keep_both: list[tuple[str, str]] = field(default_factory=list)  # pairs never superseded either way
    never_superseded: set[str] = field(default_factory=set)  # keys no supersession may involve
    stay_current: set[str] = field(default_factory=set)  # keys that may supersede but never be superseded
    # (older, newer) pairs a chain of updates makes right too (A -> C of A -> B -> C): not counted
    # as updates to supersede, but neither wrong nor "other" when superseded so.
    chained: set[tuple[str, str]] = field(default_factory=set)


# ----------------------------------------------------------------------------- BEAM


_BULLET = re.compile(r"^\s*•\s*\*\*(?P<label>[^*]+?):?\*\*:?\s*(?P<text>.+?)\s*$")
_LABEL_PREFIX = re.compile(r"^(?:[A-Z][A-Za-z &/-]{0,60}:)+\s*")


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("’", "'").replace("“", '"').replace("”", '"')
    return " ".join(text.split()).strip().rstrip(".").casefold()


def _without_label(text: str) -> str:
    """A reference as the probing questions quote it ("DevOps & Deployment Labels:Version
    Control: Tagged release ...") without the plan's labels."""
    return _LABEL_PREFIX.sub("", text).strip()


def _anchor(text: str) -> datetime | None:
    for form in ("%B %d, %Y", "%b %d, %Y", "%B %d %Y"):
        try:
            return datetime.strptime(text.strip().rstrip("."), form).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def beam_chat(root: Path, chat: str, prefix: str = "beam") -> tuple[list[Memory], dict]:
    """The memories of one BEAM chat (one namespace) and its probing questions."""
    namespace = f"{prefix}-{chat}"
    memories: list[Memory] = []
    when = datetime(2024, 1, 1, tzinfo=UTC)
    for line in (root / chat / "plan_new.txt").read_text(encoding="utf-8").splitlines():
        match = _BULLET.match(line)
        if match is None:
            continue
        label, text = match.group("label").strip(), match.group("text").strip()
        if label.startswith("Time Anchor"):
            when = _anchor(text) or when
            continue
        # Labels are the plan's, not the user's words: the memory is what the user said.
        text = _without_label(text)
        role = "update" if label.startswith("Information Update") else (
            "contradiction" if label.startswith("Logical Contradiction") else "")
        when += timedelta(minutes=10)
        memories.append(Memory(f"{namespace}/{len(memories)}", namespace, text, when, role))
    questions = json.loads((root / chat / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
    return memories, questions


def _find(memories: list[Memory], reference: str) -> Memory | None:
    wanted = _normal(_without_label(reference))
    exact = [m for m in memories if _normal(m.text) == wanted]
    if exact:
        return exact[0]
    scored = max(memories, key=lambda m: difflib.SequenceMatcher(None, _normal(m.text), wanted).ratio())
    return scored if difflib.SequenceMatcher(None, _normal(scored.text), wanted).ratio() >= 0.85 else None


def beam_part(root: Path, split: str, prefix: str = "beam") -> Part:
    memories, probes, updates, never = [], [], [], set()
    for chat in BEAM_SETS[prefix][1][split]:
        chat_memories, questions = beam_chat(root, chat, prefix)
        memories += chat_memories
        never |= {m.key for m in chat_memories if m.role == "contradiction"}
        for question in questions.get("knowledge_update", []):
            references = question.get("conversation_references") or []
            if len(references) < 2:
                continue
            older, newer = _find(chat_memories, references[0]), _find(chat_memories, references[-1])
            if older is None or newer is None or older is newer:
                continue
            updates.append((older.key, newer.key))
            probes.append(Probe(older.namespace, question["question"], newest=newer.key, outdated=older.key))
    return Part(f"{prefix}-{split}", memories, probes, updates, never_superseded=never)


# ----------------------------------------------------------------------------- LoCoMo


def _session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def locomo_part(root: Path, split: str) -> Part:
    """Each turn "Speaker: text" (a shared photo's caption in brackets), dated by its session."""
    folder = root / "data" / "multimodal_dialog" / "locomo10_v2"
    memories, probes = [], []
    for conversation in LOCOMO_SPLITS[split]:
        data = json.loads((folder / f"{conversation}.json").read_text(encoding="utf-8"))
        namespace = f"locomo-{conversation}"
        sessions = sorted((int(key.split("_")[1]), key) for key in data
                          if re.fullmatch(r"session_\d+", key) and isinstance(data[key], list))
        for _number, key in sessions:
            start = _session_time(data[f"{key}_date_time"])
            for n, turn in enumerate(data[key]):
                text = f"{turn['speaker']}: {turn['text'].strip()}"
                if turn.get("blip_caption"):
                    text += f" [shares {turn['blip_caption']}]"
                memories.append(Memory(f"{namespace}/{turn['dia_id']}", namespace, text,
                                       start + timedelta(seconds=30 * n), speaker=turn["speaker"]))
        known = {m.key for m in memories}
        for qa in data.get("qa", []):
            evidence = [f"{namespace}/{e.strip()}" for e in qa.get("evidence") or [] if f"{namespace}/{e.strip()}" in known]
            if evidence and qa.get("category") != 5:
                probes.append(Probe(namespace, qa["question"], evidence=evidence))
    return Part(f"locomo-{split}", memories, probes, updates=[])


# ----------------------------------------------------------------------------- MQuAKE


def _mquake_facts(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Per relation (Wikidata property), the (subject, answer) facts of its prompt, read back
    through its question template ("Which continent is [X] located in?")."""
    prompts = json.loads((root / "prompts" / "rel-prompts.json").read_text(encoding="utf-8"))
    questions = json.loads((root / "prompts" / "templates" / "question_templates.json").read_text(encoding="utf-8"))
    facts: dict[str, list[tuple[str, str]]] = {}
    for relation, block in prompts.items():
        if relation not in questions:
            continue
        pattern = re.compile("^" + re.escape(questions[relation]).replace(re.escape("[X]"), "(.+?)") + "$")
        for line in block.splitlines():
            qa = re.match(r"Q: (.*?) A: (.*)$", line.strip())
            subject = pattern.match(qa.group(1).strip()) if qa else None
            if subject is not None and qa.group(2).strip():
                facts.setdefault(relation, []).append((subject.group(1), qa.group(2).strip()))
    return facts


def _said(template: str, subject: str, value: str) -> str:
    text = template.replace("[X]", subject).replace("__", value)
    return text if text.endswith(".") else text + "."


def mquake_part(root: Path, split: str) -> Part:
    facts = _mquake_facts(root)
    cloze = json.loads((root / "prompts" / "templates" / "cloze_templates.json").read_text(encoding="utf-8"))
    questions = json.loads((root / "prompts" / "templates" / "question_templates.json").read_text(encoding="utf-8"))
    relations = sorted((r for r in facts if r in cloze), key=lambda r: int(r[1:]))
    mine = relations[0::2] if split == "dev" else relations[1::2]
    namespace = f"mquake-{split}"
    memories: list[Memory] = []
    when = datetime(2024, 1, 1, tzinfo=UTC)

    def write(text: str) -> str:
        nonlocal when
        when += timedelta(minutes=10)
        memories.append(Memory(f"{namespace}/{len(memories)}", namespace, text, when))
        return memories[-1].key

    edits: list[tuple[str, str, str, list[str]]] = []  # relation, subject, first value's key, new values
    seen: set[tuple[str, str]] = set()
    for relation in mine:
        rows = [(s, v) for s, v in facts[relation] if (s, v) not in seen and not seen.add((s, v))]
        subjects = [s for s, _ in rows]
        for n, (subject, value) in enumerate(rows):
            key = write(_said(cloze[relation], subject, value))
            if n % 2 or subjects.count(subject) > 1:
                continue  # never edited (a subject stated twice in one relation is two facts)
            others = list(dict.fromkeys(v for _, v in rows[n + 1:] + rows[:n] if v != value))
            edits.append((relation, subject, key, others[:2] if n % 4 == 0 else others[:1]))
    updates, chained, probes = [], set(), []
    for relation, subject, first, values in edits:
        chain = [first] + [write(_said(cloze[relation], subject, value)) for value in values]
        updates += list(zip(chain, chain[1:]))
        chained |= {(chain[a], chain[b]) for a in range(len(chain)) for b in range(a + 2, len(chain))}
        if len(chain) > 1:
            probes.append(Probe(namespace, questions[relation].replace("[X]", subject), newest=chain[-1], outdated=first))
    olders = {older for older, _ in updates}
    return Part(f"mquake-{split}", memories, probes, updates,
                stay_current={m.key for m in memories} - olders, chained=chained)


def parts(data: Path, splits: list[str], datasets: list[str]) -> list[Part]:
    found = []
    for split in splits:
        for prefix, (folder, _splits) in BEAM_SETS.items():
            if prefix in datasets:
                found.append(beam_part(data / "BEAM" / "chats" / folder, split, prefix))
        if "locomo" in datasets:
            found.append(locomo_part(data / "locomo" / "data", split))
        if "mquake" in datasets:
            found.append(mquake_part(data / "MQuAKE", split))
    return found

"""Plain-text rendering of a node's history for `curation-pipeline history`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from curation_pipeline.core.partition_keys import display_key, partition_key
from curation_pipeline.core.text import clip, normalise_sentence, split_sentences

# Columns worth showing in a change; bookkeeping (row_version, updated_at) is left out.
SHOWN_COLUMNS = (
    "pointer_summary", "embedding", "embedding_model", "confidence", "archived_at", "merged_into",
    "superseded_by", "valid_until", "recall_count", "last_recalled_at", "memory_type", "pinned",
    "base_utility", "heat",
)
_REASON_KEYS = ("similarity", "keeper_id", "absorbed_id", "method", "added_sentences",
                "omitted_sentences", "original_chars", "embedder", "replaces", "undo_of", "forced",
                "repointed_from", "repointed_to", "last_seen_at", "superseded_by",
                "superseded_by_from", "superseded_by_to",
                # The LLM path (llm_rewrite.py): which model, what the fact guard said, the cost.
                "model", "guard", "guard_reason", "llm_outcome", "llm_error", "llm_cached",
                "llm_input_tokens", "llm_output_tokens")


def _short(value, limit: int = 160) -> str:
    if value is None:
        return "∅"
    return clip(str(value), limit)


def describe_change(before: Mapping, after: Mapping) -> list[str]:
    lines = []
    for column in SHOWN_COLUMNS:
        old, new = before.get(column), after.get(column)
        if old == new:
            continue
        if column == "pointer_summary" and old is not None and new is not None:
            lines.extend(describe_rewrite(old, new))
        elif column == "embedding":
            lines.append(f"    embedding: {'cleared' if new is None else 'computed' if old is None else 'replaced'}")
        else:
            lines.append(f"    {column}: {_short(old)!s} -> {_short(new)!s}")
    return lines


def sentence_diff(old: str, new: str) -> tuple[list[str], list[str]]:
    """(sentences added, sentences dropped) by a rewrite, whole; compared as the merge compares
    them (case, spacing and trailing punctuation ignored), in the order they appear."""
    old_sentences, new_sentences = split_sentences(old), split_sentences(new)
    old_keys = {normalise_sentence(s) for s in old_sentences}
    new_keys = {normalise_sentence(s) for s in new_sentences}
    added = [s for s in new_sentences if normalise_sentence(s) not in old_keys]
    dropped = [s for s in old_sentences if normalise_sentence(s) not in new_keys]
    return added, dropped


def describe_rewrite(old: str, new: str) -> list[str]:
    """A text rewrite in full: the sentences it added and dropped, then the whole new text. Never
    cut, since the sentence a merge added is what a reader is looking for."""
    added, dropped = sentence_diff(old, new)
    lines = ["    pointer_summary:"]
    lines += [f"      + {sentence}" for sentence in added]
    lines += [f"      - {sentence}" for sentence in dropped]
    if not added and not dropped:
        lines.append("      (same sentences, reworded spacing or punctuation)")
    lines.append(f"      now: {new}")
    return lines


def format_search(text: str, nodes: Sequence[Mapping]) -> str:
    """`history --search`: one line per matching node, its id first, so a user can copy it."""
    if not nodes:
        return f"no memory node's text contains {text!r}"
    lines = [f"{len(nodes)} node(s) whose text contains {text!r}:"]
    for found in nodes:
        key = partition_key(found["tenant_id"], found["namespace"])
        lines.append(f"  {found['id']}  {found['status']:<10}  {key}  {_short(found['text'], 100)}")
    lines.append("see one with: curation-pipeline history NODE_ID")
    return "\n".join(lines)


def describe_reason(reason: Mapping) -> str:
    parts = []
    for key in _REASON_KEYS:
        if reason.get(key) not in (None, False):
            value = reason[key]
            parts.append(f"{key}={value:.4f}" if isinstance(value, float) else f"{key}={value}")
    return ", ".join(parts)


def describe_coverage(reason: Mapping) -> list[str]:
    """Why a merge or summary left words out: what says each clause the text no longer repeats,
    the sentences a fuller one replaced, the clauses a summary left out, the values an update
    changed (coverage.py, supersession.py)."""
    lines = []
    for entry in reason.get("covered") or ():
        how = entry.get("how", "")
        if entry.get("similarity") is not None:
            how += f" {entry['similarity']:.2f}"
        lines.append(f"    said already: {entry['clause']!r} by {entry.get('covered_by')!r} ({how})")
    for entry in reason.get("said_as") or ():
        # An aligned LLM answer: the words it claimed for an input clause, checked by the guard.
        lines.append(f"    said as: {entry['clause']!r} -> {entry.get('said_as')!r}")
    for entry in reason.get("replaced") or ():
        lines.append(f"    replaced: {entry['sentence']!r} by {entry['by']!r}")
    for entry in reason.get("left_out") or ():
        lines.append(f"    left out: {entry['clause']!r}")
    for entry in reason.get("changes") or ():
        lines.append(f"    updated: {', '.join(entry.get('changed', []))}: {entry['old']!r} -> {entry['new']!r}")
    return lines


def describe_recall(recall: Mapping) -> str:
    """How often and when the node was recalled: its stored columns plus the accesses `recall`
    recorded beside it (which never bump its row_version)."""
    total = recall["stored_count"] + recall["accessed_count"]
    moments = [moment for moment in (recall["stored_last"], recall["accessed_last"]) if moment is not None]
    last = f", last {max(moments):%Y-%m-%d %H:%M:%S}" if moments else ""
    return (f"  recalled {total} time{'' if total == 1 else 's'} ({recall['stored_count']} stored,"
            f" {recall['accessed_count']} recorded by recall){last}")


def describe_now(now: Mapping) -> list[str]:
    """The node as it is now: where, its status (and what it points at), its whole text."""
    status = now["status"]
    if status == "merged":
        status += f" into {now['merged_into']}"
    elif status == "superseded":
        status += f" by {now['superseded_by']}"
    extras = [word for word, on in (("pinned", now.get("pinned")),
                                    (f"confidence {now.get('confidence')}", now.get("confidence") not in (None, "default")))
              if on]
    lines = [f"  now: {status} in {display_key(now['tenant_id'], now['namespace'])}"
             + (f" ({', '.join(extras)})" if extras else ""),
             f"  text: {now['text']}"]
    if now.get("versions"):
        # The fact's versions, oldest first: which is current, and what came before.
        lines.append("  versions, oldest first:")
        for version in now["versions"]:
            here = "  (this node)" if version["id"] == now["id"] else ""
            state = "current" if version["status"] == "live" else version["status"]
            lines.append(f"    {version['id']}  {state}{here}: {version['text']}")
    return lines


def format_history(node_id: str, revisions: Sequence[Mapping], merged: Sequence[Mapping],
                   now: Mapping | None = None, recall: Mapping | None = None) -> str:
    """The node as it is now (`now`) and how often it was recalled (`recall`), then every change
    the curator made to it, oldest first, then the nodes merged into it."""
    lines = [f"node {node_id}", *(describe_now(now) if now is not None else [])]
    if recall is not None:
        lines.append(describe_recall(recall))
    if revisions:
        lines.append("changes, oldest first:")
    if not revisions:
        lines.append("  the curator never changed it")
    for revision in revisions:
        lines.append(
            f"  {revision['created_at']:%Y-%m-%d %H:%M:%S} run {revision['run_id']}  step {revision['step']}"
        )
        why = describe_reason(revision.get("reason") or {})
        if why:
            lines.append(f"    why: {why}")
        lines.extend(describe_coverage(revision.get("reason") or {}))
        lines.extend(describe_change(revision["before"], revision["after"]) or ["    (no visible change)"])
    if merged:
        lines.append("merged into it:")
        for entry in merged:
            now = entry["merged_into_now"]
            state = "" if now == node_id else " (merge since undone)" if now is None else f" (now merged into {now})"
            why = describe_reason(entry.get("reason") or {})
            lines.append(f"  {entry['id']} run {entry['run_id']}{state}: {entry['text']}")
            if why:
                lines.append(f"    why: {why}")
    return "\n".join(lines)

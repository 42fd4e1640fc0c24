"""Plain-text rendering of what `curation-pipeline recall` found (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from curation_pipeline.core.text import clip


def _when(moment) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment is not None else "never"


def format_recall(key: str, question: str, found: Sequence, *, embedder: str) -> str:
    """One block per memory, best first: id, type, confidence, similarity, recall so far, its
    text, and the older memories it superseded (left out of recall, shown here)."""
    if not found:
        return (f"{key}: no current memory with a vector of {embedder} to recall for {question!r}"
                " (nodes without a vector are embedded by the next cycle's step 4)")
    lines = [f"{key}: {len(found)} memor{'y' if len(found) == 1 else 'ies'} for {question!r}"
             f" (embedder {embedder}; not recorded as an access)"]
    for rank, memory in enumerate(found, start=1):
        lines.append(
            f"{rank}. {memory.id}  similarity {memory.similarity:.3f}  {memory.memory_type}, {memory.confidence}"
            f", recalled {memory.recall_count} time{'' if memory.recall_count == 1 else 's'}"
            f" (last {_when(memory.last_recalled_at)}), written {_when(memory.created_at)}")
        lines.append(f"   {clip(memory.text, 500)}")
        for older in memory.supersedes:
            lines.append(f"   supersedes {older.id}: {clip(older.text or '', 200)}")
    return "\n".join(lines)

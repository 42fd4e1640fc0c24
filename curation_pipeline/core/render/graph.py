"""Plain-text rendering of a node's graph neighbourhood for `curation-pipeline graph`."""

from __future__ import annotations

from collections.abc import Mapping

from curation_pipeline.core.partition_keys import display_key
from curation_pipeline.core.text import clip


def _short(text: str | None, limit: int = 120) -> str:
    return clip(text or "", limit)


def format_neighbourhood(node_id: str, view: Mapping) -> str:
    vertex = view["vertex"]
    state = "archived" if vertex["archived"] else "active"
    lines = [
        f"node {node_id} ({display_key(vertex['tenant_id'], vertex['namespace'])}, {state}, heat {vertex['heat']:g}"
        + (", pinned" if vertex["pinned"] else "") + ")",
        f"  {_short(vertex['summary'])}",
    ]
    keepers = [e for e in view["edges"] if e["label"] == "merged_into" and e["source"] == node_id]
    ancestors = [e for e in view["edges"] if e["label"] == "merged_into" and e["target"] == node_id]
    others = [e for e in view["edges"] if e["label"] != "merged_into"]
    for edge in keepers:
        lines.append(f"keeper: {edge['target']}  {_short(edge['other_summary'])}")
    if ancestors:
        lines.append("merged into it:")
        lines += [f"  {edge['source']}  {_short(edge['other_summary'])}" for edge in ancestors]
    if others:
        lines.append("associations:")
        for edge in others:
            other = edge["target"] if edge["source"] == node_id else edge["source"]
            similarity = (edge["properties"] or {}).get("similarity")
            detail = f" (similarity {similarity:.3f})" if isinstance(similarity, (int, float)) else ""
            lines.append(f"  {edge['label']} {other}{detail}  {_short(edge['other_summary'])}")
    if not (keepers or ancestors or others):
        lines.append("no edges")
    return "\n".join(lines)

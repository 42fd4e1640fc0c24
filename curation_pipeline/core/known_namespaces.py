"""Which requested namespaces are unknown, and the one line that says so (pure).

A namespace is known when it holds memory or the operator made it (discovery lists both, see
store/triggers.py), or when Dagster already has it as a partition. Anything else is most likely
a typo: running it would register a partition for good, so `run` refuses it unless `--create`.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence

LISTED = 10  # known namespaces named in the error; more would bury the line


class UnknownNamespaceError(ValueError):
    """A namespace the store and Dagster do not know (the CLI prints it as one line, exit 2)."""


def unknown_keys(requested: Sequence[str], known: Collection[str]) -> list[str]:
    return [key for key in requested if key not in known]


def unknown_namespace_message(unknown: Sequence[str], known: Collection[str],
                              retired: Collection[str] = (), *, to_curate: bool = True) -> str:
    """The one line that refuses `unknown`: the known ones listed (so a typo is seen at once);
    `to_curate` (`run`) adds how to curate a new namespace anyway."""
    removed = [key for key in unknown if key in retired]
    typos = [key for key in unknown if key not in retired]
    parts = []
    if typos:
        # The closest first: a typo's namespace is seen at once, however many are known.
        names = sorted(known, key=lambda key: (-max(difflib.SequenceMatcher(None, key, typo).ratio() for typo in typos),
                                               key))
        listed = ", ".join(names[:LISTED]) + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")
        parts.append(f"unknown namespace {', '.join(typos)} (no memory, not a partition); "
                     + (f"known: {listed}" if names else "none is known yet"))
    if removed:
        parts.append(f"namespace {', '.join(removed)} was removed (`namespaces remove`; its memory is kept)")
    return "; ".join(parts) + ("; pass --create to curate it as a namespace" if to_curate else "")


def unknown_for_removal(key: str, known: Collection[str]) -> str | None:
    """Why `namespaces remove KEY` cannot remove it, or None."""
    return None if key in known else f"unknown namespace {key}: nothing to remove"

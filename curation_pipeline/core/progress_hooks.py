"""How long work reports its progress without knowing who shows it. Pure.

The import service and the demo seeding count rows through a ``ProgressFactory``; the command
line passes ``cli/progress.Progress`` (a bar on a terminal, plain lines otherwise), everything
else gets ``no_progress``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

__all__ = ["Advance", "ProgressFactory", "no_progress"]


class Advance(Protocol):
    def advance(self, count: int = 1) -> None: ...


ProgressFactory = Callable[[str, "int | None"], AbstractContextManager[Advance]]
"""``progress(label, total)``: a context manager whose ``advance(n)`` counts ``n`` more rows done
(``total`` is ``None`` when it is not known in advance)."""


class _Silent:
    def advance(self, count: int = 1) -> None:
        pass


def no_progress(_label: str, _total: int | None = None) -> AbstractContextManager[Advance]:
    return nullcontext(_Silent())

"""The problems an import found: all of them counted, the first few kept to print. Pure.

A file with a million bad lines (say, vectors of the wrong width) must not need a million error
objects in memory, nor print them: ``ProblemLog`` keeps the bad line numbers (``--skip-invalid``
needs every one), a count, and the ``keep`` problems with the lowest line numbers, whatever order
they were found in (each line is checked alone first, the rules between lines afterwards).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from itertools import count

from curation_pipeline.core.jsonl_rows import LineError

__all__ = ["ProblemLog"]


class ProblemLog:
    def __init__(self, keep: int = 50) -> None:
        self.keep = keep
        self.count = 0
        self.bad_lines: set[int] = set()
        self.by_column: Counter[str | None] = Counter()  # how many of them each column has
        self._order = count()
        # A max-heap (by line, then order found) of the lowest-numbered problems seen so far.
        self._first: list[tuple[int, int, LineError]] = []

    def add(self, errors: Iterable[LineError]) -> None:
        for error in errors:
            self.count += 1
            self.by_column[error.column] += 1
            self.bad_lines.add(error.line)
            entry = (-error.line, -next(self._order), error)
            if len(self._first) < self.keep:
                heapq.heappush(self._first, entry)
            elif entry > self._first[0]:
                heapq.heapreplace(self._first, entry)

    def first(self) -> list[LineError]:
        """The kept problems, by line (a line's problems in the order they were found)."""
        return [error for _, _, error in sorted(self._first, reverse=True)]

    @property
    def not_shown(self) -> int:
        return self.count - len(self._first)

    def __bool__(self) -> bool:
        return self.count > 0

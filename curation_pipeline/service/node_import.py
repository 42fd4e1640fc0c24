"""Import a JSONL file of memory nodes: check every line, then write all of it or nothing.

A million-line import never holds the file in memory, and parses each line once:

1. **Check.** The file is read once, line by line. Each line is validated on its own
   (``core/jsonl_rows.py``); a valid row is set aside in a spool file (a temporary file, the
   vector as float32) and only the few fields the rules between lines need stay in memory, for
   lines with an id or a ``merged_into``. Then the rules between lines and against the store
   (``core/import_links.py``: ids, merge targets, keeper chains). Every problem is counted; the
   first ones are kept to print.
2. **Write.** Unless there was a problem (and ``skip_invalid`` was not asked for), the spooled
   rows of the accepted lines are streamed into one COPY, in the same transaction as the store
   checks. What is written is exactly what was checked, even if the file changes meanwhile.
"""

from __future__ import annotations

import pickle
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from curation_pipeline.core.import_links import NodeLink, check_links
from curation_pipeline.core.import_problems import ProblemLog
from curation_pipeline.core.jsonl_rows import (
    MEMORY_NODE_COLUMNS,
    NameValidator,
    ParsedLine,
    RowContext,
    parse_line,
)
from curation_pipeline.core.progress_hooks import Advance, ProgressFactory, no_progress
from curation_pipeline.store.nodes_io import load_links, write_nodes

__all__ = ["ImportReport", "import_jsonl_file"]

_REPORT_EVERY = 1000


@dataclass
class ImportReport:
    """What an import found and did. ``written`` is false when it wrote nothing (problems
    without ``skip_invalid``)."""

    path: Path
    problems: ProblemLog
    warnings: ProblemLog = field(default_factory=ProblemLog)  # imported as they are, but named
    checked_lines: int = 0
    imported: int = 0
    written: bool = False
    skipped_lines: set[int] = field(default_factory=set)


def import_jsonl_file(
    conn: psycopg.Connection,
    path: Path,
    *,
    dimension: int,
    validate_name: NameValidator,
    skip_invalid: bool = False,
    keep_problems: int = 50,
    progress: ProgressFactory = no_progress,
    now: datetime | None = None,
) -> ImportReport:
    """Check ``path`` and import it (see the module docstring); ``OSError`` if it cannot be read.

    With problems and without ``skip_invalid`` nothing is written (``report.written`` is false);
    with ``skip_invalid`` exactly the lines with a problem are left out.
    """
    context = RowContext(dimension, validate_name)
    report = ImportReport(path, ProblemLog(keep_problems), ProblemLog(keep_problems))
    links: list[NodeLink] = []
    invalid_ids: dict[uuid.UUID, int] = {}

    with _Spool() as spool:
        with progress(f"checking {path.name}", None) as bar:
            for parsed in _parsed_lines(path, context, bar):
                report.checked_lines += 1
                if parsed.errors:
                    report.problems.add(parsed.errors)
                    if parsed.named_id is not None:
                        invalid_ids.setdefault(parsed.named_id, parsed.line)
                    continue
                row = parsed.row
                spool.add(parsed.line, row)
                if row["id"] is not None or row["merged_into"] is not None or row["superseded_by"] is not None:
                    links.append(NodeLink.of_row(parsed.line, row))

        with conn.transaction():
            stored = load_links(conn, _ids_to_look_up(links))
            checked = check_links(links, stored, invalid_lines=invalid_ids)
            link_errors = checked.errors
            report.problems.add(link_errors)
            report.warnings.add(checked.warnings)
            del links, stored, checked
            if report.problems and not skip_invalid:
                return report
            report.skipped_lines = report.problems.bad_lines
            refused = {error.line for error in link_errors}  # the spool holds only valid lines
            with progress(f"importing {path.name}", spool.count - len(refused)) as bar:
                rows = (row for line, row in spool.rows() if line not in refused)
                report.imported = write_nodes(conn, rows, now=now or datetime.now(UTC), on_rows=bar.advance)
            report.written = True
    return report


class _Spool:
    """Valid rows set aside between the check and the write, in an anonymous temporary file
    (the system removes it even if the process dies). Only this process reads what it wrote.

    A row is stored as its values in column order, with the vector as its float32 bytes and the
    ids as their 16 bytes: about a third of the time pickle takes for the row as it is.
    """

    def __enter__(self) -> _Spool:
        self._file = tempfile.TemporaryFile(prefix="curation-import-")
        self.count = 0
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def add(self, line: int, row: dict[str, Any]) -> None:
        values = [row[column] for column in MEMORY_NODE_COLUMNS]
        for index in _UUID_INDEXES:
            if values[index] is not None:
                values[index] = values[index].bytes
        if values[_EMBEDDING_INDEX] is not None:
            values[_EMBEDDING_INDEX] = np.asarray(values[_EMBEDDING_INDEX], dtype=np.float32).tobytes()
        pickle.dump((line, values), self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += 1

    def rows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        self._file.seek(0)
        while True:
            try:
                line, values = pickle.load(self._file)
            except EOFError:
                return
            for index in _UUID_INDEXES:
                if values[index] is not None:
                    values[index] = uuid.UUID(bytes=values[index])
            if values[_EMBEDDING_INDEX] is not None:
                values[_EMBEDDING_INDEX] = np.frombuffer(values[_EMBEDDING_INDEX], dtype=np.float32)
            yield line, dict(zip(MEMORY_NODE_COLUMNS, values))


_UUID_INDEXES = tuple(MEMORY_NODE_COLUMNS.index(column) for column in ("id", "merged_into", "superseded_by"))
_EMBEDDING_INDEX = MEMORY_NODE_COLUMNS.index("embedding")


def _parsed_lines(path: Path, context: RowContext, bar: Advance) -> Iterator[ParsedLine]:
    """Every non-blank line of ``path``, parsed, counted on ``bar``; lines are read as bytes and
    decoded one by one (an undecodable line is that line's error)."""
    pending = 0
    with path.open("rb") as handle:
        for line_number, line in enumerate(handle, start=1):
            parsed = parse_line(line_number, line, context)
            if parsed is None:  # a blank line: not a row
                continue
            pending += 1
            if pending == _REPORT_EVERY:
                bar.advance(pending)
                pending = 0
            yield parsed
    if pending:
        bar.advance(pending)


def _ids_to_look_up(links: list[NodeLink]) -> Iterator[uuid.UUID]:
    seen: set[uuid.UUID] = set()
    for link in links:
        for node_id in (link.id, link.merged_into, link.superseded_by):
            if node_id is not None and node_id not in seen:
                seen.add(node_id)
                yield node_id


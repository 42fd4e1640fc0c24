"""Progress of long command-line work: a live bar on a terminal, plain lines otherwise.

`run --all` over many namespaces, and `import`, `seed` and `export` of large inputs, show how
far they got while they work. On a terminal that is a tqdm bar on standard error (tqdm comes with
Dagster); when standard error is a file or a pipe (CI logs, `2> log`), a bar would be noise, so
a plain line is written every `every_secs` seconds and once at the end.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from tqdm import tqdm


class Progress:
    """Counts work done out of an (optional) total; `failed` counts failures among it.

    Use as a context manager; `advance(n)` after each piece of work.
    """

    def __init__(self, label: str, *, total: int | None = None, unit: str = "item",
                 stream: TextIO | None = None, every_secs: float = 5.0) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.every_secs = every_secs
        self.done = 0
        self.failed = 0
        self._started = time.monotonic()
        self._last_line = self._started
        self._bar = None
        self._written: tuple[int, int] | None = None  # (done, failed) of the last plain line
        # `run` launches runs in threads, each noting its start: one line at a time.
        self._lock = threading.Lock()
        if _is_terminal(self.stream):
            self._bar = tqdm(total=total, desc=label, unit=f" {unit}", file=self.stream,
                             dynamic_ncols=True, leave=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def advance(self, count: int = 1, *, failed: int = 0) -> None:
        self.done += count
        self.failed += failed
        if self._bar is not None:
            self._bar.update(count)
            if self.failed:
                self._bar.set_postfix_str(f"{self.failed} failed", refresh=False)
            return
        now = time.monotonic()
        if now - self._last_line >= self.every_secs:
            self._last_line = now
            self._write_line()

    def note(self, message: str) -> None:
        """A line of its own (a run started), above the bar on a terminal without breaking it;
        safe from several threads."""
        with self._lock:
            if self._bar is not None:
                self._bar.write(message, file=self.stream)
            else:
                self.stream.write(message + "\n")
                self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._written != (self.done, self.failed):  # the last line already says it all
            self._write_line()

    def line(self) -> str:
        """`label: done/total unit (rate), N failed, elapsed` as one plain line."""
        elapsed = self.elapsed
        of_total = f"/{self.total}" if self.total is not None else ""
        failed = f", {self.failed} failed" if self.failed else ""
        return (f"{self.label}: {self.done}{of_total} {self.unit}(s) ({rate_text(self.done, elapsed, self.unit)})"
                f"{failed}, {elapsed:.1f} s elapsed")

    def _write_line(self) -> None:
        print(self.line(), file=self.stream, flush=True)
        self._written = (self.done, self.failed)


def rate_text(done: int, elapsed: float, unit: str) -> str:
    """The rate in the unit that reads: rows go by thousands a second, namespaces by a few a
    minute, where "/s" would print "0.0/s"."""
    if done <= 0 or elapsed <= 0:
        return "none done yet"
    per_second = done / elapsed
    if per_second >= 1:
        return f"{per_second:,.1f}/s"
    if per_second * 60 >= 1:
        return f"{per_second * 60:,.1f}/min"
    return f"{elapsed / done:,.0f} s per {unit}"


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())

"""What the CLI's error output must be: one line, never a traceback."""

from __future__ import annotations


def one_line_error(err: str) -> str:
    """The single non-blank line of `err` (fails the test on a traceback or more lines)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]

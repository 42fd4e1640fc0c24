"""A benchmark script imported as a module, for the tests that check its data and its output
(benchmarks/ is not a package: each benchmark runs as a script from its own folder)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@contextmanager
def benchmark_module(script: str) -> Iterator[ModuleType]:
    """benchmarks/`script`, imported by path for the duration of the block."""
    name = f"benchmark_{Path(script).stem}"
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)

"""The layers of docs/architecture.md, as imports: the command line reaches the store only
through service/, and nothing in core/ imports a database, Dagster or an HTTP client."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "curation_pipeline"


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _offending(layer: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    found = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        bad = sorted(name for name in _imports(path) if name.startswith(forbidden))
        if bad:
            found[str(path.relative_to(PACKAGE))] = bad
    return found


def test_the_command_line_reaches_the_store_only_through_service():
    assert _offending("cli", ("curation_pipeline.store",)) == {}


def test_core_imports_no_database_dagster_or_http_client():
    assert _offending("core", ("psycopg", "dagster", "openai", "httpx", "curation_pipeline.store",
                               "curation_pipeline.service", "curation_pipeline.defs")) == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "sample.py"
    module.write_text("def f():\n    from curation_pipeline.store.database import open_connection\n")
    assert _imports(module) == {"curation_pipeline.store.database"}

"""Imports only go downward: SDK <- connectors <- rareindex <- workers, and SDK <- fake web.

The walk parses every module's imports (no execution) and fails on any that reaches up a layer,
or on SQLAlchemy / dramatiq imported where they do not belong. The fake web
(``rareindex_fakeweb``) stands beside the SDK: it may use the SDK, nothing of the index or the
workers, and the SDK never imports it; the index imports it only inside the functions that serve
it (the demo, ``rareindex fakeweb``), never at module level.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LAYERS = {
    "sdk": REPO / "packages/connectors/rareindex_connectors",
    "fakeweb": REPO / "packages/fakeweb/rareindex_fakeweb",
    "connectors": REPO / "connectors",
    "rareindex": REPO / "packages/rareindex/rareindex",
    "workers": REPO / "workers",
}
# What each layer must never import (top-level module names).
FORBIDDEN = {
    "sdk": {
        "rareindex",
        "rareindex_fakeweb",
        "workers",
        "connectors",
        "sqlalchemy",
        "alembic",
        "dramatiq",
        "psycopg",
    },
    "fakeweb": {
        "rareindex",
        "workers",
        "connectors",
        "sqlalchemy",
        "alembic",
        "dramatiq",
        "psycopg",
    },
    "connectors": {
        "rareindex",
        "rareindex_fakeweb",
        "workers",
        "sqlalchemy",
        "alembic",
        "dramatiq",
        "psycopg",
    },
    "rareindex": {"workers", "connectors", "dramatiq"},
    "workers": {"connectors"},
}
# Inside rareindex, only storage (and the migration environment) talks to the database library.
SQLALCHEMY_ALLOWED = {REPO / "packages/rareindex/rareindex/storage"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_no_layer_imports_upward(layer: str) -> None:
    files = python_files(LAYERS[layer])
    if layer != "connectors":  # connectors/ may legitimately be empty of code
        assert files, f"no Python files found for layer {layer}"
    offences = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in files
        for name in sorted(imported_modules(path))
        if name.split(".")[0] in FORBIDDEN[layer]
    ]
    assert offences == []


def test_only_storage_imports_sqlalchemy() -> None:
    offences = [
        str(path.relative_to(REPO))
        for path in python_files(LAYERS["rareindex"])
        if not any(path.is_relative_to(allowed) for allowed in SQLALCHEMY_ALLOWED)
        and any(n.split(".")[0] in {"sqlalchemy", "alembic"} for n in imported_modules(path))
    ]
    assert offences == []


def module_level_imports(path: Path) -> set[str]:
    """The modules a file imports when it is imported: outside any function body."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        pending.extend(ast.iter_child_nodes(node))
    return names


@pytest.mark.parametrize("layer", ["rareindex", "workers"])
def test_the_index_imports_the_fake_web_only_inside_functions(layer: str) -> None:
    offences = [
        str(path.relative_to(REPO))
        for path in python_files(LAYERS[layer])
        if any(n.split(".")[0] == "rareindex_fakeweb" for n in module_level_imports(path))
    ]
    assert offences == []


def test_the_walk_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from rareindex.storage import new_id\nimport sqlalchemy.orm\n")
    assert {"rareindex.storage", "sqlalchemy.orm"} <= imported_modules(bad)


def test_the_module_level_walk_skips_function_bodies(tmp_path: Path) -> None:
    lazy = tmp_path / "lazy.py"
    lazy.write_text(
        "import os\nclass A:\n    def f(self):\n        import rareindex_fakeweb\n"
        "def g():\n    from rareindex_fakeweb.sites import catalog\n"
    )
    assert module_level_imports(lazy) == {"os"}
    assert {"rareindex_fakeweb", "rareindex_fakeweb.sites"} <= imported_modules(lazy)

"""Imports only go downward: SDK <- connectors <- rareindex <- workers.

The walk parses every module's imports (no execution) and fails on any that reaches up a layer,
or on SQLAlchemy / dramatiq imported where they do not belong.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LAYERS = {
    "sdk": REPO / "packages/connectors/rareindex_connectors",
    "connectors": REPO / "connectors",
    "rareindex": REPO / "packages/rareindex/rareindex",
    "workers": REPO / "workers",
}
# What each layer must never import (top-level module names).
FORBIDDEN = {
    "sdk": {"rareindex", "workers", "connectors", "sqlalchemy", "alembic", "dramatiq", "psycopg"},
    "connectors": {"rareindex", "workers", "sqlalchemy", "alembic", "dramatiq", "psycopg"},
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


def test_the_walk_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from rareindex.storage import new_id\nimport sqlalchemy.orm\n")
    assert {"rareindex.storage", "sqlalchemy.orm"} <= imported_modules(bad)

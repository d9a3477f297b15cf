"""Imports go downward: SDK <- adapters <- connectors <- rareindex <- workers; SDK <- fake web.

The walk parses every module's imports (no execution) and fails on any that reaches up a layer,
or on SQLAlchemy / dramatiq imported where they do not belong. The adapters (``rareindex_adapters``,
the parsing kits and the config-only store connectors) are built on the SDK, which never imports
them. The fake web
(``rareindex_fakeweb``) stands beside the SDK: it may use the SDK, nothing of the index or the
workers, and the SDK never imports it; the index imports it only inside the functions that serve
it (the demo, ``rareindex fakeweb``), never at module level.

Across packages only public names travel: no ``pkg._private`` module and no ``_name`` is imported
from another package (bench included), so each package's public surface is the whole contract.
Production code (the index and the workers) never imports the test suite, nor the SDK's test
helpers at module level; only the function that serves the fake web imports ``serve_asgi``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LAYERS = {
    "sdk": REPO / "packages/connectors/rareindex_connectors",
    "adapters": REPO / "packages/adapters/rareindex_adapters",
    "fakeweb": REPO / "packages/fakeweb/rareindex_fakeweb",
    "connectors": REPO / "connectors",
    "rareindex": REPO / "packages/rareindex/rareindex",
    "workers": REPO / "workers",
}
# What each layer must never import (top-level module names).
FORBIDDEN = {
    "sdk": {
        "rareindex",
        "rareindex_adapters",
        "rareindex_fakeweb",
        "workers",
        "connectors",
        "sqlalchemy",
        "alembic",
        "dramatiq",
        "psycopg",
    },
    "adapters": {
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


# Our packages, by import name, and the trees that import them (bench is a consumer only).
PACKAGES = {
    "rareindex_connectors": LAYERS["sdk"],
    "rareindex_adapters": LAYERS["adapters"],
    "rareindex_fakeweb": LAYERS["fakeweb"],
    "connectors": LAYERS["connectors"],
    "rareindex": LAYERS["rareindex"],
    "workers": LAYERS["workers"],
    "bench": REPO / "bench",
}
OURS = {"rareindex_connectors", "rareindex_adapters", "rareindex_fakeweb", "rareindex", "workers"}
# Imports of another package's private module or name that stay until a restructure moves them
# (issue 20, item 2 or 3): (importing file, imported module). Empty: nothing waits.
PRIVATE_ALLOWED: set[tuple[str, str]] = set()
# Production files that may import the SDK's test helpers, inside a function only.
LAZY_TEST_HELPERS = {"packages/rareindex/rareindex/cli/_fakeweb.py"}


def imports_with_names(path: Path) -> list[tuple[str, str | None, bool]]:
    """``(module, imported name or None, inside a function)`` for every absolute import."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, str | None, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, None, in_function) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.extend((node.module, alias.name, in_function) for alias in node.names)
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return found


def private_imports(path: Path, own: str) -> list[str]:
    """Imports in ``path`` (of package ``own``) of another package's private module or name."""
    offences = []
    for module, name, _ in imports_with_names(path):
        parts = module.split(".")
        if parts[0] not in OURS or parts[0] == own:
            continue
        private_module = any(p.startswith("_") and not p.startswith("__") for p in parts[1:])
        private_name = name is not None and name.startswith("_") and not name.startswith("__")
        if private_module or private_name:
            offences.append(f"{module}" + (f" ({name})" if private_name else ""))
    return offences


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_package_imports_another_package_s_private_modules(package: str) -> None:
    offences = [
        f"{path.relative_to(REPO)} imports {what}"
        for path in python_files(PACKAGES[package])
        for what in private_imports(path, package)
        if (str(path.relative_to(REPO)), what.split(" ")[0]) not in PRIVATE_ALLOWED
    ]
    assert offences == []


@pytest.mark.parametrize("layer", ["rareindex", "workers"])
def test_production_code_imports_no_test_helpers(layer: str) -> None:
    offences = []
    for path in python_files(LAYERS[layer]):
        where = str(path.relative_to(REPO))
        for module, _, in_function in imports_with_names(path):
            suite = module.split(".")[0] == "tests"
            helpers = module.split(".")[:2] == ["rareindex_connectors", "testing"]
            if suite or (helpers and not (in_function and where in LAZY_TEST_HELPERS)):
                offences.append(f"{where} imports {module}")
    assert offences == []


def test_the_private_walk_catches_private_modules_and_names(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from rareindex_connectors._router import Router\n"
        "import rareindex_fakeweb.sites._web\n"
        "from rareindex.cli import _common\n"
        "from rareindex_connectors.records import Listing\n"
        "from .._private import x\n"
        "def f():\n    from tests.cli_helpers import run\n"
    )
    across = ["rareindex_connectors._router", "rareindex_fakeweb.sites._web"]
    assert private_imports(bad, "rareindex") == across  # its own private names are its own
    assert private_imports(bad, "bench") == [*across, "rareindex.cli (_common)"]
    assert ("tests.cli_helpers", "run", True) in imports_with_names(bad)


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

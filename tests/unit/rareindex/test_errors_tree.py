"""The tree drawn in ``rareindex.errors``' docstring is the app's whole error tree: it cannot drift.

Every exception class of ``rareindex.errors``, and every subclass of ``RareIndexError`` anywhere in
``rareindex`` or ``workers``, is drawn under its own parent, with the module it lives in.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import rareindex
import rareindex.errors
import workers
from rareindex.errors import RareIndexError

LINE = re.compile(r"^(?P<indent> *)(?P<name>[A-Z]\w*)(?:\s+\[(?P<module>[\w.]+)\])?")


def _drawn() -> dict[str, tuple[str | None, str]]:
    """name -> (drawn parent, module) from the docstring's code block."""
    doc = rareindex.errors.__doc__ or ""
    block = doc.split("```", 2)[1]
    tree: dict[str, tuple[str | None, str]] = {}
    stack: list[tuple[int, str]] = []
    for line in block.strip("\n").splitlines():
        match = LINE.match(line)
        assert match, f"not a tree line: {line!r}"
        depth = len(match["indent"]) // 2
        del stack[depth:]
        parent = stack[-1][1] if stack else None
        module = f"rareindex.{match['module']}" if match["module"] else "rareindex.errors"
        assert match["name"] not in tree, f"{match['name']} drawn twice"
        tree[match["name"]] = (parent, module)
        stack.append((depth, match["name"]))
    return tree


def _app_subclasses() -> dict[str, type[BaseException]]:
    for package in (rareindex, workers):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
    found: dict[str, type[BaseException]] = {}
    todo: list[type[BaseException]] = [RareIndexError]
    while todo:
        cls = todo.pop()
        if cls.__module__.split(".")[0] in {"rareindex", "workers"}:
            found[cls.__name__] = cls
        todo.extend(cls.__subclasses__())
    return found


def test_the_docstring_draws_every_exception_class_of_the_module() -> None:
    defined = {
        name
        for name, obj in inspect.getmembers(rareindex.errors, inspect.isclass)
        if issubclass(obj, BaseException) and obj.__module__ == "rareindex.errors"
    }
    assert defined <= set(_drawn()), f"not drawn: {sorted(defined - set(_drawn()))}"


def test_the_docstring_draws_the_whole_app_tree_each_class_under_its_parent() -> None:
    drawn, real = _drawn(), _app_subclasses()
    assert set(drawn) == set(real), (
        f"not drawn: {sorted(set(real) - set(drawn))}; "
        f"drawn but not defined: {sorted(set(drawn) - set(real))}"
    )
    for name, (parent, module) in drawn.items():
        cls = real[name]
        assert cls.__module__ == module, f"{name} lives in {cls.__module__}, drawn in {module}"
        bases = [b.__name__ for b in cls.__bases__ if issubclass(b, RareIndexError)]
        assert bases == ([parent] if parent else []), f"{name} is drawn under {parent}: {bases}"


def test_api_errors_and_outages_are_part_of_the_tree() -> None:
    from sqlalchemy.exc import OperationalError

    from rareindex.api.errors import ApiError
    from rareindex.errors import DatabaseUnavailable
    from rareindex.storage.engine import OperationalOutage

    assert issubclass(ApiError, RareIndexError)
    assert issubclass(OperationalOutage, DatabaseUnavailable)
    assert issubclass(OperationalOutage, OperationalError)  # still what SQLAlchemy raised


def test_storage_translates_an_outage_and_the_crawl_still_calls_it_database() -> None:
    import pytest
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    from rareindex.crawl import failure_reason
    from rareindex.errors import DatabaseUnavailable
    from rareindex.storage import make_engine

    engine = make_engine("sqlite://")
    with pytest.raises(DatabaseUnavailable) as caught, engine.connect() as conn:
        conn.execute(text("SELECT * FROM no_such_table"))
    assert isinstance(caught.value, OperationalError)
    assert str(caught.value).startswith("(sqlite3.OperationalError) no such table: no_such_table")
    assert failure_reason(caught.value) == "database"

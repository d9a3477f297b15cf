"""Every docstring example of the SDK, the fake web, the index and the workers runs, and passes.

One case per module: :class:`doctest.DocTestFinder` collects the module's examples (its docstring,
and those of the functions and classes it defines), :class:`doctest.DocTestRunner` runs them with
``ELLIPSIS | NORMALIZE_WHITESPACE``, and a failure shows the doctest report. Log lines are captured,
not compared with the examples' output. An example that needs
a live server or database is marked ``# doctest: +SKIP`` on each of its lines.
"""

from __future__ import annotations

import doctest
import functools
import importlib
import io
from pathlib import Path

import pytest
import structlog

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {  # import name -> its directory
    "rareindex_connectors": REPO / "packages/connectors/rareindex_connectors",
    "rareindex_adapters": REPO / "packages/adapters/rareindex_adapters",
    "rareindex_fakeweb": REPO / "packages/fakeweb/rareindex_fakeweb",
    "rareindex": REPO / "packages/rareindex/rareindex",
    "workers": REPO / "workers",
}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    names = []
    for package, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__main__":
                continue  # runs its program on import
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join((package, *parts)))
    return names


MODULES = _modules()


@functools.cache
def _run(name: str) -> tuple[doctest.TestResults, str]:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = io.StringIO()
    with structlog.testing.capture_logs():  # log lines are not an example's output
        for test in finder.find(module, name):
            runner.run(test, out=out.write)
    return doctest.TestResults(runner.failures, runner.tries), out.getvalue()


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_the_module_pass(name: str) -> None:
    results, report = _run(name)
    assert results.failed == 0, f"{results.failed} of {results.attempted} failed:\n{report}"


def test_examples_run_at_all() -> None:
    """Not vacuous: the modules' examples add up to far more than a handful."""
    attempted = sum(_run(name)[0].attempted for name in MODULES)
    assert len(MODULES) > 200
    assert attempted > 250, attempted

"""The ``rareindex`` command line. ``main`` is the console-script entry point.

Also public, for the workers' commands and the benchmarks: what every command uses (the rich
consoles :data:`console` and :data:`errors`, :func:`database`, :func:`settings_of`),
:func:`fake_web_settings`, which serves the local fake web for a command, and :func:`register`,
with which the fleet's layer adds its commands. Each name is imported on first use, and each
command's module when the command runs (:mod:`rareindex.cli.lazy`), so ``rareindex`` starts
without loading what the command at hand does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._common import console, database, errors, settings_of
    from ._fakeweb import fake_web_settings
    from .program import app, main, register

__all__ = [
    "app",
    "console",
    "database",
    "errors",
    "fake_web_settings",
    "main",
    "register",
    "settings_of",
]

_MODULE_OF = {
    "app": "program",
    "console": "_common",
    "database": "_common",
    "errors": "_common",
    "fake_web_settings": "_fakeweb",
    "main": "program",
    "register": "program",
    "settings_of": "_common",
}


if not TYPE_CHECKING:  # type checkers see the imports above, and so refuse a name not listed

    def __getattr__(name: str) -> Any:
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)

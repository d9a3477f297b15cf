"""The ``rareindex`` command line. ``main`` is the console-script entry point.

Also public, for the workers' commands and the benchmarks: what every command uses (the rich
consoles :data:`console` and :data:`errors`, :func:`database`, :func:`settings_of`) and
:func:`fake_web_settings`, which serves the local fake web for a command.
"""

from ._common import console, database, errors, settings_of
from ._fakeweb import fake_web_settings
from .app import app, main

__all__ = ["app", "console", "database", "errors", "fake_web_settings", "main", "settings_of"]

"""The ``rareindex`` command line. ``main`` is the console-script entry point."""

from .app import app, main

__all__ = ["app", "main"]

"""The full ``rareindex`` command: the index's commands plus the fleet's processes.

``rareindex worker``, ``rareindex scheduler``, ``rareindex deadletters requeue`` and ``rareindex
api`` (with the broker's requeue) are the fleet's (:mod:`workers.fleet_cmd`); every other
command is :mod:`rareindex.cli`'s. Each is registered by name and imported when it runs. The
console script ``rareindex`` points at :func:`main`.
"""

from __future__ import annotations

from rareindex.cli import app, register
from rareindex.cli import main as run_app

__all__ = ["app", "main"]

for _name in ("worker", "scheduler", "deadletters", "api"):
    register(_name, f"workers.fleet_cmd:{_name}")


def main() -> None:
    """Console-script entry point."""
    run_app()

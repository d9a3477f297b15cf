"""The processes the tests start: their environment, and how a ``python -m`` one is started.

Every test that runs a real process (``python -m workers ...``, a fleet worker, a one-line
``python -c``) gives it :func:`subprocess_env`, so that what such a process sees is decided here
and nowhere else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
"""The checkout (``tests/`` is one level down)."""

PYTHONPATH_DIRS = (
    REPO / "packages/connectors",
    REPO / "packages/adapters",
    REPO / "packages/fakeweb",
    REPO / "packages/rareindex",
    REPO,
)
"""What pytest's ``pythonpath`` (pyproject.toml) puts on ``sys.path``, in the same order."""


def subprocess_env(
    extra: Mapping[str, str] | None = None, *, first: Iterable[str | Path] = ()
) -> dict[str, str]:
    """The environment of a process a test starts: a copy of ``os.environ`` without any ``RI_*``
    variable, ``PYTHONPATH`` set to ``first`` then :data:`PYTHONPATH_DIRS`, then ``extra``
    added (it wins over both).

    Why: pytest's ``pythonpath`` setting changes only the test process's ``sys.path``, so a child
    is given the same directories on ``PYTHONPATH``: it imports this checkout's packages (also
    without an editable install) and the ``tests`` package (``python -m tests.integration.x``).
    Inherited ``RI_*`` settings (a developer's ``RI_DATABASE_URL``, CI's ``RI_TEST_*``) are
    dropped, so the process is configured only by what the test passes in ``extra``. ``first``
    is for directories that must come before the packages, such as a directory holding a
    ``sitecustomize.py`` (tests/faults/loopback_only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RI_")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (*first, *PYTHONPATH_DIRS))
    env.update(extra or {})
    return env


def start_module(
    module: str, *args: str, env: Mapping[str, str] | None = None, stdin: bool = False
) -> subprocess.Popen[str]:
    """``python -m MODULE ARGS`` from the checkout, with ``env`` (default
    :func:`subprocess_env`), stdout and stderr piped as text, and stdin piped too when ``stdin``
    (a worker that prints ``ready`` and waits for the test's line, as
    ``tests.integration.fetch_helpers.wait_for_start`` does). The caller reads the pipes (or
    ``communicate()``s) and waits for the process."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        env=dict(env) if env is not None else subprocess_env(),
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

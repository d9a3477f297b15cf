"""Run the real ``rareindex`` entry point in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.subprocess_env import REPO, subprocess_env

__all__ = ["REPO", "invoke_cli", "run_cli"]


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m rareindex ARGS`` with ``env`` added to a copy of the environment minus RI_*
    (:func:`tests.subprocess_env.subprocess_env`)."""
    return subprocess.run(
        [sys.executable, "-m", "workers", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(env),
        cwd=cwd or REPO,
        timeout=timeout,
        check=False,
    )


def invoke_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``rareindex ARGS`` through the same entry point (``workers.cli.main``) in this process, for
    a test of what a command prints and its exit status where the process itself is not what is
    tested: about 1 CPU-second of imports less than :func:`run_cli` per call.

    As :func:`run_cli`: the environment minus RI_* plus ``env``, the repository as the working
    directory, stdout and stderr captured apart, SystemExit as the exit status (an uncaught
    exception prints its traceback and gives 1, as the interpreter would). What the command
    changes in the process is put back afterwards: the environment, the working directory, the
    logging and structlog configuration it sets up (configure_logging), the signal handlers; and
    every engine the command made (``make_engine``) is disposed of, as its process's exit would
    close its connections (an open one would hold locks a later reset of the database waits
    for)."""
    import contextlib
    import io
    import logging
    import signal
    import traceback
    from unittest import mock

    import structlog

    import rareindex.storage.engine
    from workers.cli import main

    made: list[Any] = []
    create_engine = rareindex.storage.engine.create_engine

    def tracked(*positional: Any, **keywords: Any) -> Any:
        made.append(engine := create_engine(*positional, **keywords))
        return engine

    saved_env = dict(os.environ)
    saved_argv = sys.argv
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    saved_structlog = structlog.get_config()
    saved_signals = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    out, err = io.StringIO(), io.StringIO()
    code: int = 0
    try:
        os.environ.clear()
        os.environ.update({k: v for k, v in saved_env.items() if not k.startswith("RI_")})
        os.environ.update(env or {})
        sys.argv = ["rareindex", *args]
        with (
            mock.patch.object(rareindex.storage.engine, "create_engine", tracked),
            contextlib.chdir(cwd or REPO),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                main()
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    code = 1
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        for engine in made:
            engine.dispose()
        os.environ.clear()
        os.environ.update(saved_env)
        sys.argv = saved_argv
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        structlog.configure(**saved_structlog)
        for number, handler in saved_signals.items():
            signal.signal(number, handler)
    return subprocess.CompletedProcess(["rareindex", *args], code, out.getvalue(), err.getvalue())

"""Run the real ``rareindex`` entry point in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m rareindex ARGS`` with ``env`` added to a copy of the environment minus RI_*."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("RI_")}
    paths = [
        REPO / "packages/connectors",
        REPO / "packages/adapters",
        REPO / "packages/fakeweb",
        REPO / "packages/rareindex",
        REPO,
    ]
    full_env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)  # also without an install
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "workers", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or REPO,
        timeout=timeout,
        check=False,
    )

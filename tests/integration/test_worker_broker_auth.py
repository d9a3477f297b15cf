"""A worker whose ``RI_BROKER_URL`` carries credentials the real Redis refuses exits at once with
status 2 and one line naming the fix, instead of logging CRITICAL forever."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from tests.cli_helpers import run_cli


def test_a_wrong_broker_password_ends_the_worker_with_status_2(
    redis_url: str, pg_url: str, tmp_path: Path
) -> None:
    parts = urlsplit(redis_url)
    wrong = f"redis://nobody:wrong-password@{parts.hostname}:{parts.port or 6379}/0"
    env = {"RI_DATABASE_URL": pg_url, "RI_DATA_DIR": str(tmp_path)}
    assert run_cli("db", "upgrade", env=env).returncode == 0  # ready to work, but for the broker
    done = run_cli("worker", env={**env, "RI_BROKER_URL": wrong}, timeout=30)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the broker refused the credentials")
    assert "wrong-password" not in done.stderr  # the secret is never printed

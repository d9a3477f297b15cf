"""The CLI against real PostgreSQL: migrate, maintain partitions, and the demo's census."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from rareindex.storage import head_revision
from tests.cli_helpers import run_cli

HEAD = head_revision()


def test_demo_and_db_commands_on_postgres(pg_url: str, pg_engine: Engine, tmp_path: Path) -> None:
    env = {"RI_DATABASE_URL": pg_url, "RI_DATA_DIR": str(tmp_path)}
    demo = run_cli("demo", env=env)
    assert demo.returncode == 0, demo.stderr
    assert "embedded mode (PostgreSQL 127.0.0.1:5432/" in demo.stdout
    assert f"schema: empty -> {HEAD}" in demo.stdout
    # every raw record normalizes; the 68 WooCommerce variable products give no record of their
    # own (their 204 variations do) and are not counted as failures
    assert "(0 failed, 68 with no record of their own)" in demo.stdout
    # raw_records, sales and price_observations: DEFAULT + 5 monthly partitions each
    assert (
        next(line for line in demo.stdout.splitlines() if "│ raw_records " in line)
        .split("│")[3]
        .strip()
        == "6"
    )
    assert (
        "partitions created: 3" in run_cli("db", "maintain", "--months-ahead", "4", env=env).stdout
    )
    assert (
        "partitions created: 0" in run_cli("db", "maintain", "--months-ahead", "4", env=env).stdout
    )

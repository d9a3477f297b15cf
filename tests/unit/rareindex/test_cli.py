"""The ``rareindex`` command as a user runs it: a subprocess, real files, real SQLite."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from rareindex import __version__
from rareindex.storage import head_revision
from tests.cli_helpers import run_cli
from tests.unit.rareindex.test_registry import CONNECTOR, write

HEAD = head_revision()


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"rareindex {__version__}"


def test_db_upgrade_current_downgrade(tmp_path: Path) -> None:
    env = {"RI_DATA_DIR": str(tmp_path)}
    assert (
        f"current base (empty), head {HEAD}: run `rareindex db upgrade`"
        in run_cli("db", "current", env=env).stdout
    )
    assert run_cli("db", "upgrade", env=env).stdout.strip() == f"database at revision {HEAD}"
    assert (tmp_path / "rareindex.db").exists()
    assert f"current {HEAD}, head {HEAD}: up to date" in run_cli("db", "current", env=env).stdout
    assert "partitions created: 0" in run_cli("db", "maintain", env=env).stdout
    down = run_cli("db", "downgrade", "base", env=env)
    assert down.returncode == 0 and "base (empty)" in down.stdout


def test_demo_prints_the_real_registry_and_database(tmp_path: Path) -> None:
    connectors_dir = tmp_path / "connectors"
    write(connectors_dir, "api/coin-shop.py", CONNECTOR.format(slug="coin-shop", refresh="HOT"))
    env = {"RI_DATA_DIR": str(tmp_path), "RI_CONNECTORS_DIR": str(connectors_dir)}
    first = run_cli("demo", env=env)
    assert first.returncode == 0, first.stderr
    assert "embedded mode (SQLite" in first.stdout and "no broker" in first.stdout
    assert f"schema: empty -> {HEAD}" in first.stdout
    assert "registry: 1 connectors" in first.stdout
    assert "fake web: " in first.stdout and "hosts on http://127.0.0.1:" in first.stdout
    assert "Runs (1)" in first.stdout and "coin-shop" in first.stdout
    assert "What the database holds" in first.stdout and "connector_runs" in first.stdout
    second = run_cli("demo", env=env)
    assert f"schema: {HEAD} -> {HEAD}" in second.stdout
    listed = run_cli("connectors", "list", env=env)
    assert "coin-shop" in listed.stdout and "active" in listed.stdout
    assert "Coin Shop & Co" in listed.stdout
    assert "│ 2    │" in listed.stdout  # two runs recorded, one per demo


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        (
            {"RI_DATABASE_URL": "mysql://db/x"},
            ("db", "current"),
            "error: RI_DATABASE_URL: scheme 'mysql' is not supported; use postgresql+psycopg://",
        ),
        (
            {"RI_DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:9/none"},
            ("db", "upgrade"),
            "error: cannot reach the database at postgresql+psycopg://postgres@127.0.0.1:9/none",
        ),
        (
            {"RI_CONNECTORS_DIR": "/nonexistent/connectors"},
            ("connectors", "list"),
            "error: connectors directory /nonexistent/connectors does not exist",
        ),
    ],
)
def test_fixable_errors_are_one_line_without_traceback(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    result = run_cli(*args, env={"RI_DATA_DIR": str(tmp_path), **env})
    assert result.returncode == 2
    assert result.stderr.startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_connector_file_with_a_typo_is_named(tmp_path: Path) -> None:
    connectors_dir = tmp_path / "connectors"
    path = write(
        connectors_dir,
        "api/coin-shop.py",
        CONNECTOR.format(slug="coin-shop", refresh="HOT").replace("engines=", "engins="),
    )
    write(connectors_dir, "api/good-shop.py", CONNECTOR.format(slug="good-shop", refresh="HOT"))
    result = run_cli(
        "connectors",
        "list",
        env={"RI_DATA_DIR": str(tmp_path), "RI_CONNECTORS_DIR": str(connectors_dir)},
    )
    assert result.returncode == 2
    assert "good-shop" in result.stdout  # the healthy connector is still listed
    assert result.stderr.startswith(f"error: {path}: ")
    assert "engins: unknown key (did you mean 'engines'?)" in result.stderr
    assert "Traceback" not in result.stderr


def test_scheduler_resend_after_reaches_the_scheduler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rareindex scheduler --resend-after 45``: a queued run whose message was lost is sent
    again after 45 s, not the default 30 minutes (the option reaches the Scheduler)."""
    from datetime import timedelta

    from typer.testing import CliRunner

    import workers.cli
    import workers.fleet_cmd

    seen: dict[str, object] = {}

    class Captured:
        def __init__(self, *args: object, **kwargs: object) -> None:
            seen.update(kwargs)

        def run_forever(self, stop: object, interval_s: float) -> None:
            seen["interval_s"] = interval_s

    monkeypatch.setattr(workers.fleet_cmd, "Scheduler", Captured)
    # In-process: keep the process's logging as it is (the runner's output stream closes after
    # the command, and later tests in this worker would log into it).
    app_module = importlib.import_module("rareindex.cli.program")  # the module, not the Typer app
    monkeypatch.setattr(app_module, "configure_logging", lambda *a, **k: None)
    for name in [n for n in os.environ if n.startswith("RI_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("RI_DATA_DIR", str(tmp_path))
    assert run_cli("db", "upgrade", env={"RI_DATA_DIR": str(tmp_path)}).returncode == 0
    result = CliRunner().invoke(
        workers.cli.app, ["scheduler", "--interval", "5", "--resend-after", "45"]
    )
    assert result.exit_code == 0, result.output
    assert seen["resend_after"] == timedelta(seconds=45) and seen["interval_s"] == 5


def test_the_command_starts_without_loading_what_its_command_does_not_need() -> None:
    """``rareindex`` imports a command's module when the command runs: starting the program
    (``--version``, or building the full command with the fleet's commands) loads no database
    library, no API, no resolver and no broker; a group of commands loads its own module only."""
    import subprocess
    import sys

    heavy = ("sqlalchemy", "fastapi", "uvicorn", "rapidfuzz", "dramatiq", "rareindex.pricing")
    probe = (
        "import sys, workers.cli\n"
        "from typer.testing import CliRunner\n"
        "result = CliRunner().invoke(workers.cli.app, {args!r})\n"
        "assert result.exit_code == 0, result.output\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m.startswith('rareindex.cli.')))\n"
    )

    def loaded(*args: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", probe.format(args=list(args))],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return out.splitlines()

    started, modules = loaded("--version")
    assert started == "[]"
    assert "rareindex.cli.crawl_cmd" not in modules and "rareindex.cli.db_cmd" not in modules
    _, modules = loaded("fx", "--help")
    assert "rareindex.cli.fx_cmd" in modules and "rareindex.cli.crawl_cmd" not in modules


def test_help_lists_every_command_the_program_registers() -> None:
    from typer.testing import CliRunner

    import workers.cli

    result = CliRunner().invoke(workers.cli.app, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name in ("crawl", "db", "connectors", "deadletters", "worker", "scheduler", "api", "fx"):
        assert f" {name} " in result.output, name

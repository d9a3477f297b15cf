"""``rareindex index build|show`` on a small stored market (embedded SQLite), in process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rareindex.cli import app
from rareindex.storage import make_engine, upgrade
from tests.pricing_helpers import seed_market


def test_build_then_show_the_index_an_estimate_and_a_ladder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("RI_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("RI_DATA_DIR", str(tmp_path))
    # the root callback would point structlog at this runner's stdout, closed after the test
    monkeypatch.setattr(sys.modules["rareindex.cli.program"], "configure_logging", lambda _: None)
    engine = make_engine(f"sqlite:///{tmp_path / 'rareindex.db'}")
    upgrade(engine)
    ids = seed_market(engine)
    engine.dispose()
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.output

    code, out = run("index", "show")
    assert code == 1 and "run `rareindex index build`" in out

    code, out = run("index", "build", "--base", "2025-01-06")
    assert code == 0, out
    assert "left out: 1 anomaly, 1 lot" in out
    assert "1 derived" in out and "1 indices" in out

    code, out = run("index", "show")
    assert "category:sports" in out and "2025-01-06" in out

    code, out = run("index", "show", "category:sports")
    assert code == 0, out
    assert "100.00" in out and "base" in out and "wls" in out

    code, out = run("index", "show", "--variant", ids["busy"])
    assert code == 0 and "USD" in out and "direct" in out

    code, out = run("index", "show", "--asset", ids["asset"])
    assert code == 0 and "PSA 10" in out and "derived from" in out

    code, out = run("index", "show", "--basket", "ast_1,ast_2")
    assert code == 0 and "basket of 2 assets" in out and "median" in out  # 6 pairs a week

    code, out = run("index", "show", "set:nope")
    assert code == 1 and "no index 'set:nope'" in out

"""Write the report into a directory: :func:`write_report`."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import structlog

from ..storage import Engine
from ._data import load_report
from ._page import render_report

__all__ = ["write_report"]

log = structlog.get_logger(__name__)


def write_report(
    engine: Engine,
    out_dir: Path,
    *,
    currency: str = "USD",
    top: int = 5,
    database: str = "",
    now: datetime | None = None,
) -> Path:
    """Read the database and write ``out_dir/index.html`` (the directory is created; the page
    replaces the previous one atomically). Returns the page's absolute path.

    Raises:
        ConfigError: an unknown ``currency`` or a negative ``top``.
    """
    started = time.perf_counter()
    data = load_report(engine, currency=currency, top=top, now=now, database=database)
    page = render_report(data)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "index.html"
    partial = out_dir / ".index.html.partial"
    partial.write_text(page, encoding="utf-8")
    os.replace(partial, target)
    log.info(
        "report.written",
        path=str(target.resolve()),
        assets=len(data.assets),
        currency=data.currency,
        elapsed_ms=int((time.perf_counter() - started) * 1000),
    )
    return target.resolve()

"""``rareindex report``: write the static HTML report of what the database holds.

The page (one ``index.html``, no server, nothing fetched) shows coverage, connector health and
price-history charts of the most-traded assets; see docs/report.md. The command prints the
page's path and nothing else, so ``xdg-open "$(rareindex report)"`` works.

Example:
    $ rareindex report                          # -> <data_dir>/data/report/index.html
    $ rareindex report --currency EUR --top 10 --out /tmp/report
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from ..registry import Registry
from ..settings import Settings
from ..storage import Engine
from ..storage.report_queries import REPORT_CURRENCIES
from ._common import console, describe_database, migrated_database, settings_of
from ._fakeweb import fake_web_settings

__all__ = ["default_report_dir", "demo_report", "report"]


def default_report_dir(settings: Settings) -> Path:
    """``<data_dir>/data/report``: beside the blobs, inside the git-ignored ``data/``."""
    return settings.data_dir / "data" / "report"


def _currency(value: str) -> str:
    upper = value.upper()
    if upper not in REPORT_CURRENCIES:
        raise typer.BadParameter(f"choose one of {', '.join(REPORT_CURRENCIES)}")
    return upper


def report(
    ctx: typer.Context,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Directory to write index.html into (default: <data_dir>/data/report).",
            file_okay=False,
        ),
    ] = None,
    currency: Annotated[
        str,
        typer.Option(
            "--currency",
            callback=_currency,
            help=f"Currency of the price charts, at the ECB rate of each sale's date: "
            f"{', '.join(REPORT_CURRENCIES)}.",
        ),
    ] = "USD",
    top: Annotated[
        int, typer.Option("--top", min=0, help="How many of the most-traded assets to chart.")
    ] = 5,
) -> None:
    """Write a static HTML report (coverage, connector health, price-history charts of the
    most-traded assets) and print the path of its index.html; see docs/report.md."""
    settings = settings_of(ctx)
    engine = migrated_database(settings)
    from ..report import write_report

    path = write_report(
        engine,
        out if out is not None else default_report_dir(settings),
        currency=currency,
        top=top,
        database=describe_database(settings),
    )
    typer.echo(str(path))


def demo_report(engine: Engine, settings: Settings, registry: Registry) -> Path:
    """The demo's last step: check every connector's health against the fake web (so the
    report's health table is real), write the report and print its path."""
    with fake_web_settings(settings) as (local, _), console.status("checking connector health…"):
        from ..health_check import run_health

        snapshots = asyncio.run(run_health(engine, local, registry))
    states = Counter(s.status for s in snapshots)
    console.print("health: " + (", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "-"))
    started = time.perf_counter()
    from ..report import write_report

    path = write_report(
        engine,
        default_report_dir(settings),
        database=describe_database(settings),
    )
    console.print(
        f"report: {path} (written in {time.perf_counter() - started:.1f} s; "
        "open it in a browser, no server needed)"
    )
    return path

"""``rareindex demo``: crawl the local fake web end to end on the embedded default and print it.

It migrates the database, starts the fake web on 127.0.0.1 (collectibles sites and misbehaving
hosts, one server, many host names), points the connectors' host names at it (``connect_to``:
URLs, policies and gates keep the names), crawls every registered connector with progress bars,
and prints the runs and what the database now holds. Nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import os

import typer
from rich.table import Table

from .._version import __version__
from ..logging import configure_logging
from ..registry import load_registry
from ..storage import current_revision, head_revision, upgrade
from ..storage.census import partitions, table_counts
from ._common import console, database, describe_database, settings_of
from ._fakeweb import fake_web_settings
from .connectors_cmd import report_problems
from .crawl_cmd import crawl_connectors, summary_table


def demo(ctx: typer.Context) -> None:
    """Migrate, serve the fake web, crawl every connector, print runs and tables."""
    from rareindex_connectors.testing import FAKE_HOSTS

    settings = settings_of(ctx)
    if "RI_LOG_LEVEL" not in os.environ:  # the tables tell the story; logs only for warnings
        configure_logging(settings.model_copy(update={"log_level": "warning"}))
    broker = (settings.broker_url and "broker configured") or "no broker"
    console.print(
        f"[bold]RareIndex {__version__}[/] — {settings.mode} mode "
        f"({describe_database(settings)}, {broker})"
    )
    engine = database(settings)
    before = current_revision(engine)
    upgrade(engine, migrations_dir=settings.migrations_dir)
    head = head_revision(migrations_dir=settings.migrations_dir)
    console.print(f"schema: {before or 'empty'} -> {current_revision(engine)} (head {head})")

    registry = load_registry(settings.connectors_dir)
    console.print(f"registry: {len(registry)} connectors under {settings.connectors_dir}")
    report_problems(registry)

    with fake_web_settings(settings) as (local, base_url):
        console.print(f"fake web: {len(FAKE_HOSTS)} hosts on {base_url}")
        summaries = asyncio.run(crawl_connectors(local, engine))
    console.print(summary_table(summaries, title=f"Runs ({len(summaries)})"))

    with engine.connect() as conn:
        counts = table_counts(conn)
        parts = partitions(conn)
    table = Table("table", "rows", "partitions", title="What the database holds")
    for name, rows in counts.items():
        if rows or name in parts:
            table.add_row(name, str(rows), str(len(parts[name])) if name in parts else "")
    console.print(table)
    empty = sorted(name for name, rows in counts.items() if not rows and name not in parts)
    console.print(f"empty until later stages run: {', '.join(empty)}")

"""``rareindex demo``: crawl the local fake web end to end on the embedded default and print it.

It migrates the database, starts the fake web on 127.0.0.1 (collectibles sites and misbehaving
hosts, one server, many host names), points the connectors' host names at it (``connect_to``:
URLs, policies and gates keep the names), crawls every registered connector with progress bars,
and prints the runs and what the database now holds. Nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter

import typer
from rich.table import Table

from rareindex_connectors import NormalizedRecord, ParseError

from .._version import __version__
from ..logging import configure_logging
from ..registry import Registry, load_registry
from ..settings import Settings
from ..storage import BlobStore, Engine, RawRecordStore, current_revision, head_revision, upgrade
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
    console.print(collected_table(engine, registry, settings))

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


def collected_table(engine: Engine, registry: Registry, settings: Settings) -> Table:
    """What the crawl collected: each connector's stored raw records replayed through its
    ``normalize()`` (no fetching), counted by record kind, with one example and the failures."""
    store = RawRecordStore(BlobStore(settings.blob_dir))
    table = Table(
        "connector",
        "raw records",
        "normalized to",
        "failed (reason)",
        "for example",
        title="What it collected",
    )
    for connector in registry:
        kinds: Counter[str] = Counter()
        failures: Counter[str] = Counter()
        example = ""
        with engine.connect() as conn:
            raws = list(store.iter_connector(conn, connector.meta.id, with_snapshot=True))
        for raw in raws:
            try:
                records = connector.normalize(raw)
            except ParseError as exc:
                failures[exc.reason.value] += 1
                continue
            kinds.update(record.kind for record in records)
            if records and not example:
                example = _describe(records[0])
        table.add_row(
            connector.meta.id,
            str(len(raws)),
            ", ".join(f"{n} {k}" for k, n in kinds.most_common()) or "-",
            ", ".join(f"{n} {r}" for r, n in failures.most_common()) or "-",
            example,
        )
    return table


def _describe(record: NormalizedRecord) -> str:
    price = next(
        (
            getattr(record, name)
            for name in ("price", "price_realised", "hammer_price")
            if getattr(record, name, None) is not None
        ),
        None,
    )
    return f"{record.title[:60]}" + (f" — {price}" if price else "")

"""``rareindex demo``: crawl the local fake web end to end on the embedded default and print it.

It migrates the database, starts the fake web on 127.0.0.1 (collectibles sites and misbehaving
hosts, one server, many host names), points the connectors' host names at it (``connect_to``:
URLs, policies and gates keep the names), crawls every registered connector with progress bars,
prints the runs and what the database now holds, checks every connector's health, and ends by
writing the static HTML report (``rareindex report``) and printing its path. Nothing leaves the
machine.
"""

from __future__ import annotations

import asyncio
import os
from datetime import date

import typer
from rich.table import Table

from .._version import __version__
from ..logging import configure_logging
from ..registry import Registry, load_registry
from ..storage import BlobStore, Engine, current_revision, head_revision, upgrade
from ..storage.catalog_store import import_catalog
from ..storage.census import connector_stats, partitions, table_counts
from ..storage.index_report import index_summary, median_prices_usd
from ..storage.normalized_store import raw_ids_in_scope
from ._common import console, database, describe_database, settings_of
from ._fakeweb import fake_web_settings
from .connectors_cmd import report_problems
from .crawl_cmd import crawl_connectors, summary_table

FAKE_WEB_SEED = 7
"""The seed the fake web's sites are generated from."""
FX_SINCE = date(2024, 1, 1)


def demo(ctx: typer.Context) -> None:
    """Migrate, serve the fake web, crawl every connector, print runs and tables."""
    from rareindex_fakeweb import FAKE_HOSTS
    from rareindex_fakeweb.sites.catalog import world_catalog

    from ..certs import record_sightings_from_listings, verify_pending
    from ..fx import load_ecb_rates
    from ..pipeline import process
    from .report_cmd import demo_report

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

    catalog = import_catalog(engine, world_catalog(FAKE_WEB_SEED))
    rates = load_ecb_rates(engine, since=FX_SINCE)
    console.print(
        f"catalog: {catalog.assets} assets from the fake web's catalog; fx: {rates} new ECB rates"
    )
    with engine.connect() as conn:
        raw_ids = raw_ids_in_scope(conn)
    with console.status("normalizing and resolving…"):
        result = process(engine, registry, raw_ids, blobs=BlobStore(settings.blob_dir))
    n, r = result.normalized, result.resolved
    # no_records is a rejection, not a failure: a WooCommerce variable product yields nothing
    # itself (its variations are records of their own)
    no_record = n.reasons["no_records"]
    console.print(
        f"pipeline: {n.raw} raw records normalized into {n.records} records "
        f"({n.failed - no_record} failed, {no_record} with no record of their own); "
        f"resolved {r.resolved}: {r.matched} matched, {r.unmatched} unmatched, "
        f"{r.anomalies} price anomalies flagged"
    )
    console.print(collected_table(engine, registry))
    for table in index_tables(engine):
        console.print(table)

    with fake_web_settings(settings) as (local, _), console.status("verifying certificates…"):
        seen = record_sightings_from_listings(engine)
        verified = asyncio.run(verify_pending(engine, local, registry, limit=10_000))
    console.print(
        f"certificates: {seen} sightings on listings; {verified.checked} checked with the grader, "
        f"{verified.verified} verified, {verified.not_found} not found, "
        f"{verified.mismatches} listing titles disagree with their certificate"
    )

    from .index_cmd import print_price_index  # the price index over what the demo stored

    print_price_index(engine)

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

    demo_report(engine, settings, registry)  # last: the demo ends with where its report is


def collected_table(engine: Engine, registry: Registry) -> Table:
    """What the crawl collected and the normalizer made of it: per connector, raw records, the
    normalized records by kind, those that gave no record by reason (``no_records``: nothing to
    normalize, such as a variable product whose variations are records of their own; any other
    reason: a failure), and how many resolved to an asset."""
    table = Table(
        "connector",
        "raw records",
        "normalized to",
        "not normalized (reason)",
        "matched to an asset",
        title="What it collected",
    )
    with engine.connect() as conn:
        stats = {s.connector_id: s for s in connector_stats(conn)}
    for connector in registry:
        stat = stats.get(connector.meta.id)
        if stat is None:
            table.add_row(connector.meta.id, "0", "-", "-", "-")
            continue
        priced = stat.records - stat.unpriced
        table.add_row(
            connector.meta.id,
            str(stat.raw),
            ", ".join(f"{n} {k}" for k, n in stat.kinds.most_common()) or "-",
            ", ".join(f"{n} {r}" for r, n in stat.failures.most_common()) or "-",
            f"{stat.matched - stat.unpriced}/{priced}" if priced else "-",
        )
    return table


def index_tables(engine: Engine) -> tuple[Table, Table]:
    """The price index in brief: assets, variants and sales per source; then the median sale
    price in USD of the variants (asset and grade) sold on the most sources."""
    with engine.connect() as conn:
        summary = index_summary(conn)
        medians = median_prices_usd(conn, top=5)
    overview = Table("", "count", title="The price index")
    overview.add_row("assets in the catalog", str(summary.assets))
    overview.add_row("assets with observations", str(summary.assets_seen))
    overview.add_row("variants (grader x grade)", str(summary.variants))
    for source, (n, matched) in sorted(summary.sales_by_source.items()):
        overview.add_row(f"sales on {source}", f"{n} ({matched} matched)")
    prices = Table(
        "asset · grade", "sales", "median USD", "by source (median USD)", title="Median prices"
    )
    for asset in medians:
        prices.add_row(
            asset.title,
            str(asset.sales),
            f"{asset.median_usd:,.2f}",
            ", ".join(f"{s} {v:,.2f}" for s, v in asset.by_source.items()),
        )
    return overview, prices

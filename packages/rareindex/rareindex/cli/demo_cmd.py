"""``rareindex demo``: run what exists end to end on the embedded default and print the result.

Today that is: migrate the database, load and validate the connector registry, mirror it into the
database, and print the real state (registry, tables and row counts, partitions on PostgreSQL).
The crawl of the local fake web joins when the crawler lands.
"""

from __future__ import annotations

import typer
from rich.table import Table

from .._version import __version__
from ..registry import load_registry
from ..storage import current_revision, head_revision, upgrade
from ..storage.census import partitions, table_counts
from ..storage.connector_rows import list_connectors, sync_connectors
from ._common import console, database, describe_database, settings_of
from .connectors_cmd import registry_table, report_problems


def demo(ctx: typer.Context) -> None:
    """Migrate, load the registry, sync it, and print what the database holds."""
    settings = settings_of(ctx)
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
    with engine.begin() as conn:
        synced = sync_connectors(conn, registry)
        stored = {row.id: (row.status, row.runs) for row in list_connectors(conn)}
    console.print(
        f"registry: {len(registry)} connectors under {settings.connectors_dir}, {synced} synced"
    )
    console.print(registry_table(registry, stored))
    report_problems(registry)

    with engine.connect() as conn:
        counts = table_counts(conn)
        parts = partitions(conn)
    table = Table("table", "rows", "partitions", title=f"Tables ({len(counts)})")
    for name, rows in counts.items():
        table.add_row(name, str(rows), str(len(parts[name])) if name in parts else "")
    console.print(table)

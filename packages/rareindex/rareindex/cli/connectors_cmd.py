"""``rareindex connectors list``: what the registry holds, and its stored runtime state."""

from __future__ import annotations

import typer
from rich.table import Table

from ..registry import Registry, load_registry
from ..storage import current_revision
from ..storage.connector_rows import list_connectors
from ._common import console, database, errors, settings_of

app = typer.Typer(help="Inspect the connector registry.", no_args_is_help=True)


def registry_table(registry: Registry, stored: dict[str, tuple[str, int]] | None = None) -> Table:
    """A table of connectors: id, source, engines, categories, refresh class, status, runs."""
    table = Table(
        "id",
        "source",
        "engines",
        "categories",
        "capabilities",
        "refresh",
        "status",
        "runs",
        title=f"Connectors ({len(registry)})",
    )
    for connector in registry:
        meta = connector.meta
        status, runs = (stored or {}).get(meta.id, ("not synced", 0))
        table.add_row(
            meta.id,
            meta.source,
            " > ".join(meta.engines),
            ", ".join(meta.categories),
            ", ".join(meta.capabilities),
            meta.refresh_class,
            status,
            str(runs),
        )
    return table


def report_problems(registry: Registry) -> None:
    """One line per connector file that failed to load, on stderr."""
    for problem in registry.problems:
        errors.print(f"[bold red]error:[/] {problem}", highlight=False, soft_wrap=True)


@app.command("list")
def list_cmd(ctx: typer.Context) -> None:
    """List every connector under RI_CONNECTORS_DIR with its stored status; exit 2 if any
    connector file failed to load (the others are still listed)."""
    settings = settings_of(ctx)
    registry = load_registry(settings.connectors_dir)
    stored: dict[str, tuple[str, int]] = {}
    engine = database(settings)
    if current_revision(engine) is not None:
        with engine.connect() as conn:
            stored = {row.id: (row.status, row.runs) for row in list_connectors(conn)}
    console.print(registry_table(registry, stored))
    if not len(registry):
        console.print(f"no connectors under {settings.connectors_dir}")
    report_problems(registry)
    if registry.problems:
        raise typer.Exit(2)

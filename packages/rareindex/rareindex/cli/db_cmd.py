"""``rareindex db upgrade|downgrade|current|maintain``: the schema, through Alembic."""

from __future__ import annotations

from typing import Annotated

import typer

from ..storage import current_revision, downgrade, head_revision, upgrade
from ..storage.census import ensure_partitions
from ..storage.fx_settings import sync_stale_days
from ._common import console, database, settings_of

app = typer.Typer(help="Migrate the database (SQLite or PostgreSQL).", no_args_is_help=True)


@app.command("upgrade")
def upgrade_cmd(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
) -> None:
    """Migrate forward (default: to the newest revision)."""
    settings = settings_of(ctx)
    engine = database(settings)
    upgrade(engine, revision, migrations_dir=settings.migrations_dir)
    sync_stale_days(engine, settings)  # RI_FX_STALE_DAYS, when set, into fx_settings
    console.print(f"database at revision {current_revision(engine)}")


@app.command("downgrade")
def downgrade_cmd(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision; 'base' drops everything.")],
) -> None:
    """Migrate back to REVISION (explicit, because 'base' drops every table)."""
    settings = settings_of(ctx)
    engine = database(settings)
    downgrade(engine, revision, migrations_dir=settings.migrations_dir)
    console.print(f"database at revision {current_revision(engine) or 'base (empty)'}")


@app.command("current")
def current_cmd(ctx: typer.Context) -> None:
    """Print the database's revision and the newest one available."""
    settings = settings_of(ctx)
    engine = database(settings)
    current = current_revision(engine) or "base (empty)"
    head = head_revision(migrations_dir=settings.migrations_dir)
    note = "up to date" if current == head else "run `rareindex db upgrade`"
    console.print(f"current {current}, head {head}: {note}")


@app.command("maintain")
def maintain_cmd(
    ctx: typer.Context,
    months_ahead: Annotated[int, typer.Option(min=1, max=36)] = 3,
) -> None:
    """Create monthly partitions ahead for the big tables (PostgreSQL; no-op on SQLite)."""
    engine = database(settings_of(ctx))
    with engine.begin() as conn:
        created = ensure_partitions(conn, months_ahead=months_ahead)
    console.print(f"partitions created: {created}")

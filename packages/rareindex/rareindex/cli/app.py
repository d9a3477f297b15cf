"""The ``rareindex`` command: ``db``, ``connectors``, ``demo``.

Errors a user can fix (bad settings, an unreachable database, a broken connector file) are printed
as one line starting with ``error:`` and exit with status 2 — never a traceback.

Example:
    $ rareindex db upgrade
    $ rareindex connectors list
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console

from rareindex_connectors.errors import ConnectorError

from .._version import __version__
from ..errors import RareIndexError
from ..logging import configure_logging
from ..settings import Settings, load_settings
from . import (
    backfill_cmd,
    catalog_cmd,
    cert_cmd,
    connectors_cmd,
    crawl_cmd,
    db_cmd,
    deadletters_cmd,
    demo_cmd,
    events_cmd,
    fakeweb_cmd,
    fx_cmd,
    health_cmd,
    index_cmd,
    inspect_cmd,
    replay_cmd,
    report_cmd,
    resolve_cmd,
    review_cmd,
    tokens_cmd,
    watchlists_cmd,
)

__all__ = ["app", "main"]

app = typer.Typer(
    name="rareindex",
    help="RareIndex: an open price index for collectibles.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(db_cmd.app, name="db")
app.add_typer(connectors_cmd.app, name="connectors")
app.add_typer(backfill_cmd.app, name="backfill")
app.add_typer(catalog_cmd.app, name="catalog")
app.add_typer(cert_cmd.app, name="cert")
app.add_typer(tokens_cmd.app, name="tokens")
app.add_typer(fx_cmd.app, name="fx")
app.add_typer(index_cmd.app, name="index")
app.add_typer(deadletters_cmd.app, name="deadletters")
app.add_typer(events_cmd.app, name="events")
app.add_typer(watchlists_cmd.app, name="watchlists")
app.add_typer(review_cmd.app, name="review")
app.command("demo")(demo_cmd.demo)
app.command("crawl")(crawl_cmd.crawl)
app.command("fakeweb")(fakeweb_cmd.fakeweb)
app.command("inspect")(inspect_cmd.inspect)
app.command("resolve")(resolve_cmd.resolve)
app.command("replay")(replay_cmd.replay)
app.command("health")(health_cmd.health)
app.command("report")(report_cmd.report)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rareindex {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    settings: Settings = load_settings()
    configure_logging(settings)
    ctx.obj = settings


def main() -> None:
    """Console-script entry point: run the app, turning fixable errors into one line."""
    try:
        app()
    except (RareIndexError, ConnectorError) as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)

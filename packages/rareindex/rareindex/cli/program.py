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
from .lazy import lazy_group

__all__ = ["app", "main", "register"]

_PACKAGE = __name__.rpartition(".")[0]
# Each command and where it lives; its module is imported when the command is used.
_COMMANDS = {
    **{
        group: f"{_PACKAGE}.{module}:app"
        for group, module in {
            "db": "db_cmd",
            "connectors": "connectors_cmd",
            "backfill": "backfill_cmd",
            "catalog": "catalog_cmd",
            "cert": "cert_cmd",
            "tokens": "tokens_cmd",
            "fx": "fx_cmd",
            "index": "index_cmd",
            "deadletters": "deadletters_cmd",
            "events": "events_cmd",
            "watchlists": "watchlists_cmd",
            "review": "review_cmd",
        }.items()
    },
    **{
        command: f"{_PACKAGE}.{command}_cmd:{command}"
        for command in (
            "demo",
            "crawl",
            "fakeweb",
            "inspect",
            "resolve",
            "replay",
            "health",
            "report",
        )
    },
}
_Commands = lazy_group(_COMMANDS)

app = typer.Typer(
    name="rareindex",
    help="RareIndex: an open price index for collectibles.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=_Commands,
)


def register(name: str, target: str) -> None:
    """Add (or replace) the command ``name``, found at ``"module:attribute"`` when it is used.

    The fleet's layer (``workers``) adds its commands here: the index never imports it."""
    _Commands.lazy[name] = target


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

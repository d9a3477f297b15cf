"""``rareindex watchlists add|list|delete --principal NAME``: a principal's watchlists.

The principal is an API token's name (``alice`` or ``token:alice``): the watchlists made here are
the ones that token sees through ``/api/watchlists`` and the events stream, and the other way
round. Each command reads or changes that principal's watchlists only.

Example:
    $ rareindex watchlists add zards --principal alice --category tcg_card --move-pct 20
    $ rareindex watchlists list --principal alice --json
    $ rareindex watchlists delete zards --principal alice
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

import structlog
import typer

from ..errors import InvalidWatchlist, NotFound
from ..storage.watchlist_store import add_watchlist, delete_watchlist, watchlists_of
from ..watchlists import Watchlist
from ._common import console, errors, migrated_database, settings_of

__all__ = ["app", "watchlist_json"]

app = typer.Typer(help="A principal's watchlists: add, list, delete.", no_args_is_help=True)
log = structlog.get_logger(__name__)

Principal = Annotated[
    str,
    typer.Option("--principal", help="The API token name that owns them (alice or token:alice)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")]


def as_principal(name: str) -> str:
    """``alice`` and ``token:alice`` are both the principal ``token:alice``."""
    return name if name.startswith("token:") else f"token:{name}"


def _amount(value: str | None, option: str) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        raise InvalidWatchlist(f"{option} {value!r} is not a number") from None


def watchlist_json(w: Watchlist) -> dict[str, Any]:
    """A watchlist as JSON: amounts as decimal strings, times ISO-8601 UTC."""
    return {
        "id": w.id,
        "name": w.name,
        "principal": w.principal,
        "asset_ids": list(w.asset_ids),
        "variant_ids": list(w.variant_ids),
        "categories": list(w.categories),
        "title_query": w.title_query,
        "below": None if w.below is None else str(w.below),
        "above": None if w.above is None else str(w.above),
        "currency": w.currency,
        "move_pct": None if w.move_pct is None else str(w.move_pct),
        "created_at": w.created_at.isoformat() if w.created_at else None,
    }


def _describe(w: Watchlist) -> str:
    parts = [f"asset {a}" for a in w.asset_ids] + [f"variant {v}" for v in w.variant_ids]
    parts += [f"category {c}" for c in w.categories]
    if w.title_query:
        parts.append(f"title ~ {w.title_query!r}")
    conditions = []
    if w.below is not None:
        conditions.append(f"below {w.below} {w.currency}")
    if w.above is not None:
        conditions.append(f"above {w.above} {w.currency}")
    if w.move_pct is not None:
        conditions.append(f"move > {w.move_pct}%")
    return ", ".join(parts) + (f"; {', '.join(conditions)}" if conditions else "")


@app.command("add")
def add_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A name, unique among the principal's.")],
    principal: Principal,
    asset: Annotated[
        list[str] | None, typer.Option("--asset", help="An asset id (repeat).")
    ] = None,
    variant: Annotated[
        list[str] | None, typer.Option("--variant", help="A variant id (repeat).")
    ] = None,
    category: Annotated[
        list[str] | None, typer.Option("--category", help="A category (repeat).")
    ] = None,
    query: Annotated[
        str | None, typer.Option("--query", help="Words the event's title must all hold.")
    ] = None,
    below: Annotated[str | None, typer.Option("--below", help="A price below this.")] = None,
    above: Annotated[str | None, typer.Option("--above", help="A price above this.")] = None,
    currency: Annotated[
        str | None, typer.Option("--currency", help="Of --below / --above (USD by default).")
    ] = None,
    move_pct: Annotated[
        str | None, typer.Option("--move-pct", help="A price move of more than this many %.")
    ] = None,
) -> None:
    """Add a watchlist: what it names (at least one of --asset, --variant, --category,
    --query) and its optional price conditions."""
    engine = migrated_database(settings_of(ctx))
    who = as_principal(principal)
    try:
        watchlist = Watchlist.create(
            who,
            name,
            asset_ids=asset,
            variant_ids=variant,
            categories=category,
            title_query=query,
            below=_amount(below, "--below"),
            above=_amount(above, "--above"),
            currency=currency,
            move_pct=_amount(move_pct, "--move-pct"),
        )
        add_watchlist(engine, watchlist)
    except InvalidWatchlist as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    log.info("watchlist.created", watchlist=watchlist.id, principal=who)
    console.print(f"{watchlist.id}  {watchlist.name}: {_describe(watchlist)}", soft_wrap=True)


@app.command("list")
def list_cmd(ctx: typer.Context, principal: Principal, json_: JsonOption = False) -> None:
    """List the principal's watchlists, oldest first."""
    engine = migrated_database(settings_of(ctx))
    found = watchlists_of(engine, as_principal(principal))
    if json_:
        sys.stdout.write(json.dumps([watchlist_json(w) for w in found], indent=2) + "\n")
        return
    for w in found:
        console.print(f"{w.id}  {w.name}: {_describe(w)}", soft_wrap=True)
    console.print(f"{len(found)} watchlists")


@app.command("delete")
def delete_cmd(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="The watchlist's id or name.")],
    principal: Principal,
) -> None:
    """Delete one of the principal's watchlists (by id or name)."""
    engine = migrated_database(settings_of(ctx))
    who = as_principal(principal)
    try:
        removed = delete_watchlist(engine, who, key)
    except NotFound as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    log.info("watchlist.deleted", watchlist=removed.id, principal=who)
    console.print(f"deleted {removed.id} ({removed.name})")

"""``rareindex tokens``: bearer tokens for the admin API.

``create NAME`` prints the token once (only its hash is stored), ``list`` shows ids, names and
use, ``revoke ID_OR_NAME`` refuses the token from the next request on.

Example:
    $ rareindex tokens create grafana --role read
    $ rareindex tokens revoke grafana
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..storage.tokens import create_token, list_tokens, revoke_token
from ._common import console, migrated_database, settings_of

__all__ = ["app"]

app = typer.Typer(help="Bearer tokens for the admin API.", no_args_is_help=True)


def _when(value: object) -> str:
    return "-" if value is None else f"{value:%Y-%m-%d %H:%M}Z"


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Who or what uses it, e.g. grafana.")],
    role: Annotated[
        str, typer.Option(help="admin (everything) or read (no pause/resume/requeue).")
    ] = "admin",
) -> None:
    """Create a token and print it once: store it now, it cannot be shown again."""
    issued = create_token(migrated_database(settings_of(ctx)), name, role=role)
    console.print(
        f"created {issued.info.id} ({issued.info.name}, role {issued.info.role}); "
        "the token is shown once, store it now:"
    )
    console.print(issued.token, soft_wrap=True)


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """Every token: id, name, role, created, last used, revoked."""
    tokens = list_tokens(migrated_database(settings_of(ctx)))
    table = Table("id", "name", "role", "created", "last used", "revoked")
    for token in tokens:
        table.add_row(
            token.id,
            token.name,
            token.role,
            _when(token.created_at),
            _when(token.last_used_at),
            _when(token.revoked_at),
        )
    console.print(table)
    live = sum(1 for t in tokens if t.revoked_at is None)
    console.print(f"{len(tokens)} tokens, {live} live")


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    id_or_name: Annotated[str, typer.Argument(help="The token's id (tok_…) or name.")],
) -> None:
    """Revoke a token: the API refuses it from the next request on."""
    info = revoke_token(migrated_database(settings_of(ctx)), id_or_name)
    console.print(f"revoked {info.id} ({info.name})")

"""``rareindex events head|list|prune``: the change-event outbox from the command line.

``head`` prints the newest cursor and the retention horizon; ``list`` the events after a cursor
(as JSON lines, for a script); ``prune`` deletes the events older than
``RI_EVENTS_RETENTION_DAYS`` (30) or ``--days``, and raises the horizon: a reader whose cursor
is older is then told so (``reset`` on the stream, ``410 cursor_expired`` on the page) instead
of missing events silently. Run ``prune`` daily, e.g. from cron.

Example:
    $ rareindex events prune --days 30
    pruned 1204 events older than 30 days; oldest cursor kept: 1205
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from typing import Annotated

import orjson
import structlog
import typer

from ..storage.events_store import CursorExpired, EventFilter, event_json, head, prune, read_after
from ._common import console, migrated_database, settings_of

__all__ = ["app"]

log = structlog.get_logger(__name__)

app = typer.Typer(help="The change-event outbox: head, list, prune.", no_args_is_help=True)


@app.command("head")
def head_cmd(ctx: typer.Context) -> None:
    """The newest cursor, and the newest pruned one."""
    engine = migrated_database(settings_of(ctx))
    with engine.connect() as conn:
        now = head(conn)
    console.print(f"last cursor: {now.last}; pruned through: {now.pruned_through}")


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    after: Annotated[int, typer.Option(min=0, help="The last cursor seen.")] = 0,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 100,
    type_: Annotated[list[str] | None, typer.Option("--type", help="Event types.")] = None,
) -> None:
    """The events after ``--after`` as JSON lines (oldest first)."""
    engine = migrated_database(settings_of(ctx))
    with engine.connect() as conn:
        try:
            found = read_after(conn, after, EventFilter(types=tuple(type_ or ())), limit=limit)
        except CursorExpired as exc:
            console.print(f"error: {exc}")
            raise typer.Exit(2) from None
    for event in found:
        sys.stdout.write(orjson.dumps(event_json(event)).decode() + "\n")


@app.command("prune")
def prune_cmd(
    ctx: typer.Context,
    days: Annotated[
        int | None,
        typer.Option(min=1, help="Keep this many days (default: RI_EVENTS_RETENTION_DAYS)."),
    ] = None,
) -> None:
    """Delete the events older than the retention, keeping every cursor honest."""
    settings = settings_of(ctx)
    keep = days or settings.events_retention_days
    engine = migrated_database(settings)
    with engine.begin() as conn:
        result = prune(conn, before=datetime.now(UTC) - timedelta(days=keep))
    log.info(
        "events.pruned", deleted=result.deleted, pruned_through=result.pruned_through, days=keep
    )
    console.print(
        f"pruned {result.deleted} events older than {keep} days; "
        f"oldest cursor kept: {result.pruned_through + 1}"
    )

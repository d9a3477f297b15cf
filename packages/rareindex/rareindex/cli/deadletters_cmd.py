"""``rareindex deadletters [list] [--all] [--json]``: messages that failed every retry.

The list is read from the database (``dead_letters``), so it works whichever broker carried the
messages, and in embedded mode too. Sending them again (``rareindex deadletters requeue``) needs
the broker, so that command is added by the fleet's CLI (:mod:`workers.fleet_cmd`).

Example:
    $ rareindex deadletters list --json
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from ..storage.dead_letters import DeadLetter, list_dead_letters
from ._common import console, migrated_database, settings_of

__all__ = ["app", "letter_json"]

app = typer.Typer(
    help="Messages that failed every retry (`list`; `requeue` with a broker).",
    no_args_is_help=False,
    invoke_without_command=True,
)

AllOption = Annotated[bool, typer.Option("--all", help="Also the letters already requeued.")]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")]


def letter_json(letter: DeadLetter) -> dict[str, Any]:
    """A dead letter as JSON (times in ISO-8601 UTC)."""
    return {
        "id": letter.id,
        "queue": letter.queue,
        "actor": letter.actor,
        "args": letter.args,
        "kwargs": letter.kwargs,
        "retries": letter.retries,
        "error": letter.error,
        "failed_at": letter.failed_at.isoformat(),
        "requeued_at": letter.requeued_at.isoformat() if letter.requeued_at else None,
    }


def _list(ctx: typer.Context, include_requeued: bool, json_: bool) -> None:
    engine = migrated_database(settings_of(ctx))
    letters = list_dead_letters(engine, include_requeued=include_requeued)
    if json_:
        sys.stdout.write(json.dumps([letter_json(d) for d in letters], indent=2) + "\n")
        return
    for letter in letters:
        call = f"{letter.actor}({', '.join(map(str, letter.args))})"
        when = f"{letter.failed_at:%Y-%m-%d %H:%M}"
        requeued = f"  requeued {letter.requeued_at:%Y-%m-%d %H:%M}" if letter.requeued_at else ""
        console.print(
            f"{letter.id}  {call}  retries={letter.retries}  {when}  {letter.error}{requeued}",
            soft_wrap=True,
        )
    console.print(f"{len(letters)} dead letters")


@app.callback()
def deadletters(ctx: typer.Context) -> None:
    """List dead letters (also `rareindex deadletters list`)."""
    if ctx.invoked_subcommand is None:
        _list(ctx, include_requeued=False, json_=False)


@app.command("list")
def list_cmd(ctx: typer.Context, all_: AllOption = False, json_: JsonOption = False) -> None:
    """List the dead letters not yet requeued, oldest first (`--all`: every one)."""
    _list(ctx, include_requeued=all_, json_=json_)

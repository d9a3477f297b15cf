"""A command group whose subcommands are imported when one is used, not when the program starts.

Importing every command module at start-up costs each ``rareindex`` invocation the whole index
(SQLAlchemy and the schema, the API, the resolver, the price index, uvicorn): about two seconds
of CPU before the first line of the command runs. :class:`LazyGroup` knows each subcommand by
name and where it lives (``"module:attribute"``, a :class:`typer.Typer` sub-app or a command
function) and imports that one module when the command is looked up. ``rareindex --help`` and
the docs test list every command, and so import them all.

Example:
    >>> import typer
    >>> app = typer.Typer(cls=lazy_group({"dump": "json:dumps"}))
    >>> @app.callback()
    ... def root() -> None: ...
    >>> group = typer.main.get_command(app)
    >>> group.list_commands(None), group.commands  # listed, nothing imported yet
    (['dump'], {})
    >>> group.get_command(None, "dump").name
    'dump'
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import typer

# Typer runs on its own copy of click: its commands and contexts are of these classes.
from typer import _click as click
from typer.core import TyperGroup

__all__ = ["LazyGroup", "lazy_group"]


class LazyGroup(TyperGroup):
    """A :class:`TyperGroup` that also holds subcommands by ``"module:attribute"``."""

    lazy: ClassVar[dict[str, str]] = {}

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(_load(self.lazy[cmd_name], cmd_name), cmd_name)
        return self.commands.get(cmd_name)


def _load(target: str, name: str) -> click.Command:
    module, _, attribute = target.partition(":")
    found: Any = getattr(importlib.import_module(module), attribute)
    command: click.Command
    if isinstance(found, typer.Typer):
        command = typer.main.get_group(found)  # a group even of one command, as add_typer has it
    else:  # a command function, as ``app.command(name)(function)`` would register it
        single = typer.Typer()
        single.command(name)(found)
        command = typer.main.get_command(single)
    command.name = name
    return command


def lazy_group(commands: dict[str, str]) -> type[LazyGroup]:
    """A :class:`LazyGroup` class holding ``commands`` (name -> ``"module:attribute"``).

    The table is the class's own: later entries (the fleet's commands) go in with
    ``group.lazy[name] = target`` before the program runs."""
    return type("LazyCommands", (LazyGroup,), {"lazy": dict(commands)})

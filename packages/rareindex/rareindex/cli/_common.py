"""What every command needs: the settings from the root callback, a checked database engine."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from ..settings import Settings

if TYPE_CHECKING:
    from ..storage import Engine, check_connection, make_engine

_STORAGE_NAMES = ("check_connection", "make_engine")
"""Storage's functions this module uses, imported on first use, not at start-up (SQLAlchemy is
most of a command's start-up, and inspect or fakeweb open no database); still attributes of this
module, which tests patch (``make_engine``) to close the engines a command made."""


def _load_storage() -> None:
    from .. import storage

    for name in _STORAGE_NAMES:
        globals().setdefault(name, getattr(storage, name))  # a patched one stays


if not TYPE_CHECKING:  # type checkers see the imports above

    def __getattr__(name: str) -> Any:
        if name in _STORAGE_NAMES:
            _load_storage()
            return globals()[name]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Wide when piped (tests, CI logs) so lines are not wrapped mid-path; else the terminal's width.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
errors = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 400)


def settings_of(ctx: typer.Context) -> Settings:
    """The settings the root callback loaded."""
    settings = ctx.find_root().obj
    assert isinstance(settings, Settings)
    return settings


def database(settings: Settings) -> Engine:
    """An engine for the configured database, checked reachable (one-line error otherwise)."""
    _load_storage()
    engine = make_engine(settings.database_url_or_default())
    check_connection(engine)
    return engine


def describe_database(settings: Settings) -> str:
    """``SQLite /abs/rareindex.db`` or ``PostgreSQL host/db`` without the password."""
    _load_storage()
    engine = make_engine(settings.database_url_or_default())
    url = engine.url
    engine.dispose()
    if url.get_backend_name() == "sqlite":
        return f"SQLite {url.database or ':memory:'}"
    return f"PostgreSQL {url.host}:{url.port or 5432}/{url.database}"


def migrated_database(settings: Settings) -> Engine:
    """Like :func:`database`, and refuse a schema behind the code with the command that fixes it."""
    from ..errors import ConfigError
    from ..storage import current_revision, head_revision

    engine = database(settings)
    current = current_revision(engine)
    head = head_revision(migrations_dir=settings.migrations_dir)
    if current != head:
        raise ConfigError(
            f"the database schema is at {current or 'nothing'}, the code needs {head}: "
            "run `rareindex db upgrade` first"
        )
    from ..storage.fx_settings import sync_stale_days

    sync_stale_days(engine, settings)  # RI_FX_STALE_DAYS, when set, is what the FX views read
    return engine

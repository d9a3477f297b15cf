"""Run the Alembic migrations in ``migrations/`` from code (the CLI and the tests use this).

Example:
    >>> engine = make_engine("sqlite://")                       # doctest: +SKIP
    >>> upgrade(engine); current_revision(engine) == head_revision()   # doctest: +SKIP
    True
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from ..settings import REPO_ROOT

__all__ = ["current_revision", "downgrade", "head_revision", "upgrade"]

DEFAULT_MIGRATIONS = REPO_ROOT / "migrations"


def _config(migrations_dir: Path) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir))
    config.set_main_option("path_separator", "os")
    return config


def upgrade(
    engine: Engine, revision: str = "head", *, migrations_dir: Path = DEFAULT_MIGRATIONS
) -> None:
    """Migrate forward to ``revision`` (default: the newest)."""
    config = _config(migrations_dir)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def downgrade(
    engine: Engine, revision: str = "base", *, migrations_dir: Path = DEFAULT_MIGRATIONS
) -> None:
    """Migrate back to ``revision`` (default: empty)."""
    config = _config(migrations_dir)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, revision)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None when it was never migrated."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision(*, migrations_dir: Path = DEFAULT_MIGRATIONS) -> str | None:
    """The newest revision in ``migrations/``."""
    return ScriptDirectory.from_config(_config(migrations_dir)).get_current_head()

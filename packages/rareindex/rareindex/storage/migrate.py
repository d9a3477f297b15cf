"""Run the Alembic migrations in ``migrations/`` from code (the CLI and the tests use this).

Alembic is imported only to migrate. Reading where a database is (:func:`current_revision`) and
the newest revision (:func:`head_revision`), which every command that needs a migrated database
does, reads the ``alembic_version`` table (Alembic's default name, kept by ``migrations/env.py``)
and the revision scripts' ``revision`` / ``down_revision`` lines directly: importing Alembic (and
the Mako and Pygments it loads) cost about 0.2 CPU-seconds in every such command. Anything the
direct read cannot settle on its own (several heads, branch labels, dependencies, an unreadable
script, several version rows) is left to Alembic, which answers or raises as before;
tests/unit/rareindex/test_migrate_fast_path.py checks both read the same.

Example:
    >>> engine = make_engine("sqlite://")                       # doctest: +SKIP
    >>> upgrade(engine); current_revision(engine) == head_revision()   # doctest: +SKIP
    True
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, inspect, text

from ..settings import REPO_ROOT

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["current_revision", "downgrade", "head_revision", "upgrade"]

DEFAULT_MIGRATIONS = REPO_ROOT / "migrations"
_HEADER = re.compile(
    r"^(revision|down_revision|branch_labels|depends_on)\s*(?::[^=\n]*)?=\s*(.+?)\s*$", re.M
)


def _config(migrations_dir: Path) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir))
    config.set_main_option("path_separator", "os")
    return config


def upgrade(
    engine: Engine, revision: str = "head", *, migrations_dir: Path = DEFAULT_MIGRATIONS
) -> None:
    """Migrate forward to ``revision`` (default: the newest)."""
    from alembic import command

    config = _config(migrations_dir)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def downgrade(
    engine: Engine, revision: str = "base", *, migrations_dir: Path = DEFAULT_MIGRATIONS
) -> None:
    """Migrate back to ``revision`` (default: empty)."""
    from alembic import command

    config = _config(migrations_dir)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, revision)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None when it was never migrated."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        if len(rows) <= 1:
            return rows[0] if rows else None
        from alembic.runtime.migration import MigrationContext

        return MigrationContext.configure(conn).get_current_revision()  # raises: several heads


def head_revision(*, migrations_dir: Path = DEFAULT_MIGRATIONS) -> str | None:
    """The newest revision in ``migrations/``."""
    head = _single_head(migrations_dir / "versions")
    if head is not None:
        return head
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config(migrations_dir)).get_current_head()


def _single_head(versions: Path) -> str | None:
    """The one head of a plain linear history read from the scripts' header lines, or None
    when Alembic has to decide (no scripts, several heads, branches, dependencies, a header
    that is not a literal)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in versions.glob("*.py"):
        if path.name.startswith(("_", ".")):
            continue
        found: dict[str, object] = {}
        for name, value in _HEADER.findall(path.read_text(encoding="utf-8")):
            if name in found:
                return None
            try:
                found[name] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return None
        revision, down = found.get("revision"), found.get("down_revision")
        if not isinstance(revision, str) or revision in revisions:
            return None
        if found.get("branch_labels") is not None or found.get("depends_on") is not None:
            return None
        if down is not None and not isinstance(down, str):
            return None  # a merge point
        revisions.add(revision)
        if down is not None:
            parents.add(down)
    heads = revisions - parents
    if len(heads) != 1 or not parents <= revisions:
        return None
    return heads.pop()

"""``fx_settings``: the one row of FX settings the multi-currency views read.

``stale_days`` decides the views' ``fx_stale`` flag, which the admin API's coverage and the report
count, so the rule lives in the database: :func:`set_stale_days` writes it (``rareindex fx
stale-days N``), :func:`sync_stale_days` writes ``RI_FX_STALE_DAYS`` when a process was started
with it set (on ``db upgrade``, when the CLI opens a migrated database, when the API starts).

Example:
    >>> set_stale_days(engine, 3)        # doctest: +SKIP
    >>> with engine.connect() as conn:   # doctest: +SKIP
    ...     stale_days(conn)
    3
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine, inspect, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from ..settings import Settings
from .schema.fx import DEFAULT_STALE_DAYS, fx_settings

__all__ = ["set_stale_days", "stale_days", "sync_stale_days", "try_sync_stale_days"]


def stale_days(conn: Connection) -> int:
    """The views' threshold: a rate more than this many days older than its row is stale."""
    found = conn.execute(
        select(fx_settings.c.stale_days).where(fx_settings.c.id == 1)
    ).scalar_one_or_none()
    return DEFAULT_STALE_DAYS if found is None else int(found)


def set_stale_days(engine: Engine, days: int) -> bool:
    """Store ``days`` (>= 0); True when it changed. Nothing is written when it is already set."""
    if days < 0:
        raise ValueError(f"stale days must be 0 or more, not {days}")
    with engine.begin() as conn:
        if stale_days(conn) == days and _has_row(conn):
            return False
        if _has_row(conn):
            conn.execute(update(fx_settings).where(fx_settings.c.id == 1).values(stale_days=days))
        else:
            insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
            conn.execute(
                insert(fx_settings)
                .values(id=1, stale_days=days)
                .on_conflict_do_update(index_elements=["id"], set_={"stale_days": days})
            )
    return True


def sync_stale_days(engine: Engine, settings: Settings) -> bool:
    """Write ``RI_FX_STALE_DAYS`` into ``fx_settings`` when it was given (in the environment or
    to :class:`Settings`) and the schema has the table; True when that changed the row."""
    if "fx_stale_days" not in settings.model_fields_set:
        return False
    with engine.connect() as conn:
        if not inspect(conn).has_table("fx_settings"):
            return False
    return set_stale_days(engine, settings.fx_stale_days)


def try_sync_stale_days(engine: Engine, settings: Settings) -> str | None:
    """:func:`sync_stale_days`, or why the database cannot take it now (unreachable, read-only):
    the first line of its error. For a process that must start anyway (the API)."""
    try:
        sync_stale_days(engine, settings)
    except SQLAlchemyError as exc:
        return str(exc).splitlines()[0]
    return None


def _has_row(conn: Connection) -> bool:
    return conn.execute(select(fx_settings.c.id).where(fx_settings.c.id == 1)).first() is not None

"""Database engines for both modes.

SQLite (embedded) gets WAL, foreign keys, a busy timeout, ``synchronous=NORMAL`` and the exact
``ri_fx_convert`` function of the multi-currency views on every connection; PostgreSQL (fleet)
gets a pre-ping pool: a restarted server costs a retry, not a crash.

Example:
    >>> engine = make_engine("sqlite://")
    >>> engine.dialect.name
    'sqlite'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import InterfaceError, OperationalError

from ..errors import DatabaseError
from .schema.fx import exact_convert

__all__ = ["check_connection", "is_database_outage", "make_engine"]


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url`` (``sqlite:///…`` or ``postgresql+psycopg://…``).

    JSON columns are encoded and decoded by orjson (~3x the stdlib on the records the pipeline
    stores and loads).
    """
    kwargs.setdefault("json_serializer", _json_dumps)
    kwargs.setdefault("json_deserializer", _json_loads)
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        if path and url.startswith("sqlite:///") and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30}, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, **kwargs)


def _json_dumps(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # what orjson does not take (integer keys …): the stdlib's rules
        return json.dumps(value)


def _json_loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN or Infinity, which the stdlib writes and orjson refuses
        return json.loads(text)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    for pragma in (
        "journal_mode=WAL",
        "foreign_keys=ON",
        "busy_timeout=30000",
        "synchronous=NORMAL",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()
    dbapi_connection.create_function("ri_fx_convert", 4, exact_convert, deterministic=True)


def is_database_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says our own database went away (a lost connection, a server restarting),
    not that a statement was wrong: the crawler records such a run as ``database``, and the
    scheduler retries it soon instead of waiting the source's refresh interval."""
    return isinstance(exc, OperationalError | InterfaceError)


def check_connection(engine: Engine) -> None:
    """Raise :class:`DatabaseError` (one line, with the fix) when the database is unreachable."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        url = engine.url
        if f'database "{url.database}" does not exist' in reason:  # the server is up, it is not
            user = url.username or "postgres"
            fix = f"create it (createdb -h {url.host or 'localhost'} -U {user} {url.database})"
        elif "authentication failed" in reason:
            fix = "fix the user or password in RI_DATABASE_URL"
        else:
            fix = "start it"
        raise DatabaseError(
            f"cannot reach the database at {url.render_as_string(hide_password=True)}: "
            f"{reason} — {fix}, or unset RI_DATABASE_URL to use embedded SQLite"
        ) from None

"""Database engines for both modes.

SQLite (embedded) gets WAL, foreign keys, a busy timeout, ``synchronous=NORMAL`` and the exact
``ri_fx_convert`` function of the multi-currency views on every connection; PostgreSQL (fleet)
gets a pre-ping pool: a restarted server costs a retry, not a crash.

Outages are translated here, at the engine: every engine :func:`make_engine` builds turns a
driver's ``OperationalError`` or ``InterfaceError`` (a lost connection, a server restarting, an
unreadable file) into :class:`OperationalOutage` / :class:`InterfaceOutage`. Both are a
:class:`~rareindex.errors.DatabaseUnavailable` of the app's error tree *and* still the SQLAlchemy
error they were, so ``except OperationalError`` / ``except SQLAlchemyError`` and their messages are
unchanged. The API answers them 503 ``database_unavailable``; a crawl records them as ``database``.

Example:
    >>> engine = make_engine("sqlite://")
    >>> engine.dialect.name
    'sqlite'
    >>> from sqlalchemy import text
    >>> with engine.connect() as conn:
    ...     conn.execute(text("SELECT * FROM no_such_table"))
    Traceback (most recent call last):
    ...
    rareindex.storage.engine.OperationalOutage: (sqlite3.OperationalError) no such table: ...
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, ExceptionContext, create_engine, event, text
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from ..errors import DatabaseError, DatabaseUnavailable
from .schema.fx import exact_convert

__all__ = [
    "InterfaceOutage",
    "OperationalOutage",
    "check_connection",
    "is_database_outage",
    "make_engine",
]


class OperationalOutage(DatabaseUnavailable, OperationalError):
    """A driver ``OperationalError`` translated into the app's tree; still an ``OperationalError``
    (same statement, parameters, ``orig`` and message)."""


class InterfaceOutage(DatabaseUnavailable, InterfaceError):
    """A driver ``InterfaceError`` translated into the app's tree; still an ``InterfaceError``."""


_OUTAGES: tuple[tuple[type[DBAPIError], type[DBAPIError]], ...] = (
    (OperationalError, OperationalOutage),
    (InterfaceError, InterfaceOutage),
)


def _translate_outage(context: ExceptionContext) -> BaseException | None:
    """``handle_error``: the outage as :class:`DatabaseUnavailable`; other errors unchanged. A
    pre-ping's failure is the pool's to handle (it reconnects), so it is left alone."""
    exc = context.sqlalchemy_exception
    if (
        context.is_pre_ping
        or not isinstance(exc, DBAPIError)
        or isinstance(exc, DatabaseUnavailable)
    ):
        return None
    for driver, outage in _OUTAGES:
        if isinstance(exc, driver) and exc.orig is not None:
            return outage(
                exc.statement,
                exc.params,
                exc.orig,
                hide_parameters=exc.hide_parameters,
                connection_invalidated=exc.connection_invalidated,
                code=exc.code,
                ismulti=exc.ismulti,
            )
    return None


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
    else:
        engine = create_engine(url, pool_pre_ping=True, **kwargs)
    event.listen(engine, "handle_error", _translate_outage)
    return engine


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
    scheduler retries it soon instead of waiting the source's refresh interval.

    Engines from :func:`make_engine` raise :class:`DatabaseUnavailable` already; a bare driver
    error (an engine built elsewhere, a test's own ``OperationalError``) counts too."""
    return isinstance(exc, DatabaseUnavailable | OperationalError | InterfaceError)


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

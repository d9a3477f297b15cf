"""Alembic environment: one code path for SQLite and PostgreSQL.

The connection normally comes from :func:`rareindex.storage.migrate` (``config.attributes``); the
plain ``alembic`` command falls back to the RareIndex settings (``RI_DATABASE_URL``).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from rareindex.settings import load_settings
from rareindex.storage.engine import make_engine
from rareindex.storage.schema import metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(load_settings().database_url_or_default())
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported: they need dialect-specific DDL")
run_migrations_online()

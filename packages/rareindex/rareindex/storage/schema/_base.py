"""The one ``MetaData`` every table hangs off, with a naming convention so constraint names are
stable across SQLite and PostgreSQL (and Alembic can drop them by name)."""

from __future__ import annotations

from sqlalchemy import Column, MetaData, Text, func

from ..types import UTCDateTime

__all__ = ["created_at", "metadata", "updated_at"]

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def created_at() -> Column:  # type: ignore[type-arg]
    """A ``created_at`` column filled by the database."""
    return Column("created_at", UTCDateTime(), nullable=False, server_default=func.now())


def updated_at() -> Column:  # type: ignore[type-arg]
    """An ``updated_at`` column filled by the database and on update."""
    return Column(
        "updated_at", UTCDateTime(), nullable=False, server_default=func.now(), onupdate=func.now()
    )


def id_column() -> Column:  # type: ignore[type-arg]
    """A prefixed text primary key (``ast_01J…``)."""
    return Column("id", Text, primary_key=True)

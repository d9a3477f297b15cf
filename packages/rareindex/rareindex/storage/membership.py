"""``column IN (values)`` whose statement text does not grow with the values.

SQLAlchemy expands ``column.in_(values)`` into one placeholder per value: a batch of 500 ids is a
statement of ~5,000 characters, different for every batch size, which psycopg parses anew each
time (its statement cache holds short texts only) and PostgreSQL plans anew. On PostgreSQL
:func:`one_of` sends the values as one array parameter instead (``column = ANY(:values)``): one
statement text, parsed and planned once. SQLite keeps the expanding ``IN``, which it handles in C.

Example:
    >>> from sqlalchemy import column, select
    >>> from sqlalchemy.dialects import postgresql, sqlite
    >>> query = select(column("id")).where(one_of(column("id"), ["a", "b"], "postgresql"))
    >>> str(query.compile(dialect=postgresql.dialect()))
    'SELECT id \\nWHERE id = ANY (%(values_1)s::VARCHAR[])'
    >>> query = select(column("id")).where(one_of(column("id"), ["a", "b"], "sqlite"))
    >>> str(query.compile(dialect=sqlite.dialect()))
    'SELECT id \\nWHERE id IN (__[POSTCOMPILE_id_1])'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import String, any_, bindparam
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.elements import ColumnElement

__all__ = ["one_of"]


def one_of(column: Any, values: Sequence[Any], dialect_name: str) -> ColumnElement[bool]:
    """``column IN values``: one array parameter on PostgreSQL, an expanding ``IN`` elsewhere.

    Values are text (ids, keys): on PostgreSQL they travel as ``VARCHAR[]``.
    """
    if dialect_name == "postgresql":
        array = bindparam("values", list(values), type_=ARRAY(String), unique=True)
        return column == any_(array)  # type: ignore[no-any-return]
    return column.in_(list(values))  # type: ignore[no-any-return]

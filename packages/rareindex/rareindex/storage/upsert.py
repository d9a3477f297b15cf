"""One dialect-aware ``INSERT … ON CONFLICT`` for SQLite and PostgreSQL.

Example:
    >>> upsert(conn, assets, rows, conflict=["asset_key"], update=["title"])  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Table, func
from sqlalchemy.dialects import postgresql, sqlite

__all__ = ["upsert"]


def upsert(
    conn: Connection,
    table: Table,
    rows: Sequence[dict[str, Any]],
    *,
    conflict: Sequence[str],
    update: Sequence[str] = (),
) -> None:
    """Insert ``rows``; on a ``conflict`` key clash update ``update`` columns (or do nothing).

    ``updated_at`` is bumped only when the table has it and something is updated.
    """
    if not rows:
        return
    statement = _statement(conn.dialect.name, table, tuple(conflict), tuple(update))
    conn.execute(statement, list(rows))


@functools.lru_cache(maxsize=256)
def _statement(
    dialect_name: str, table: Table, conflict: tuple[str, ...], update: tuple[str, ...]
) -> Any:
    # Built once per shape: constructing ``excluded`` is most of an upsert's Python cost.
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    statement = dialect.insert(table)
    if not update:
        return statement.on_conflict_do_nothing(index_elements=list(conflict))
    changes: dict[str, Any] = {name: statement.excluded[name] for name in update}
    if "updated_at" in table.c:
        changes["updated_at"] = func.now()
    return statement.on_conflict_do_update(index_elements=list(conflict), set_=changes)

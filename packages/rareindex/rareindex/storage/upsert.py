"""Dialect-aware multi-row ``INSERT … ON CONFLICT`` for SQLite and PostgreSQL.

A whole batch goes out in one statement, never one per row. On PostgreSQL each column travels as
one typed array, unpacked by ``unnest()``: the statement's text depends only on its columns, so
psycopg converts it once and caches it (a multi-row ``VALUES`` statement with thousands of
placeholders was parsed anew every time, ~5 ms each).

The columns themselves travel as :mod:`.pg_batch` encodes them: most as one joined text
each.

SQLite gets multi-row ``VALUES`` batches (SQLAlchemy's "insertmanyvalues", forced by a
``RETURNING`` clause).
A batch may name one key several times: such rows are first folded, in order, into the one row
that leaves the table as applying them one by one would (PostgreSQL refuses a statement that
updates a row twice). Rows go out sorted by key, so two writers lock rows in one order and cannot
deadlock.

Example:
    >>> upsert(conn, assets, rows, conflict=["asset_key"], update=["title"])  # doctest: +SKIP
    >>> merge(conn, auctions, rows, conflict=["source_id", "external_id"],    # doctest: +SKIP
    ...       merged=["title", "ends_at"])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    Connection,
    Table,
    bindparam,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from .pg_batch import Kinds, array_source, send

__all__ = ["append_rows", "executemany", "fold", "insert_rows", "merge", "update_rows", "upsert"]


def upsert(
    conn: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    *,
    conflict: Sequence[str],
    update: Sequence[str] = (),
) -> None:
    """Insert ``rows``; on a ``conflict`` key clash update ``update`` columns (or do nothing).

    ``updated_at`` is bumped only when the table has it and something is updated.
    """
    if not rows:
        return
    folded = fold(rows, conflict, replaced=update)
    _execute(conn, table, folded, (tuple(conflict), tuple(update), (), ()))


def merge(
    conn: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    *,
    conflict: Sequence[str],
    merged: Sequence[str],
    replace: Sequence[str] = (),
    returning: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Upsert where ``merged`` columns keep the stored value when the new one is NULL and
    ``replace`` columns take the new value; the rest keep what the first insert wrote.

    Returns the ``returning`` columns of every row as stored after the statement (nothing when
    ``returning`` is empty).
    """
    if not rows:
        return []
    folded = fold(rows, conflict, replaced=replace, merged=merged)
    shape = (tuple(conflict), tuple(replace), tuple(merged), tuple(returning))
    result = _execute(conn, table, folded, shape)
    if not returning:
        return []
    return [dict(row._mapping) for row in result]


_Shape = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""``(conflict, update, merged, returning)`` column names of an upsert."""


def _execute(
    conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]], shape: _Shape
) -> Any:
    if conn.dialect.name != "postgresql":
        if not shape[3]:  # nothing to return: one prepared statement, the rows bound in C
            return executemany(conn, _plain_statement(table, shape), rows)
        return conn.execute(_statement(table, shape), rows)
    columns = tuple(rows[0])
    return send(conn, table, rows, lambda kinds: _unnest_statement(table, columns, shape, kinds))


def insert_rows(
    conn: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    on_conflict: Callable[[Any, str], Any],
) -> None:
    """Insert ``rows`` (all with the same keys) with a caller-built conflict clause:
    ``on_conflict(insert, dialect_name)`` returns the statement (``insert.excluded`` works as
    usual). On PostgreSQL the rows go as one array per column to ``unnest``, on SQLite as one
    :func:`executemany`: one statement text whatever the batch size. Rows are sent as given
    (fold them first when a key may repeat)."""
    if not rows:
        return
    if conn.dialect.name != "postgresql":
        executemany(conn, _custom_statement(table, on_conflict), rows)
        return
    columns = tuple(rows[0])
    send(conn, table, rows, lambda kinds: _custom_unnest(table, columns, on_conflict, kinds))


def append_rows(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """A plain ``INSERT`` of ``rows`` (all with the same keys), no conflict clause: a clash is an
    error, as with ``conn.execute(insert(table), rows)``. One statement whatever the batch size:
    on PostgreSQL one array per column to ``unnest`` (psycopg's own executemany sends one ``INSERT``
    per row, in pipeline mode), on SQLite one :func:`executemany`. Rows go in the given order."""
    if not rows:
        return
    if conn.dialect.name != "postgresql":
        executemany(conn, _plain_insert(table), rows)
        return
    columns = tuple(rows[0])
    send(conn, table, rows, lambda kinds: _unnest_plain(table, columns, kinds))


@functools.lru_cache(maxsize=64)
def _plain_insert(table: Table) -> Any:
    return sqlite.insert(table)


@functools.lru_cache(maxsize=64)
def _unnest_plain(table: Table, columns: tuple[str, ...], kinds: Kinds) -> Any:
    return _unnest_insert(table, columns, kinds)


def update_rows(
    conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]], *, key: str
) -> None:
    """``UPDATE table SET … WHERE key = …`` for each row (all with the same keys, ``key`` among
    them), as one statement: on PostgreSQL ``UPDATE … FROM unnest(…)`` with one array per column,
    on SQLite one :func:`executemany`. Rows go in key order (concurrent writers lock rows
    in one order: no deadlock)."""
    if not rows:
        return
    ordered = sorted(rows, key=lambda row: str(row[key]))
    columns = tuple(ordered[0])
    if conn.dialect.name == "postgresql":
        send(conn, table, ordered, lambda kinds: _unnest_update(table, columns, key, kinds))
        return
    params = [{f"key_{key}" if c == key else c: row[c] for c in columns} for row in ordered]
    executemany(conn, _keyed_update(table, columns, key), params)


@functools.lru_cache(maxsize=64)
def _unnest_update(table: Table, columns: tuple[str, ...], key: str, kinds: Kinds) -> Any:
    source = array_source(table, columns, kinds)
    return (
        update(table)
        .where(table.c[key] == source.c[key])
        .values({c: source.c[c] for c in columns if c != key})
    )


@functools.lru_cache(maxsize=64)
def _keyed_update(table: Table, columns: tuple[str, ...], key: str) -> Any:
    return (
        update(table)
        .where(table.c[key] == bindparam(f"key_{key}"))
        .values({c: bindparam(c) for c in columns if c != key})
    )


@functools.lru_cache(maxsize=64)
def _custom_statement(table: Table, on_conflict: Callable[[Any, str], Any]) -> Any:
    return on_conflict(sqlite.insert(table), "sqlite")


@functools.lru_cache(maxsize=64)
def _custom_unnest(
    table: Table,
    columns: tuple[str, ...],
    on_conflict: Callable[[Any, str], Any],
    kinds: Kinds,
) -> Any:
    return on_conflict(_unnest_insert(table, columns, kinds), "postgresql")


def fold(
    rows: Sequence[Mapping[str, Any]],
    conflict: Sequence[str],
    *,
    replaced: Sequence[str] = (),
    merged: Sequence[str] = (),
) -> list[Mapping[str, Any]]:
    """One row per ``conflict`` key, equal in effect to applying ``rows`` in order, sorted by key.

    Per key the first row is what an insert writes; each later row then sets its ``replaced``
    columns, and its ``merged`` columns where it is not NULL (a ``COALESCE`` upsert). Rows whose
    key holds a NULL never clash (a unique index treats NULLs as distinct) and are kept apart.
    A row nothing was folded into is returned as given, not copied (rows are many, and most
    keys come once): read the result, do not change it.
    """
    by_key: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    copied: dict[tuple[Any, ...], dict[str, Any]] = {}  # keys folded into: their own copy
    alone: list[Mapping[str, Any]] = []
    key_of = itemgetter(*conflict) if len(conflict) > 1 else lambda row: (row[conflict[0]],)
    for row in rows:
        key = key_of(row)
        if None in key:
            alone.append(row)
            continue
        first = by_key.get(key)
        if first is None:
            by_key[key] = row
            continue
        found = copied.get(key)
        if found is None:
            found = by_key[key] = copied[key] = dict(first)
        for column in replaced:
            found[column] = row[column]
        for column in merged:
            if row[column] is not None:
                found[column] = row[column]
    ordered = [by_key[k] for k in sorted(by_key, key=_sort_key)]
    return ordered + alone


def _sort_key(key: tuple[Any, ...]) -> tuple[str, ...]:
    # Keys mix text, datetimes and numbers; their text sorts them the same way on every run.
    return tuple(v if isinstance(v, str) else str(v) for v in key)


@functools.lru_cache(maxsize=256)
def _unnest_statement(table: Table, columns: tuple[str, ...], shape: _Shape, kinds: Kinds) -> Any:
    """PostgreSQL: ``INSERT INTO t (…) SELECT * FROM unnest(…) ON CONFLICT …``, one array
    parameter per column (:func:`.pg_batch.array_source`), cast to its type from the table (NULLs
    and empty batches need no guessing)."""
    return _on_conflict(_unnest_insert(table, columns, kinds), table, shape)


def _unnest_insert(table: Table, columns: tuple[str, ...], kinds: Kinds) -> Any:
    """``INSERT INTO t (…) SELECT * FROM unnest(…)``."""
    source = array_source(table, columns, kinds)
    rows = select(*(source.c[c] for c in columns))
    return postgresql.insert(table).from_select(list(columns), rows)


def executemany(conn: Connection, statement: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """``statement`` once per row of ``rows`` (all with the same keys), as one executemany.

    On SQLite the statement is compiled once per shape and the rows go to ``sqlite3``'s
    ``executemany`` as tuples, each value through its column's bind processing (dates, JSON):
    SQLAlchemy's own executemany builds a parameter dict per row in Python, which was most of a
    write's cost. Elsewhere it is ``conn.execute(statement, rows)``.
    """
    if not rows:
        return
    if conn.dialect.name != "sqlite":
        conn.execute(statement, list(rows))
        return
    sql, names, processors = _compiled(conn.dialect, statement, tuple(rows[0]))
    # Column by column, then zipped into rows: itemgetter and map loop in C, and a column
    # without bind processing costs no Python call per value.
    columns = []
    for name, process in zip(names, processors, strict=True):
        values = list(map(itemgetter(name), rows))
        columns.append(values if process is None else list(map(process, values)))
    conn.exec_driver_sql(sql, list(zip(*columns, strict=True)))


@functools.lru_cache(maxsize=256)
def _compiled(
    dialect: Any, statement: Any, keys: tuple[str, ...]
) -> tuple[str, list[str], list[Any]]:
    """The statement's SQL with positional parameters, the parameter names in order, and each
    one's bind processor (None: the value goes as it is)."""
    compiled = statement.compile(dialect=dialect, column_keys=list(keys))
    names = list(compiled.positiontup or ())
    processors = [
        compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
    ]
    return compiled.string, names, processors


@functools.lru_cache(maxsize=256)
def _plain_statement(table: Table, shape: _Shape) -> Any:
    """SQLite, nothing returned: ``INSERT … ON CONFLICT`` for :func:`executemany`."""
    return _on_conflict(sqlite.insert(table), table, shape, with_returning=False)


@functools.lru_cache(maxsize=256)
def _statement(table: Table, shape: _Shape) -> Any:
    """SQLite: a plain ``INSERT … ON CONFLICT``, sent as multi-row ``VALUES`` batches."""
    # Built once per shape: constructing ``excluded`` is most of an upsert's Python cost.
    return _on_conflict(sqlite.insert(table), table, shape)


def _on_conflict(
    statement: Any, table: Table, shape: _Shape, *, with_returning: bool = True
) -> Any:
    conflict, update, merged, returning = shape
    if not update and not merged:
        statement = statement.on_conflict_do_nothing(index_elements=list(conflict))
    else:
        changes: dict[str, Any] = {name: statement.excluded[name] for name in update}
        changes.update({c: func.coalesce(statement.excluded[c], table.c[c]) for c in merged})
        if "updated_at" in table.c:
            changes["updated_at"] = func.now()
        statement = statement.on_conflict_do_update(index_elements=list(conflict), set_=changes)
    if not with_returning:
        return statement
    # On SQLite, RETURNING makes SQLAlchemy send an executemany as multi-row VALUES batches
    # ("insertmanyvalues"), not one round trip per row.
    columns = returning or conflict[:1]
    return statement.returning(*(table.c[c] for c in columns))

"""Dialect-aware multi-row ``INSERT … ON CONFLICT`` for SQLite and PostgreSQL.

A whole batch goes out in one statement, never one per row. On PostgreSQL each column travels as
one typed array, unpacked by ``unnest()``: the statement's text depends only on its columns, so
psycopg converts it once and caches it (a multi-row ``VALUES`` statement with thousands of
placeholders was parsed anew every time, ~5 ms each).

A column of text, integers, floats, booleans, decimals, dates or JSON goes as one text parameter:
its values' texts joined by U+001F (a NULL written U+001E), split on the server by
``string_to_array()`` and cast to the column's array type. Timestamps and other types go as binary
arrays. psycopg builds a binary array in Python, element by element (a ``struct.pack`` each, after
the column's bind processor), where the join is one call in C. Replaying the writes of ``python -m
bench.normalize --quick`` (77 statements, 26,000 rows; medians of 9 alternating runs, 2026-12-03
16:43 UTC, load 4.8 on 2 cores), the writers' client CPU went from 268 to 165 ms and the server's
stayed the same (491 and 493 ms). One JSON document per statement (``jsonb_to_record`` of one array
per column) cut the client further, to 133 ms, but raised the server to 552 ms: PostgreSQL reads a
string or a timestamp out of JSON at two to four times the cost of its binary form. Timestamps stay
binary for that reason: their text costs the server ~1 µs each to read, 3-4 times the binary form.
A batch with a value whose text is not sure to store what its binary form stores (a separator in a
text, a NaN Decimal, an int among floats, a str subclass …) goes all in binary arrays, as every
batch did before (a second statement text for those columns, cached the same way).

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
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date
from decimal import Decimal
from operator import attrgetter, itemgetter
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Connection,
    Date,
    Enum,
    Float,
    Integer,
    String,
    Table,
    bindparam,
    cast,
    func,
    literal_column,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.elements import Null

from .types import ExactDecimal, UTCDateTime

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
    return _send(conn, table, rows, lambda kinds: _unnest_statement(table, columns, shape, kinds))


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
    _send(conn, table, rows, lambda kinds: _custom_unnest(table, columns, on_conflict, kinds))


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
    _send(conn, table, rows, lambda kinds: _unnest_plain(table, columns, kinds))


@functools.lru_cache(maxsize=64)
def _plain_insert(table: Table) -> Any:
    return sqlite.insert(table)


@functools.lru_cache(maxsize=64)
def _unnest_plain(table: Table, columns: tuple[str, ...], kinds: _Kinds) -> Any:
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
        _send(conn, table, ordered, lambda kinds: _unnest_update(table, columns, key, kinds))
        return
    params = [{f"key_{key}" if c == key else c: row[c] for c in columns} for row in ordered]
    executemany(conn, _keyed_update(table, columns, key), params)


@functools.lru_cache(maxsize=64)
def _unnest_update(table: Table, columns: tuple[str, ...], key: str, kinds: _Kinds) -> Any:
    source = _source(table, columns, kinds)
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


def _send(
    conn: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    statement: Callable[[_Kinds], Any],
) -> Any:
    """PostgreSQL: ``statement(kinds)`` with each column's values joined into one text (a binary
    array for timestamps and other types), or ``statement(None)`` with every column a binary
    array when some value has no sure text form (:func:`_joined`)."""
    kinds = _kinds(conn.dialect, table, tuple(rows[0]))
    params = _joined(conn.dialect, table, rows, kinds)
    if params is None:
        return _send_arrays(conn, statement(None), _arrays(conn, table, rows))
    return _send_arrays(conn, statement(kinds), params)


_Kinds = tuple[int, ...] | None
"""Each column's kind (``_STR`` … ``_BINARY``), or None for an all-binary statement."""
_SEP, _NULL = "\x1f", "\x1e"  # unit and record separators (a batch with one in a value: binary)
_STR, _INT, _BOOL, _FLOAT, _DECIMAL, _DATE, _JSON, _UTC, _BINARY = range(9)
_NONE = type(None)
_TYPES: dict[int, frozenset[type]] = {
    _STR: frozenset({str, _NONE}),
    _INT: frozenset({int, _NONE}),
    _BOOL: frozenset({bool, _NONE}),
    _FLOAT: frozenset({float, _NONE}),  # psycopg refuses a list mixing ints and floats
    _DECIMAL: frozenset({Decimal, int, _NONE}),
    _DATE: frozenset({date, _NONE}),
}
_TEXT: dict[int, Callable[[Any], str] | None] = {
    _STR: None,
    _INT: str,
    _BOOL: str,  # 'True', 'False': boolean input reads them
    _FLOAT: repr,  # the shortest text that reads back as the same float ('nan', 'inf', '-0.0')
    _DECIMAL: str,
    _DATE: date.isoformat,
}
_JSON_NULLS = frozenset({type(JSON.NULL), Null})  # values the JSON bind processing treats apart


def _joined(
    dialect: Any, table: Table, rows: Sequence[Mapping[str, Any]], kinds: tuple[int, ...]
) -> dict[str, Any] | None:
    """The batch's parameters: ``t0`` … the text of each value of a column joined by ``_SEP``
    (``_NULL`` for a NULL), ``c0`` … a column of another type as a list; None when a value is
    not of its column's usual type or its text holds a separator (the binary arrays then go,
    and do whatever they did with it)."""
    columns = tuple(rows[0])
    params: dict[str, Any] = {}
    try:
        for i, (column, kind) in enumerate(zip(columns, kinds, strict=True)):
            values = list(map(itemgetter(column), rows))
            if kind >= _UTC:  # a binary array, each value bind-processed as before
                if kind == _UTC and set(map(_tzinfo, filter(None, values))) <= {UTC}:
                    params[f"c{i}"] = values  # already UTC: the processing would change nothing
                    continue
                process = _processors(dialect, table, (column,))[0]
                params[f"c{i}"] = values if process is None else list(map(process, values))
                continue
            types = set(map(type, values))
            if kind == _JSON:
                if not types.isdisjoint(_JSON_NULLS):
                    return None
                texts, nulls = _json_texts(dialect, table.c[column].type, values, types)
            else:
                if not types <= _TYPES[kind]:
                    return None  # a str for a number, a float for a Decimal, a datetime …
                nulls = values.count(None) if _NONE in types else 0
                texts = _texts(values, _TEXT[kind], nulls)
            text = _SEP.join(texts)
            if not text or text.count(_SEP) != len(values) - 1 or text.count(_NULL) != nulls:
                return None  # one '' (it would read as no value), or a separator in a value
            if kind == _DECIMAL and ("N" in text or "I" in text):
                return None  # NaN, sNaN, Infinity: the binary form's own handling
            params[f"t{i}"] = text
    except Exception:  # the binary path raises its own error for the value, as before
        return None
    return params


def _texts(values: list[Any], convert: Callable[[Any], str] | None, nulls: int) -> list[str]:
    if not nulls:
        return values if convert is None else list(map(convert, values))
    if convert is None:
        return [_NULL if v is None else v for v in values]
    return [_NULL if v is None else convert(v) for v in values]


def _json_texts(
    dialect: Any, type_: Any, values: list[Any], types: set[type]
) -> tuple[list[str], int]:
    """Each value as the JSON bind processing writes it: the engine's serializer (psycopg's
    default, ``json.dumps``, without one); None is JSON ``null`` unless the type says SQL NULL."""
    dumps = dialect._json_serializer or json.dumps
    if _NONE in types and type_.dialect_impl(dialect).none_as_null:
        nulls = values.count(None)
        return [_NULL if v is None else dumps(v) for v in values], nulls
    return list(map(dumps, values)), 0


_tzinfo = attrgetter("tzinfo")


@functools.lru_cache(maxsize=256)
def _kinds(dialect: Any, table: Table, columns: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(_kind(dialect, table.c[name].type) for name in columns)


_BASES = ((Float, _FLOAT), (Integer, _INT), (String, _STR), (Date, _DATE))


def _kind(dialect: Any, type_: Any) -> int:
    if isinstance(type_, UTCDateTime):
        return _UTC
    if isinstance(type_, ExactDecimal):
        return _DECIMAL
    impl = type_.dialect_impl(dialect)
    if isinstance(impl, JSON):
        return _JSON
    if isinstance(impl, Boolean):
        return _BOOL  # its bind processing only checks and keeps a bool (the only type let in)
    if impl.bind_processor(dialect) is not None or isinstance(impl, Enum):
        return _BINARY
    for base, kind in _BASES:
        if isinstance(impl, base):
            return kind
    return _BINARY


def _send_arrays(conn: Connection, statement: Any, arrays: dict[str, Any]) -> Any:
    """PostgreSQL: ``statement`` with its ``c0``, ``c1`` … arrays sent in binary (and its ``t0``
    … joined texts as text). As a text array, psycopg quotes every element by a regular
    expression (a JSON document's every quote: 120,000 substitutions for 2,000 records); binary
    sends each element as it is, and a joined text needs no quoting at all."""
    return conn.exec_driver_sql(_binary_sql(conn.dialect, statement), arrays)


@functools.lru_cache(maxsize=256)
def _binary_sql(dialect: Any, statement: Any) -> str:
    """The statement's SQL with its array parameters as psycopg binary placeholders."""
    sql = str(statement.compile(dialect=dialect))
    return re.sub(r"%\((c\d+)\)s", r"%(\1)b", sql)


def _arrays(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """PostgreSQL: one array per column (``c0``, ``c1`` …), each value bind-processed."""
    columns = tuple(rows[0])
    arrays: dict[str, list[Any]] = {}
    processors = _processors(conn.dialect, table, columns)
    for i, (column, process) in enumerate(zip(columns, processors, strict=True)):
        values = list(map(itemgetter(column), rows))
        arrays[f"c{i}"] = values if process is None else list(map(process, values))
    return arrays


@functools.lru_cache(maxsize=64)
def _custom_statement(table: Table, on_conflict: Callable[[Any, str], Any]) -> Any:
    return on_conflict(sqlite.insert(table), "sqlite")


@functools.lru_cache(maxsize=64)
def _custom_unnest(
    table: Table,
    columns: tuple[str, ...],
    on_conflict: Callable[[Any, str], Any],
    kinds: _Kinds,
) -> Any:
    return on_conflict(_unnest_insert(table, columns, kinds), "postgresql")


@functools.lru_cache(maxsize=256)
def _processors(dialect: Any, table: Table, columns: tuple[str, ...]) -> list[Any]:
    """Each column's own bind processing (UTC for timestamps, the JSON wrapper …), applied per
    element: the arrays themselves go to psycopg untyped, and the SQL casts them."""
    return [table.c[c].type.dialect_impl(dialect).bind_processor(dialect) for c in columns]


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
def _unnest_statement(table: Table, columns: tuple[str, ...], shape: _Shape, kinds: _Kinds) -> Any:
    """PostgreSQL: ``INSERT INTO t (…) SELECT * FROM unnest(…) ON CONFLICT …``, one array
    parameter per column (:func:`_source`), cast to its type from the table (NULLs and empty
    batches need no guessing)."""
    return _on_conflict(_unnest_insert(table, columns, kinds), table, shape)


def _unnest_insert(table: Table, columns: tuple[str, ...], kinds: _Kinds) -> Any:
    """``INSERT INTO t (…) SELECT * FROM unnest(…)``."""
    source = _source(table, columns, kinds)
    rows = select(*(source.c[c] for c in columns))
    return postgresql.insert(table).from_select(list(columns), rows)


def _source(table: Table, columns: tuple[str, ...], kinds: _Kinds) -> Any:
    """``unnest(…) AS batch(columns…)``: each column one typed array, from binary (``c0`` …) or
    split from its joined text (``t0`` …), as ``kinds`` say; all binary when ``kinds`` is None."""
    if kinds is None:
        return _unnest_source(table, columns)
    arrays = []
    for i, (name, kind) in enumerate(zip(columns, kinds, strict=True)):
        array_type = postgresql.ARRAY(table.c[name].type)
        if kind >= _UTC:
            arrays.append(cast(bindparam(f"c{i}"), array_type))
        else:
            split = func.string_to_array(bindparam(f"t{i}"), _SEP_SQL, _NULL_SQL)
            arrays.append(cast(split, array_type))
    return func.unnest(*arrays).table_valued(*columns).render_derived(name="batch")


_SEP_SQL: Any = literal_column(r"E'\x1f'")  # _SEP and _NULL, as SQL
_NULL_SQL: Any = literal_column(r"E'\x1e'")


def _unnest_source(table: Table, columns: tuple[str, ...]) -> Any:
    """``unnest(CAST(:c0 AS type[]), …) AS batch(columns…)``: one typed array per column."""
    types = [postgresql.ARRAY(table.c[c].type) for c in columns]
    arrays = [cast(bindparam(f"c{i}"), t) for i, t in enumerate(types)]
    return func.unnest(*arrays).table_valued(*columns).render_derived(name="batch")


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

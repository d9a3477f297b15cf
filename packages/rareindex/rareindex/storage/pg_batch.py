"""A batch's columns as PostgreSQL parameters, for the one-statement writes of :mod:`.upsert`.

Each column travels as one array, unpacked by ``unnest()`` (:func:`array_source`), so the
statement's text depends only on its columns and their kinds.

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
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.elements import Null

from .types import ExactDecimal, UTCDateTime

__all__ = ["Kinds", "array_source", "send"]


def send(
    conn: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    statement: Callable[[Kinds], Any],
) -> Any:
    """PostgreSQL: ``statement(kinds)`` with each column's values joined into one text (a binary
    array for timestamps and other types), or ``statement(None)`` with every column a binary
    array when some value has no sure text form (:func:`_joined`)."""
    kinds = _kinds(conn.dialect, table, tuple(rows[0]))
    params = _joined(conn.dialect, table, rows, kinds)
    if params is None:
        return _send_arrays(conn, statement(None), _arrays(conn, table, rows))
    return _send_arrays(conn, statement(kinds), params)


Kinds = tuple[int, ...] | None
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


@functools.lru_cache(maxsize=256)
def _processors(dialect: Any, table: Table, columns: tuple[str, ...]) -> list[Any]:
    """Each column's own bind processing (UTC for timestamps, the JSON wrapper …), applied per
    element: the arrays themselves go to psycopg untyped, and the SQL casts them."""
    return [table.c[c].type.dialect_impl(dialect).bind_processor(dialect) for c in columns]


def array_source(table: Table, columns: tuple[str, ...], kinds: Kinds) -> Any:
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

"""storage.upsert on PostgreSQL stores every value exactly as the all-binary path stores it.

Each public writer sends a batch's text, number, boolean, date and JSON columns as one joined text
per column (split by ``string_to_array``) and the rest as binary arrays; a batch holding a value
without a sure text form goes all in binary arrays. Every case here is written both ways (the
binary path forced by making ``_joined`` give up) and the two tables compared value for value, in
PostgreSQL's own text of each value, beside explicit expectations for the tricky ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    Engine,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    event,
    null,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

from rareindex.storage import pg_batch
from rareindex.storage.types import ExactDecimal, JSONDoc, UTCDateTime
from rareindex.storage.upsert import append_rows, insert_rows, merge, update_rows, upsert

scratch = MetaData()
values = Table(
    "ri_test_upsert_values",
    scratch,
    Column("key", Text, primary_key=True),
    Column("note", Text),
    Column("count", Integer),
    Column("big", BigInteger),
    Column("score", Float),
    Column("active", Boolean),
    Column("price", ExactDecimal()),
    Column("seen_at", UTCDateTime()),
    Column("day", Date),
    Column("doc", JSONDoc),
    Column("strict", JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")),
    Column("blob", LargeBinary),
)
OTHERS = [c.name for c in values.c if c.name != "key"]
PARIS = timezone(timedelta(hours=1))


@pytest.fixture
def pg(pg_engine: Engine) -> Iterator[Engine]:
    scratch.create_all(pg_engine)
    try:
        yield pg_engine
    finally:
        scratch.drop_all(pg_engine)


def _row(key: str, **given: object) -> dict[str, object]:
    return {"key": key} | dict.fromkeys(OTHERS) | given


def _do_nothing(statement: Any, dialect_name: str) -> Any:
    return statement.on_conflict_do_nothing(index_elements=["key"])


def _write(conn: Any, writer: str, rows: list[dict[str, object]]) -> list[dict[str, Any]]:
    if writer == "upsert":
        upsert(conn, values, rows, conflict=["key"], update=OTHERS)
    elif writer == "merge":
        return merge(
            conn, values, rows, conflict=["key"], merged=OTHERS, returning=["key", *OTHERS]
        )
    elif writer == "insert_rows":
        insert_rows(conn, values, rows, _do_nothing)
    elif writer == "append_rows":
        append_rows(conn, values, rows)
    else:
        append_rows(conn, values, [{"key": row["key"]} for row in rows])
        update_rows(conn, values, rows, key="key")
    return []


WRITERS = ["upsert", "merge", "insert_rows", "append_rows", "update_rows"]

# Each column as PostgreSQL writes it out: two ways of storing that differ here differ in the test.
READ = text(
    "SELECT key, note, count::text, big::text, score::text, active::text, price::text,"
    " to_char(seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS seen_at, day::text,"
    " doc::text, doc IS NULL AS doc_is_sql_null, strict::text,"
    " strict IS NULL AS strict_is_sql_null, encode(blob, 'hex') AS blob"
    " FROM ri_test_upsert_values ORDER BY key"
)


def _stored(
    db: Engine, writer: str, rows: list[dict[str, object]], *, binary: bool
) -> tuple[dict[str, dict[str, Any]], list[str], str]:
    """What ``writer`` stores for ``rows`` (in a transaction rolled back after), the repr of what
    it returned, and the statements it sent."""
    sent: list[str] = []

    def listen(*args: Any) -> None:
        sent.append(args[2])

    event.listen(db, "before_cursor_execute", listen)
    try:
        with pytest.MonkeyPatch.context() as patch, db.connect() as conn, conn.begin() as tx:
            if binary:
                patch.setattr(pg_batch, "_joined", lambda *args: None)
            back = _write(conn, writer, rows)
            stored = {r.key: dict(r._mapping) for r in conn.execute(READ)}
            tx.rollback()
    finally:
        event.remove(db, "before_cursor_execute", listen)
    returned = repr(sorted((sorted(r.items()) for r in back), key=repr))
    return stored, sent, returned


def _both(
    db: Engine, writer: str, rows: list[dict[str, object]]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    joined, sent, returned = _stored(db, writer, rows, binary=False)
    binary, _, returned_binary = _stored(db, writer, rows, binary=True)
    assert joined == binary
    assert returned == returned_binary
    return joined, sent


def _joined_sent(sent: list[str]) -> bool:
    return any("string_to_array" in sql for sql in sent)


EDGES = [
    _row(
        "a",
        note="back\\slash \"quoted\" 'single' {braces,comma} é ✓ 🎴",
        count=-(2**31),
        big=2**62,
        score=0.1,
        active=True,
        price=Decimal("1234.567891"),
        seen_at=datetime(2026, 12, 3, 16, 11, 34, 123456, tzinfo=UTC),
        day=date(1, 1, 1),
        doc={"é": [1.5, None, 'x\\y "z"'], "n": None, "ctl": "\x1f\x1e\n"},
        strict={"a": 1},
        blob=b"\x00\x01\xff",
    ),
    _row(
        "b",
        note="",
        count=0,
        score=-0.0,
        active=False,
        price=Decimal("1E+2"),
        seen_at=datetime(2026, 11, 30, 13, 0, 0, 1, tzinfo=PARIS),
        day=date(9999, 12, 31),
        doc=None,  # JSON null, as the JSON bind processing stores it
        strict=None,  # SQL NULL: none_as_null
        blob=b"",
    ),
    _row(
        "c",
        note="NULL",
        count=2**31 - 1,
        big=-1,
        score=float("nan"),
        price=Decimal("0.0000005"),
        seen_at=datetime(2026, 3, 29, 1, 30, tzinfo=ZoneInfo("Europe/Paris")),
        doc=[1, "two", {"three": 3.0}],
        strict=[],
    ),
    _row(
        "d",
        note="  spaces\ttab\nnewline\r\n",
        score=float("inf"),
        price=5,
        doc="a string",
        strict="",
    ),
    _row(
        "e",
        score=1e16,
        price=Decimal("-0"),
        doc={1: "an int key: the stdlib's serializer writes it"},
        strict={"x": float("nan")},
    ),
    _row("f", score=float("-inf"), price=Decimal("12345678901234.123456"), doc=True),
    _row("g", score=5e-324, price=Decimal("-0.0000015"), count=7, doc=0),
    _row(
        "h", score=0.30000000000000004, price=Decimal("1.23456789E-3"), doc=1.7976931348623157e308
    ),
]


@pytest.mark.parametrize("writer", WRITERS)
def test_every_edge_value_is_stored_as_the_binary_arrays_store_it(pg: Engine, writer: str) -> None:
    stored, sent = _both(pg, writer, EDGES)
    assert _joined_sent(sent)  # the joined texts went, not the fallback
    a, b, c, d, e, f, g, h = (stored[k] for k in "abcdefgh")
    assert a["note"] == EDGES[0]["note"] and b["note"] == "" and c["note"] == "NULL"
    assert d["note"] == "  spaces\ttab\nnewline\r\n"
    assert (a["count"], c["count"], a["big"], c["big"]) == (
        str(-(2**31)),
        "2147483647",
        str(2**62),
        "-1",
    )
    assert [s["score"] for s in (a, b, c, d, e, f, g, h)] == [
        "0.1", "-0", "NaN", "Infinity", "1e+16", "-Infinity", "5e-324", "0.30000000000000004",
    ]  # fmt: skip
    assert (a["active"], b["active"], c["active"]) == ("true", "false", None)
    assert [s["price"] for s in (a, b, c, d, e, f, g, h)] == [
        "1234.567891", "100.000000", "0.000001", "5.000000", "0.000000",
        "12345678901234.123456", "-0.000002", "0.001235",
    ]  # fmt: skip
    assert (a["seen_at"], b["seen_at"], c["seen_at"]) == (
        "2026-12-03 16:11:34.123456",
        "2026-11-30 12:00:00.000001",
        "2026-03-29 00:30:00.000000",
    )
    assert (a["day"], b["day"], c["day"]) == ("0001-01-01", "9999-12-31", None)
    assert a["doc"] == '{"n": null, "é": [1.5, null, "x\\\\y \\"z\\""], "ctl": "\\u001f\\u001e\\n"}'
    assert (b["doc"], b["doc_is_sql_null"]) == ("null", False)  # None: JSON null
    assert (b["strict"], b["strict_is_sql_null"]) == (None, True)  # none_as_null: SQL NULL
    assert (c["doc"], d["doc"], d["strict"]) == ('[1, "two", {"three": 3.0}]', '"a string"', '""')
    assert e["doc"] == '{"1": "an int key: the stdlib\'s serializer writes it"}'
    assert e["strict"] == '{"x": null}'  # orjson writes NaN as null
    assert (f["doc"], g["doc"]) == ("true", "0")
    assert Decimal(h["doc"]) == Decimal("1.7976931348623157e308")  # jsonb writes it in full
    assert (a["blob"], b["blob"], c["blob"]) == ("0001ff", "", None)


FALLBACKS = {
    "a unit separator in a text": [_row("x", note="a\x1fb"), _row("y", note="c")],
    "a record separator in a text": [_row("x", note="\x1e"), _row("y")],
    "one empty text alone": [_row("x", note="")],
    "a Decimal NaN": [_row("x", price=Decimal("NaN")), _row("y", price=Decimal("1"))],
    "a signaling NaN": [_row("x", price=Decimal("sNaN"))],
    "JSON.NULL": [_row("x", doc=JSON.NULL, strict=JSON.NULL)],
    "an SQL null() in a JSON column": [_row("x", doc=null(), strict=null())],
    "a str in an integer column": [_row("x", count="12")],
    "an int subclass (bool) in an integer column": [_row("x", count=True)],
    "a Decimal in a float column": [_row("x", score=Decimal("0.5"))],
    "ints in a float column": [_row("x", score=1), _row("y", score=2)],
    "a datetime in a date column": [_row("x", day=datetime(2026, 1, 1, 12, tzinfo=UTC))],
    "a str subclass": [_row("x", note=type("Label", (str,), {})("label"))],
}


@pytest.mark.parametrize("case", list(FALLBACKS))
@pytest.mark.parametrize("writer", ["upsert", "update_rows"])
def test_a_value_without_a_sure_text_goes_in_binary_arrays(
    pg: Engine, writer: str, case: str
) -> None:
    stored, sent = _both(pg, writer, FALLBACKS[case])
    assert not _joined_sent(sent[-1:])
    assert len(stored) == len(FALLBACKS[case])
    if case == "a unit separator in a text":
        assert stored["x"]["note"] == "a\x1fb"
    if case == "one empty text alone":
        assert stored["x"]["note"] == ""
    if case == "JSON.NULL":
        assert (stored["x"]["doc"], stored["x"]["strict"]) == ("null", "null")
    if case == "an SQL null() in a JSON column":
        assert stored["x"]["doc_is_sql_null"] and stored["x"]["strict_is_sql_null"]


REFUSED: dict[str, Callable[[], list[dict[str, object]]]] = {
    "a NUL in a text": lambda: [_row("x", note="a\x00b")],
    "a NUL in a JSON string": lambda: [_row("x", doc={"a": "\x00"})],
    "an integer out of range": lambda: [_row("x", count=2**40)],
    "an integer past 64 bits": lambda: [_row("x", big=2**70)],
    "a naive datetime": lambda: [_row("x", seen_at=datetime(2026, 1, 1))],
    "a float for a Decimal": lambda: [_row("x", price=1.5)],
    "a Decimal past NUMERIC(20, 6)": lambda: [_row("x", price=Decimal("1E+20"))],
    "a lone surrogate": lambda: [_row("x", note="\ud800")],
    "an int among floats": lambda: [_row("x", score=1.5), _row("y", score=2)],
    "a value JSON cannot write": lambda: [_row("x", doc={"when": {1, 2}})],
}


def _error(db: Engine, rows: list[dict[str, object]], *, binary: bool) -> type[BaseException]:
    with pytest.raises(Exception) as raised:  # the class, compared below
        _stored(db, "upsert", rows, binary=binary)
    return raised.type


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_value_raises_what_the_binary_arrays_raise(pg: Engine, case: str) -> None:
    rows = REFUSED[case]()
    assert _error(pg, rows, binary=False) is _error(pg, rows, binary=True)


def test_the_statement_text_depends_only_on_the_columns(pg: Engine) -> None:
    first = _both(pg, "upsert", EDGES[:2])[1]
    second = _both(pg, "upsert", [_row("z", note="other", score=math.pi)] * 1)[1]
    assert first[-1] == second[-1]

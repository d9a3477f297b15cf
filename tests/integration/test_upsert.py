"""storage.upsert on both databases: one statement per batch (on PostgreSQL typed arrays through
unnest()), with every column type the schema uses surviving the trip, NULLs included."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from sqlalchemy import (
    Boolean,
    Column,
    Date,
    Engine,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    event,
    select,
)

from rareindex.storage.types import ExactDecimal, JSONDoc, UTCDateTime
from rareindex.storage.upsert import merge, upsert

scratch = MetaData()
things = Table(
    "ri_test_upsert_things",
    scratch,
    Column("key", Text, primary_key=True),
    Column("price", ExactDecimal()),
    Column("seen_at", UTCDateTime()),
    Column("doc", JSONDoc),
    Column("count", Integer),
    Column("score", Float),
    Column("active", Boolean),
    Column("day", Date),
    Column("note", Text),
)

PARIS = timezone(timedelta(hours=1))
T0 = datetime(2026, 11, 30, 13, 0, tzinfo=PARIS)


@pytest.fixture
def db(any_engine: Engine) -> Iterator[Engine]:
    scratch.create_all(any_engine)
    try:
        yield any_engine
    finally:
        scratch.drop_all(any_engine)


def _row(key: str, **values: object) -> dict[str, object]:
    base: dict[str, object] = {
        "key": key, "price": None, "seen_at": None, "doc": None, "count": None, "score": None,
        "active": None, "day": None, "note": None,
    }  # fmt: skip
    return base | values


def _stored(db: Engine) -> dict[str, dict[str, object]]:
    with db.connect() as conn:
        return {r.key: dict(r._mapping) for r in conn.execute(select(things))}


def test_every_column_type_and_null_survives_an_upsert(db: Engine) -> None:
    statements: list[str] = []
    event.listen(db, "before_cursor_execute", lambda *a: statements.append(a[2]))
    rows = [
        _row(
            "a",
            price=Decimal("1234.567891"),
            seen_at=T0,
            doc={"flags": ["lot", "hidden_price"], "n": None, "é": 1.5},
            count=2**30,
            score=0.25,
            active=True,
            day=date(2026, 11, 30),
            note="Pokémon ✓",
        ),
        _row("b", doc=["x", {"y": [1, 2]}], active=False),  # a JSON list is a value, not an array
        _row("c"),  # every other column NULL: nothing to infer a type from
    ]
    with db.begin() as conn:
        upsert(conn, things, rows, conflict=["key"])
    assert len(statements) == 1  # one statement for the batch, on both databases
    stored = _stored(db)
    a, b, c = stored["a"], stored["b"], stored["c"]
    assert a["price"] == Decimal("1234.567891")
    assert a["seen_at"] == T0 and a["seen_at"].tzinfo == UTC  # type: ignore[union-attr]
    assert a["doc"] == {"flags": ["lot", "hidden_price"], "n": None, "é": 1.5}
    assert (a["count"], a["score"], a["active"], a["day"]) == (
        2**30,
        0.25,
        True,
        date(2026, 11, 30),
    )
    assert a["note"] == "Pokémon ✓"
    assert b["doc"] == ["x", {"y": [1, 2]}] and b["active"] is False
    assert c["price"] is None and c["seen_at"] is None and c["count"] is None
    assert c["doc"] is None  # JSON null or SQL NULL, it reads back as None


def test_a_batch_naming_a_key_twice_updates_it_as_in_order_and_merge_keeps_stored_values(
    db: Engine,
) -> None:
    with db.begin() as conn:
        upsert(conn, things, [_row("k", note="first", count=1)], conflict=["key"])
        upsert(
            conn,
            things,
            [_row("k", note="second", count=2), _row("k", note="third", count=3)],
            conflict=["key"],
            update=["note"],
        )
    assert (_stored(db)["k"]["note"], _stored(db)["k"]["count"]) == ("third", 1)
    with db.begin() as conn:
        back = merge(
            conn,
            things,
            [_row("k", price=Decimal("5"), note=None), _row("m", note="new")],
            conflict=["key"],
            merged=["price", "note"],
            returning=["key", "note", "price"],
        )
    assert sorted((r["key"], r["note"], r["price"]) for r in back) == [
        ("k", "third", Decimal("5")),  # NULL kept the stored note; the price was merged in
        ("m", "new", None),
    ]

"""Storage building blocks that need no database server: ids, column types, blobs."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Column, MetaData, Table, insert, select
from sqlalchemy.exc import StatementError

from rareindex.storage import BlobStore, make_engine, new_id
from rareindex.storage.types import ExactDecimal, UTCDateTime


def test_ids_are_prefixed_unique_and_time_sortable() -> None:
    first = new_id("raw")
    time.sleep(0.002)
    ids = [new_id("raw") for _ in range(1000)]
    assert re.fullmatch(r"raw_[0-9A-HJKMNP-TV-Z]{26}", first)
    assert len(set(ids)) == 1000
    assert first < min(ids)
    with pytest.raises(ValueError, match="known: ast"):
        new_id("xyz")


@pytest.fixture
def typed_table(tmp_path: Path):  # type: ignore[no-untyped-def]
    engine = make_engine(f"sqlite:///{tmp_path / 't.db'}")
    table = Table("t", MetaData(), Column("at", UTCDateTime()), Column("amount", ExactDecimal()))
    table.metadata.create_all(engine)
    yield engine, table
    engine.dispose()


def test_stable_ids_never_change() -> None:
    """A stable id is a function of its natural key, the same in every release: a replay into an
    empty database must rebuild the ids stored before (values from before its encoding was
    unrolled, commit 0ddc499)."""
    from rareindex.storage.ids import stable_id

    sold = datetime(2026, 4, 1, 12, tzinfo=UTC)
    assert stable_id("sal", "shopify", "ext-1", sold) == "sal_F1K45ZKTTCF85WDWRMWA0E79FE"
    assert stable_id("nrm", "raw_01abc", "3", 0) == "nrm_E07K225T6EYBGH7RMPNRDV9297"
    assert stable_id("lst", "src", "x") == "lst_7AHFN3MZ8EA19QG0GC02FXTGDG"
    with pytest.raises(ValueError, match="unknown id prefix"):
        stable_id("zzz", "x")


def test_timestamps_come_back_aware_in_utc(typed_table) -> None:  # type: ignore[no-untyped-def]
    engine, table = typed_table
    local = datetime(2026, 11, 30, 10, 0, tzinfo=timezone(timedelta(hours=9)))
    with engine.begin() as conn:
        conn.execute(insert(table).values(at=local))
        value = conn.execute(select(table.c.at)).scalar_one()
    assert value == local and value.tzinfo == UTC


def test_naive_timestamps_are_refused(typed_table) -> None:  # type: ignore[no-untyped-def]
    engine, table = typed_table
    with pytest.raises(StatementError, match="naive datetime"), engine.begin() as conn:
        conn.execute(insert(table).values(at=datetime(2026, 1, 1)))


def test_decimals_are_exact_and_floats_refused(typed_table) -> None:  # type: ignore[no-untyped-def]
    engine, table = typed_table
    amount = Decimal("12345678901234.123456")  # beyond a double's 15-16 significant digits
    with engine.begin() as conn:
        conn.execute(insert(table).values(amount=amount))
        assert conn.execute(select(table.c.amount)).scalar_one() == amount
    with pytest.raises(StatementError, match="refuses floats"), engine.begin() as conn:
        conn.execute(insert(table).values(amount=0.1))


def test_blobs_are_content_addressed_and_verified(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    ref = store.put(b"page" * 1000)
    assert store.put(b"page" * 1000) == ref
    assert store.get(ref) == b"page" * 1000
    assert len(list(tmp_path.rglob("*.zst"))) == 1
    assert not list(tmp_path.rglob(".tmp-*"))
    other = store.put(b"other")
    store.path_for(ref).write_bytes(store.path_for(other).read_bytes())  # corrupt on disk
    with pytest.raises(ValueError, match="corrupt"):
        store.get(ref)
    with pytest.raises(ValueError, match="not a blob reference"):
        store.path_for("../../etc/passwd")


def test_fold_applies_rows_in_order_and_leaves_the_given_rows_alone() -> None:
    """fold() returns a row nothing was folded into as given (no copy), and folds later rows of a
    key into a copy: the caller's rows never change."""
    from rareindex.storage.upsert import fold

    first = {"k": "a", "when": datetime(2026, 1, 2, tzinfo=UTC), "price": 1, "note": "x"}
    later = {"k": "a", "when": datetime(2026, 1, 2, tzinfo=UTC), "price": 2, "note": None}
    last = {"k": "a", "when": datetime(2026, 1, 2, tzinfo=UTC), "price": 3, "note": "z"}
    alone = {"k": "b", "when": datetime(2026, 1, 1, tzinfo=UTC), "price": 9, "note": None}
    no_key = {"k": None, "when": datetime(2026, 1, 1, tzinfo=UTC), "price": 5, "note": None}
    given = [dict(r) for r in (first, later, alone, no_key, last)]
    folded = fold(given, ["k", "when"], replaced=["price"], merged=["note"])
    assert folded == [
        {"k": "a", "when": first["when"], "price": 3, "note": "z"},
        alone,
        no_key,
    ]
    assert given == [first, later, alone, no_key, last]  # nothing changed in place
    assert folded[1] is given[2]  # a key seen once: the row as given
    two = fold([dict(first), dict(later)], ["k"], replaced=["price"], merged=["note"])
    assert two == [{**first, "price": 2}]  # a NULL merged keeps the stored value

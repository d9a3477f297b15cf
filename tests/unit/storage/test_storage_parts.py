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

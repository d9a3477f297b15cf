"""A raw record always names a known connector, and a named connector stays, on both databases.

SQLite checks it with its foreign key; PostgreSQL with triggers that check each statement once
(migration 0020: the key's check per row was a fifth of a batch's commit). These tests hold both
to the key's rules: an unknown connector is refused and nothing of the batch stays, a connector
that raw records name cannot be deleted or renamed, and on PostgreSQL an uncommitted insert holds
its connector against a concurrent delete, as the key's ``FOR KEY SHARE`` did.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Engine, func, insert, inspect, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from rareindex.storage import BlobStore, RawRecordStore, downgrade, upgrade
from rareindex.storage.schema import connectors, raw_record_keys, raw_records, sources
from rareindex_connectors.records import RawRecordInput

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
# A PostgreSQL batch goes by COPY on the driver's own connection: psycopg's error, unwrapped.
REFUSED = (IntegrityError, psycopg.errors.IntegrityError)


def _connector(engine: Engine, connector_id: str) -> None:
    with engine.begin() as conn:
        if conn.execute(select(func.count()).select_from(sources)).scalar_one() == 0:
            conn.execute(insert(sources).values(id="demo", name="Demo"))
        conn.execute(
            insert(connectors).values(
                id=connector_id,
                source_id="demo",
                version="1",
                parser_version="1",
                refresh_class="ACTIVE",
                meta={},
            )
        )


def _record(external_id: str) -> RawRecordInput:
    return RawRecordInput(
        external_id=external_id,
        url=f"https://shop.example/p/{external_id}",
        payload={"id": external_id},
        fetched_at=NOW,
    )


def _store(engine: Engine, tmp_path: Path, connector_id: str, *ids: str) -> list[str]:
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    with engine.begin() as conn:
        stored = store.insert_many(
            conn,
            connector_id=connector_id,
            connector_version="1",
            parser_version="1",
            records=[_record(i) for i in ids],
        )
    return stored.raw_ids


def _counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return (
            conn.execute(select(func.count()).select_from(raw_records)).scalar_one(),
            conn.execute(select(func.count()).select_from(raw_record_keys)).scalar_one(),
        )


def test_a_batch_naming_an_unknown_connector_is_refused_whole(
    any_engine: Engine, tmp_path: Path
) -> None:
    upgrade(any_engine)
    _connector(any_engine, "known-shop")
    assert len(_store(any_engine, tmp_path, "known-shop", "a", "b")) == 2
    with pytest.raises(REFUSED):  # PostgreSQL: COPY; SQLite: executemany
        _store(any_engine, tmp_path, "unknown-shop", "c", "d", "e")
    assert _counts(any_engine) == (2, 2)  # not a row of it, nor a dedupe key
    row = {
        "id": "raw_1",
        "fetched_at": NOW,
        "connector_id": "unknown-shop",
        "external_id": "x",
        "url": "https://x.example/",
        "payload": {},
        "engine": "api",
        "content_hash": "0" * 64,
        "connector_version": "1",
        "parser_version": "1",
    }
    with pytest.raises(IntegrityError), any_engine.begin() as conn:  # a plain INSERT
        conn.execute(insert(raw_records).values(row))
    assert _counts(any_engine) == (2, 2)


def test_a_connector_that_raw_records_name_cannot_be_deleted_or_renamed(
    any_engine: Engine, tmp_path: Path
) -> None:
    upgrade(any_engine)
    _connector(any_engine, "named-shop")
    _connector(any_engine, "empty-shop")
    _store(any_engine, tmp_path, "named-shop", "a")
    for statement in (
        connectors.delete().where(connectors.c.id == "named-shop"),
        update(connectors).where(connectors.c.id == "named-shop").values(id="renamed-shop"),
    ):
        with pytest.raises(IntegrityError), any_engine.begin() as conn:
            conn.execute(statement)
    with any_engine.begin() as conn:  # another column of it, and a connector nothing names
        conn.execute(update(connectors).where(connectors.c.id == "named-shop").values(version="2"))
        conn.execute(connectors.delete().where(connectors.c.id == "empty-shop"))
    with any_engine.connect() as conn:
        assert conn.execute(select(connectors.c.id)).scalars().all() == ["named-shop"]


def test_postgres_an_uncommitted_insert_holds_its_connector_against_a_delete(
    pg_engine: Engine, tmp_path: Path
) -> None:
    upgrade(pg_engine)
    _connector(pg_engine, "busy-shop")
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    with pg_engine.connect() as writer, pg_engine.connect() as deleter:
        with writer.begin():
            store.insert_many(
                writer,
                connector_id="busy-shop",
                connector_version="1",
                parser_version="1",
                records=[_record("a")],
            )
            with pytest.raises(DBAPIError, match="lock timeout"), deleter.begin():
                deleter.execute(text("SET LOCAL lock_timeout = '300ms'"))
                deleter.execute(connectors.delete().where(connectors.c.id == "busy-shop"))
        # committed: the delete now sees the record it waited for
        with pytest.raises(IntegrityError), deleter.begin():
            deleter.execute(connectors.delete().where(connectors.c.id == "busy-shop"))
    with pytest.raises(IntegrityError), pg_engine.begin() as conn:
        conn.execute(text("TRUNCATE connectors CASCADE"))
    assert _counts(pg_engine) == (1, 1)


def test_postgres_checks_per_statement_and_the_downgrade_restores_the_key(
    pg_engine: Engine,
) -> None:
    def keys() -> list[str]:
        return [fk["name"] for fk in inspect(pg_engine).get_foreign_keys("raw_records")]

    def triggers() -> set[str]:
        with pg_engine.connect() as conn:
            return set(
                conn.execute(
                    text(
                        "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN "
                        "('raw_records'::regclass, 'connectors'::regclass)"
                    )
                ).scalars()
            )

    ours = {
        "raw_records_name_known_connectors",
        "connectors_keep_their_raw_records",
        "connectors_keep_their_raw_records_truncate",
    }
    upgrade(pg_engine)
    assert keys() == [] and ours <= triggers()
    downgrade(pg_engine, "0019")
    assert keys() == ["fk_raw_records_connector_id_connectors"] and not ours & triggers()
    upgrade(pg_engine)
    assert keys() == [] and ours <= triggers()

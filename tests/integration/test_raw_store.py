"""The raw-record store on both dialects: insert-only, deduped by content, snapshots in blobs."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, insert, select, text

from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.schema import connectors, raw_records, sources
from rareindex_connectors.records import RawRecordInput, canonical_json, content_hash

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture
def store(any_engine: Engine, tmp_path: Path) -> RawRecordStore:
    upgrade(any_engine)
    with any_engine.begin() as conn:
        conn.execute(insert(sources).values(id="demo", name="Demo"))
        conn.execute(
            insert(connectors).values(
                id="demo-cards",
                source_id="demo",
                version="1",
                parser_version="1",
                refresh_class="ACTIVE",
                meta={},
            )
        )
    return RawRecordStore(BlobStore(tmp_path / "blobs"))


def _put(engine: Engine, store: RawRecordStore, record: RawRecordInput):  # type: ignore[no-untyped-def]
    with engine.begin() as conn:
        return store.insert(
            conn,
            connector_id="demo-cards",
            connector_version="1.2",
            parser_version="3",
            record=record,
        )


def _count(engine: Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(raw_records)).scalar_one()


def test_identical_content_is_a_dupe_changed_content_a_new_row(
    any_engine: Engine, store: RawRecordStore
) -> None:
    first = _put(
        any_engine,
        store,
        RawRecordInput(
            external_id="p1", url="https://s.example/p1", payload={"a": 1, "b": 2}, fetched_at=T0
        ),
    )
    again = _put(
        any_engine,
        store,
        RawRecordInput(
            external_id="p1",
            url="https://s.example/p1",
            payload={"b": 2, "a": 1},
            fetched_at=T0 + timedelta(hours=1),
        ),
    )
    changed = _put(
        any_engine,
        store,
        RawRecordInput(
            external_id="p1",
            url="https://s.example/p1",
            payload={"a": 1, "b": 3},
            fetched_at=T0 + timedelta(hours=2),
        ),
    )
    other_item = _put(
        any_engine,
        store,
        RawRecordInput(
            external_id="p2", url="https://s.example/p2", payload={"a": 1, "b": 2}, fetched_at=T0
        ),
    )

    assert first.is_new and changed.is_new and other_item.is_new
    assert not again.is_new and again.raw_id == first.raw_id and again.fetched_at == T0
    assert _count(any_engine) == 3


def test_round_trip_keeps_versions_hash_and_snapshot_outside_the_row(
    any_engine: Engine, store: RawRecordStore
) -> None:
    page = b"<html>" + b"lot " * 20_000 + b"</html>"
    record = RawRecordInput(
        external_id="lot-7",
        url="https://a.example/lot/7",
        payload={"title": "Lot 7"},
        snapshot=page,
        engine="firecrawl",
        http_status=200,
        fetched_at=T0,
    )
    result = _put(any_engine, store, record)
    with any_engine.connect() as conn:
        row = conn.execute(select(raw_records).where(raw_records.c.id == result.raw_id)).one()
        stored = store.get(conn, result.raw_id)
    assert row.snapshot_ref is not None and row.snapshot_size == len(page)
    assert store.blobs.path_for(row.snapshot_ref).stat().st_size < len(page) / 10  # compressed
    assert stored.snapshot == page
    assert stored.content_hash == content_hash({"title": "Lot 7"}, page)
    assert (stored.connector_version, stored.parser_version) == ("1.2", "3")
    assert stored.engine == "firecrawl" and stored.fetched_at == T0
    assert stored.id.startswith("raw_")


def test_postgres_keeps_the_payload_as_the_text_its_hash_was_computed_over(
    any_engine: Engine, store: RawRecordStore
) -> None:
    payload = {"title": "Carte Pokémon", "b": [1, 2.5, None], "a": {"z": True, "y": "x"}}
    record = RawRecordInput(external_id="p8", url="https://s.example/p8", payload=payload)
    result = _put(any_engine, store, record)
    with any_engine.connect() as conn:
        stored = conn.execute(
            text("SELECT payload FROM raw_records WHERE id = :id"), {"id": result.raw_id}
        ).scalar_one()
        assert store.get(conn, result.raw_id).payload == payload
        if any_engine.dialect.name == "postgresql":
            # json, not jsonb (migration 0007): the row holds the canonical text byte for
            # byte; jsonb would have re-encoded it ('{"a": {"y": "x", ...').
            as_text = conn.execute(
                text("SELECT payload::text FROM raw_records WHERE id = :id"),
                {"id": result.raw_id},
            ).scalar_one()
            assert as_text == canonical_json(payload)
            assert hashlib.sha256(as_text.encode()).hexdigest() == content_hash(payload)
        else:
            assert stored == payload or json.loads(stored) == payload


def test_a_rolled_back_transaction_leaves_no_row_and_no_dedupe_key(
    any_engine: Engine, store: RawRecordStore
) -> None:
    record = RawRecordInput(
        external_id="p9", url="https://s.example/p9", payload=[1], fetched_at=T0
    )
    with pytest.raises(RuntimeError), any_engine.begin() as conn:
        store.insert(
            conn,
            connector_id="demo-cards",
            connector_version="1",
            parser_version="1",
            record=record,
        )
        raise RuntimeError("crash before commit")
    assert _count(any_engine) == 0
    assert _put(any_engine, store, record).is_new  # not mistaken for a dupe


def test_the_store_has_no_update_or_delete_path() -> None:
    public = {name for name in dir(RawRecordStore) if not name.startswith("_")}
    assert public == {"get", "get_many", "insert", "insert_many", "iter_connector"}


def test_a_batch_insert_dedupes_against_the_store_and_within_the_batch(
    any_engine: Engine, store: RawRecordStore
) -> None:
    old = RawRecordInput(
        external_id="p1", url="https://s.example/p1", payload={"v": 1}, fetched_at=T0
    )
    _put(any_engine, store, old)
    batch = [
        RawRecordInput(external_id="p1", url="https://s.example/p1", payload={"v": 1}),  # stored
        RawRecordInput(external_id="p1", url="https://s.example/p1", payload={"v": 2}),  # changed
        RawRecordInput(
            external_id="p2",
            url="https://s.example/p2",
            payload={"v": 1},
            snapshot=b"<html>p2</html>",
        ),
        RawRecordInput(
            external_id="p2",
            url="https://s.example/p2",
            payload={"v": 1},
            snapshot=b"<html>p2</html>",
        ),  # twice in the same batch
    ]
    with any_engine.begin() as conn:
        result = store.insert_many(
            conn,
            connector_id="demo-cards",
            connector_version="1",
            parser_version="1",
            records=batch,
        )
    assert (len(result.raw_ids), result.dupes) == (2, 2)
    assert _count(any_engine) == 3
    with any_engine.connect() as conn:
        assert store.get(conn, result.raw_ids[1]).snapshot == b"<html>p2</html>"


def _batch(engine: Engine, store: RawRecordStore, records: list[RawRecordInput]):  # type: ignore[no-untyped-def]
    with engine.begin() as conn:
        return store.insert_many(
            conn,
            connector_id="demo-cards",
            connector_version="1",
            parser_version="1",
            records=records,
        )


def _records(start: int, stop: int, **changes: object) -> list[RawRecordInput]:
    return [
        RawRecordInput(
            external_id=f"p{i}",
            url=f"https://s.example/p{i}",
            payload={"v": 1, "i": i, **changes},
            fetched_at=T0,
        )
        for i in range(start, stop)
    ]


def test_after_an_all_new_batch_the_next_is_written_without_the_claim_until_a_dupe(
    any_engine: Engine, store: RawRecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a connector's batch after an all-new one is written whole by COPY; the
    ON CONFLICT claim runs for its first batch, and again after a batch that met a dupe."""
    from rareindex.storage import raw_store

    claims: list[int] = []
    claim = raw_store._claim_keys

    def counted(conn, connector_id, items):  # type: ignore[no-untyped-def]
        claims.append(len(items))
        return claim(conn, connector_id, items)

    monkeypatch.setattr(raw_store, "_claim_keys", counted)
    assert len(_batch(any_engine, store, _records(0, 3)).raw_ids) == 3  # first: claimed
    assert len(_batch(any_engine, store, _records(3, 6)).raw_ids) == 3  # all new: no claim
    # p5 again, unchanged: the whole batch rolls back to its savepoint, then is claimed
    again = _batch(any_engine, store, _records(5, 8))
    assert (len(again.raw_ids), again.dupes) == (2, 1)
    assert len(_batch(any_engine, store, _records(8, 9)).raw_ids) == 1  # claimed: after a dupe
    assert len(_batch(any_engine, store, _records(9, 10)).raw_ids) == 1  # all new again
    if any_engine.dialect.name == "postgresql":
        assert claims == [3, 3, 1]
    else:  # SQLite claims every batch
        assert claims == [3, 3, 3, 1, 1]
    assert _count(any_engine) == 10
    with any_engine.connect() as conn:
        keys = conn.execute(text("SELECT count(*) FROM raw_record_keys")).scalar_one()
        stored = {r.external_id for r in store.iter_connector(conn, "demo-cards")}
    assert keys == 10
    assert stored == {f"p{i}" for i in range(10)}


def test_a_record_another_writer_stored_meanwhile_is_a_dupe_on_the_copy_path(
    any_engine: Engine, store: RawRecordStore, tmp_path: Path
) -> None:
    """This store expects the batch to be all new; another store (another worker) stored one of
    its records in between: that one is a dupe, the rest are new, and nothing is stored twice.
    The batch comes with repeats of its own and a snapshot, prepared as its rows are sent."""
    _batch(any_engine, store, _records(0, 2))
    other = RawRecordStore(BlobStore(tmp_path / "other"))
    _batch(any_engine, other, _records(3, 4))
    records = _records(2, 5)
    records.insert(1, records[0])  # p2 twice in the batch
    records.append(
        RawRecordInput(
            external_id="s1", url="https://s.example/s1", payload={}, snapshot=b"<p>s1</p>"
        )
    )
    result = _batch(any_engine, store, records)
    assert result.dupes == 2  # p2's repeat, and p3 (stored by the other store)
    assert len(result.raw_ids) == 3  # p2, p4, s1
    assert _count(any_engine) == 6
    with any_engine.connect() as conn:
        stored = store.get_many(conn, result.raw_ids)
        assert [stored[i].external_id for i in result.raw_ids] == ["p2", "p4", "s1"]
        assert stored[result.raw_ids[2]].snapshot == b"<p>s1</p>"
    # all new again: written by COPY, repeats within the batch still counted once
    more = _records(5, 7)
    result = _batch(any_engine, store, [more[0], more[1], more[0]])
    assert (len(result.raw_ids), result.dupes) == (2, 1)
    assert _count(any_engine) == 8


@pytest.mark.parametrize("warm", [False, True], ids=["claimed", "copied"])
def test_a_payload_with_escapes_is_stored_as_its_canonical_text_on_either_path(
    any_engine: Engine, store: RawRecordStore, warm: bool
) -> None:
    """Tabs, newlines, backslashes, NUL escapes and non-ASCII text reach the row as the text
    the hash was computed over (COPY sends rows in binary on PostgreSQL)."""
    if warm:
        _batch(any_engine, store, _records(0, 1))  # the next batch takes the COPY path
    payload = {"t": "a\tb\nc\\d\u0000e\u00e9\u2603\U0001f0cf", "q": '"', "n": None}
    record = RawRecordInput(
        external_id="esc",
        url="https://s.example/a\tb",
        payload=payload,
        fetched_at=T0,
        http_status=200,
    )
    (raw_id,) = _batch(any_engine, store, [record]).raw_ids
    with any_engine.connect() as conn:
        got = store.get(conn, raw_id)
        assert got.payload == payload
        assert (got.url, got.http_status, got.fetched_at) == ("https://s.example/a\tb", 200, T0)
        assert got.content_hash == content_hash(payload)
        if any_engine.dialect.name == "postgresql":
            as_text = conn.execute(
                text("SELECT payload::text FROM raw_records WHERE id = :id"), {"id": raw_id}
            ).scalar_one()
            assert as_text == canonical_json(payload)


def test_batches_of_every_size_claim_their_keys_with_few_statement_texts(
    any_engine: Engine, store: RawRecordStore
) -> None:
    """SQLite keeps a prepared statement per distinct text (up to 128 a connection): a claim
    whose text grew with its batch kept one of up to ~250 KB for each batch size a crawl met.
    Batches of 1 to 24 records now claim with at most 5 texts (1, 2, 4, 8 and 16 rows)."""
    from sqlalchemy import event

    texts: set[str] = set()

    def seen(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if statement.startswith("INSERT INTO raw_record_keys"):
            texts.add(statement)

    event.listen(any_engine, "before_cursor_execute", seen)
    try:
        start = 0
        for size in range(1, 25):
            result = _batch(any_engine, store, _records(start, start + size))
            assert (len(result.raw_ids), result.dupes) == (size, 0)
            start += size
        # and a batch holding stored records among new ones: only the new ones are stored
        result = _batch(any_engine, store, _records(start - 10, start + 13))
        assert (len(result.raw_ids), result.dupes) == (13, 10)
    finally:
        event.remove(any_engine, "before_cursor_execute", seen)
    assert _count(any_engine) == start + 13
    assert len(texts) <= 5  # PostgreSQL: none through SQLAlchemy (arrays or COPY on the driver)

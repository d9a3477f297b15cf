"""The raw-record store: insert-only, deduplicated by content hash.

There is deliberately no update or delete method; the database refuses them too (triggers). The
natural key is ``(connector_id, external_id, content_hash)``: the same content fetched again is a
*dupe* (counted, no new row), changed content is a new row. Inserts run on the caller's connection,
so the crawler writes records and advances its cursor in one transaction.

Example:
    >>> store = RawRecordStore(BlobStore(Path("/tmp/blobs")))            # doctest: +SKIP
    >>> with engine.begin() as conn:                                    # doctest: +SKIP
    ...     result = store.insert(conn, connector_id="demo", connector_version="1",
    ...                           parser_version="1", record=rec)
    >>> result.is_new                                                   # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select
from sqlalchemy.dialects import sqlite

from rareindex_connectors.records import RawRecord, RawRecordInput, canonical_json, content_hash

from .blobs import BlobStore
from .ids import new_id
from .membership import one_of
from .schema import raw_record_keys, raw_records

__all__ = [
    "READ_CHUNK",
    "BatchInsert",
    "InsertResult",
    "PreparedBatch",
    "RawRecordStore",
    "prepare_batch",
]


@dataclass(slots=True)
class BatchInsert:
    """What a batch insert stored (new raw ids, in input order) and how many were dupes."""

    raw_ids: list[str] = field(default_factory=list)
    dupes: int = 0


@dataclass(slots=True)
class PreparedBatch:
    """A batch as the store writes it, before any database: each distinct record with its
    content hash, a new raw id and its canonical JSON (computed once, for the hash and for the
    row), and how many repeated one before them in the batch."""

    candidates: list[tuple[RawRecordInput, str, str, str]]
    dupes: int = 0

    def __len__(self) -> int:
        """The records it was prepared from, repeats included."""
        return len(self.candidates) + self.dupes


def prepare_batch(records: Sequence[RawRecordInput]) -> PreparedBatch:
    """The work of a batch insert that needs no database (JSON, hashes, ids): a crawl does it
    on its fetch loop and leaves only the statements to its writer."""
    prepared = PreparedBatch([])
    for _ in _preparing(records, prepared):
        pass
    return prepared


def _preparing(
    records: Iterable[RawRecordInput], prepared: PreparedBatch
) -> Iterator[tuple[RawRecordInput, str, str, str]]:
    """Prepare ``records`` into ``prepared`` one at a time, yielding each new candidate as it is
    added: a batch insert can send each row while the next is prepared."""
    seen: set[tuple[str, str]] = set()
    add = prepared.candidates.append
    for record in records:
        text = canonical_json(record.payload)  # once: for the hash and for the row
        digest = content_hash(record.payload, record.snapshot, canonical=text)
        key = (record.external_id, digest)
        if key in seen:
            prepared.dupes += 1  # the same content twice in one batch
            continue
        seen.add(key)
        candidate = (record, digest, new_id("raw"), text)
        add(candidate)
        yield candidate


@dataclass(frozen=True, slots=True)
class InsertResult:
    """The stored raw id, and whether this insert created it (False: a dupe)."""

    raw_id: str
    fetched_at: datetime
    is_new: bool


READ_CHUNK = 500
"""Ids per ``IN (…)`` list of :meth:`RawRecordStore.get_many`: far below any driver's limit."""

_COPY_COLUMNS = (
    "id",
    "fetched_at",
    "connector_id",
    "run_id",
    "external_id",
    "url",
    "payload",
    "snapshot_ref",
    "snapshot_size",
    "engine",
    "http_status",
    "content_hash",
    "connector_version",
    "parser_version",
)


_COPY_TYPES = (
    "text",
    "timestamptz",
    "text",
    "text",
    "text",
    "text",
    "text",  # payload: a json column's binary input is its text, as is text's
    "text",
    "int4",
    "text",
    "int4",
    "text",
    "text",
    "text",
)
"""The binary wire type of each of :data:`_COPY_COLUMNS`."""

_COPY_STATEMENT = f"COPY raw_records ({', '.join(_COPY_COLUMNS)}) FROM STDIN (FORMAT BINARY)"


def _copy_rows(conn: Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """PostgreSQL: ``COPY … FROM STDIN`` on the transaction's own connection (several times
    faster than row inserts; the rows commit or roll back with everything else). ``rows`` are
    tuples in :data:`_COPY_COLUMNS` order, the payload as its canonical JSON text.

    In binary: the text format made psycopg escape, and the server scan, every byte of each
    ~1 KB payload for tabs, newlines and backslashes, and the server parse each timestamp
    (docs/performance.md, section 2)."""
    driver = conn.connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(_COPY_STATEMENT) as copy:
        copy.set_types(_COPY_TYPES)
        write = copy.write_row
        for row in rows:
            write(row)


_KEYS_COPY = (
    "COPY raw_record_keys (connector_id, external_id, content_hash, raw_id, fetched_at) "
    "FROM STDIN (FORMAT BINARY)"
)
_KEYS_TYPES = ("text", "text", "text", "text", "timestamptz")


def _copy_all_new(
    conn: Connection,
    connector_id: str,
    rows: Iterable[tuple[Any, ...]],
    prepared: PreparedBatch,
) -> bool:
    """PostgreSQL, for a batch expected to hold no dupes: COPY ``rows`` (every candidate), then
    COPY the candidates' dedupe keys, in a savepoint. False when a key was stored already: the
    savepoint is rolled back, so neither the keys nor the rows were written.

    The keys' primary key still decides, so a key another transaction stored meanwhile is
    refused, never written twice. A plain insert of a key costs the server about half the work
    of the ``ON CONFLICT`` claim, and ``rows`` may be an iterator that prepares each row as it
    is sent (the server stores one while the next is prepared); docs/performance.md, section 2.
    """
    from psycopg.errors import UniqueViolation

    driver = conn.connection.driver_connection
    assert driver is not None
    # On the driver, not conn.begin_nested(): left open on success (the commit ends it), which
    # saves the RELEASE's round trip; psycopg opens the caller's transaction first if need be.
    driver.execute("SAVEPOINT ri_raw_batch")
    try:
        _copy_rows(conn, rows)
        with driver.cursor() as cursor, cursor.copy(_KEYS_COPY) as copy:
            copy.set_types(_KEYS_TYPES)
            write = copy.write_row
            for record, digest, raw_id, _ in prepared.candidates:
                write((connector_id, record.external_id, digest, raw_id, record.fetched_at))
    except UniqueViolation as exc:
        if exc.diag.table_name != "raw_record_keys":
            raise
        driver.execute("ROLLBACK TO SAVEPOINT ri_raw_batch")
        return False
    return True


def _claim_keys(
    conn: Connection, connector_id: str, items: list[tuple[RawRecordInput, str, str, str]]
) -> set[str]:
    """Insert the dedupe keys that are new; the raw ids whose keys were new. On PostgreSQL one
    statement over arrays sent in binary (``%b``: no per-element text quoting); elsewhere one
    multi-row insert."""
    if conn.dialect.name == "postgresql":
        driver = conn.connection.driver_connection
        assert driver is not None
        with driver.cursor() as cursor:
            cursor.execute(
                "INSERT INTO raw_record_keys (connector_id, external_id, content_hash, raw_id, "
                "fetched_at) SELECT %s, * FROM unnest(%b::text[], %b::text[], %b::text[], "
                "%b::timestamptz[]) ON CONFLICT DO NOTHING RETURNING raw_id",
                (
                    connector_id,
                    [record.external_id for record, _, _, _ in items],
                    [digest for _, digest, _, _ in items],
                    [raw_id for _, _, raw_id, _ in items],
                    [record.fetched_at for record, _, _, _ in items],
                ),
            )
            return {row[0] for row in cursor.fetchall()}
    claim = (
        sqlite.insert(raw_record_keys).on_conflict_do_nothing().returning(raw_record_keys.c.raw_id)
    )
    claimed: set[str] = set()
    for chunk in _power_of_two_chunks(items):
        rows = [
            {
                "connector_id": connector_id,
                "external_id": record.external_id,
                "content_hash": digest,
                "raw_id": raw_id,
                "fetched_at": record.fetched_at,
            }
            for record, digest, raw_id, _ in chunk
        ]
        claimed.update(conn.execute(claim, rows).scalars())
    return claimed


SQLITE_CLAIM_MAX = 512
"""The most keys one SQLite claim statement carries (5 parameters each)."""


def _power_of_two_chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """``items`` in consecutive chunks whose sizes are powers of two, largest first, none over
    :data:`SQLITE_CLAIM_MAX`.

    A multi-row ``VALUES`` statement's text depends on its number of rows, and ``sqlite3`` keeps
    up to 128 prepared statements a connection: a crawl committing batches of every size from 1
    to 500 kept one of up to ~250 KB for each size it met (6.2 MB after 10,000 one-record pages,
    still growing). Powers of two leave at most 10 statement texts.

    >>> [len(chunk) for chunk in _power_of_two_chunks(range(500))]
    [256, 128, 64, 32, 16, 4]
    >>> [len(chunk) for chunk in _power_of_two_chunks(range(1030))]
    [512, 512, 4, 2]
    """
    start, total = 0, len(items)
    while start < total:
        size = min(SQLITE_CLAIM_MAX, 1 << ((total - start).bit_length() - 1))
        yield items[start : start + size]
        start += size


class RawRecordStore:
    """Writes and reads raw records. Snapshots go to the blob store, the reference to the row."""

    def __init__(self, blobs: BlobStore):
        self.blobs = blobs
        # Per connector: whether its last batch here was all new. Such a connector's next batch
        # is written whole (_copy_all_new); after one that met a dupe (a recrawl of unchanged
        # pages) the keys are claimed first, so no rows are sent only to be rolled back.
        self._all_new: dict[str, bool] = {}

    def insert(
        self,
        conn: Connection,
        *,
        connector_id: str,
        connector_version: str,
        parser_version: str,
        record: RawRecordInput,
        run_id: str | None = None,
    ) -> InsertResult:
        """Store ``record`` unless identical content is already stored for its external id
        (then return the stored one's id)."""
        stored = self.insert_many(
            conn,
            connector_id=connector_id,
            connector_version=connector_version,
            parser_version=parser_version,
            records=[record],
            run_id=run_id,
        )
        if stored.raw_ids:
            return InsertResult(stored.raw_ids[0], record.fetched_at, is_new=True)
        digest = content_hash(record.payload, record.snapshot)
        existing = conn.execute(
            select(raw_record_keys.c.raw_id, raw_record_keys.c.fetched_at).where(
                raw_record_keys.c.connector_id == connector_id,
                raw_record_keys.c.external_id == record.external_id,
                raw_record_keys.c.content_hash == digest,
            )
        ).one()
        return InsertResult(existing.raw_id, existing.fetched_at, is_new=False)

    def insert_many(
        self,
        conn: Connection,
        *,
        connector_id: str,
        connector_version: str,
        parser_version: str,
        records: Sequence[RawRecordInput] | PreparedBatch,
        run_id: str | None = None,
    ) -> BatchInsert:
        """Store a batch like :meth:`insert` does one record. ``records`` may come as
        :func:`prepare_batch` made them.

        On PostgreSQL a connector whose last batch here was all new (a first crawl, new pages)
        has the next one written whole, rows then keys, two COPYs in a savepoint; only if one of
        its keys is stored already is that rolled back and the batch written as any other: claim
        the keys that are new (``ON CONFLICT DO NOTHING``), then COPY those rows. A connector's
        first batch here, and each after one that met a dupe, starts with the claim."""

        def row(candidate: tuple[RawRecordInput, str, str, str]) -> tuple[Any, ...]:
            record, digest, raw_id, text = candidate
            snapshot = record.snapshot
            return (  # in _COPY_COLUMNS order
                raw_id,
                record.fetched_at,
                connector_id,
                run_id,
                record.external_id,
                record.url,
                text,  # the payload: COPY takes its canonical JSON text
                self.blobs.put(snapshot) if snapshot is not None else None,
                len(snapshot) if snapshot is not None else None,
                record.engine,
                record.http_status,
                digest,
                connector_version,
                parser_version,
            )

        if not len(records):
            return BatchInsert()
        postgresql = conn.dialect.name == "postgresql"
        if postgresql and self._all_new.get(connector_id, False):
            if isinstance(records, PreparedBatch):
                prepared, sent = records, iter(records.candidates)
            else:  # prepared while the rows stream out
                prepared = PreparedBatch([])
                sent = _preparing(records, prepared)
            if _copy_all_new(conn, connector_id, map(row, sent), prepared):
                raw_ids = [raw_id for _, _, raw_id, _ in prepared.candidates]
                return BatchInsert(raw_ids=raw_ids, dupes=prepared.dupes)
            # rolled back: a dupe among them (every row was sent, so ``prepared`` is whole)
        else:
            prepared = records if isinstance(records, PreparedBatch) else prepare_batch(records)
        candidates = prepared.candidates
        result = BatchInsert(dupes=prepared.dupes)
        if not candidates:
            return result
        claimed = _claim_keys(conn, connector_id, candidates)
        self._all_new[connector_id] = len(claimed) == len(candidates)
        rows: list[tuple[Any, ...]] = []
        for candidate in candidates:
            if candidate[2] not in claimed:
                result.dupes += 1
                continue
            rows.append(row(candidate))
            result.raw_ids.append(candidate[2])
        if rows and postgresql:
            _copy_rows(conn, rows)
        elif rows:  # the JSON column takes the payload itself, not its text
            payloads = {raw_id: record.payload for record, _, raw_id, _ in candidates}
            conn.execute(
                raw_records.insert(),
                [
                    dict(zip(_COPY_COLUMNS, row, strict=True)) | {"payload": payloads[row[0]]}
                    for row in rows
                ],
            )
        return result

    def get(self, conn: Connection, raw_id: str, *, with_snapshot: bool = True) -> RawRecord:
        """One stored record, its snapshot loaded from the blob store. ``KeyError`` if absent."""
        return self.get_many(conn, [raw_id], with_snapshot=with_snapshot)[raw_id]

    def get_many(
        self, conn: Connection, raw_ids: Sequence[str], *, with_snapshot: bool = True
    ) -> dict[str, RawRecord]:
        """The stored records of ``raw_ids`` by id, one query per :data:`READ_CHUNK` ids (the
        normalizer reads hundreds a batch). ``KeyError`` names the first id not stored."""
        ids = list(dict.fromkeys(raw_ids))
        found: dict[str, RawRecord] = {}
        for start in range(0, len(ids), READ_CHUNK):
            chunk = ids[start : start + READ_CHUNK]
            where = one_of(raw_records.c.id, chunk, conn.dialect.name)
            for row in conn.execute(select(raw_records).where(where)):
                found[row.id] = self._to_model(row, with_snapshot=with_snapshot)
        missing = [raw_id for raw_id in ids if raw_id not in found]
        if missing:
            raise KeyError(missing[0])
        return found

    def iter_connector(
        self, conn: Connection, connector_id: str, *, with_snapshot: bool = False
    ) -> Iterator[RawRecord]:
        """Every stored record of a connector, oldest first (for replay without refetching)."""
        rows = conn.execute(
            select(raw_records)
            .where(raw_records.c.connector_id == connector_id)
            .order_by(raw_records.c.fetched_at, raw_records.c.id)
        )
        for row in rows:
            yield self._to_model(row, with_snapshot=with_snapshot)

    def _to_model(self, row: object, *, with_snapshot: bool) -> RawRecord:
        data = row._mapping  # type: ignore[attr-defined]
        ref = data["snapshot_ref"]
        return RawRecord(
            id=data["id"],
            connector_id=data["connector_id"],
            external_id=data["external_id"],
            url=data["url"],
            payload=data["payload"],
            snapshot=self.blobs.get(ref) if (with_snapshot and ref) else None,
            engine=data["engine"],
            http_status=data["http_status"],
            fetched_at=data["fetched_at"],
            content_hash=data["content_hash"],
            connector_version=data["connector_version"],
            parser_version=data["parser_version"],
            snapshot_ref=ref,
        )

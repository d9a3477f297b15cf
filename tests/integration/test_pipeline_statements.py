"""The stages after the crawl are set-based: normalizing and resolving send a fixed handful of SQL
statements per batch, not a few per raw record — and the batched writes leave every table exactly
as writing the records one at a time does, on SQLite and on PostgreSQL.

Raw records here come from a scripted connector whose ``normalize()`` returns the records its
payload spells out, so each test chooses exactly what reaches the writers: sales, listings seen
again and again (older, newer, ended, relisted), auction lots seen on their page and as a line of
the prices-realised PDF, guide prices, population reports and news, repeated keys included.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, Table, event, select

from rareindex.indexer import BATCH as RESOLVE_BATCH
from rareindex.indexer import resolve_pending
from rareindex.normalizer import BATCH as NORMALIZE_BATCH
from rareindex.normalizer import normalize_raw
from rareindex.registry import Registry
from rareindex.settings import REPO_ROOT
from rareindex.storage import BlobStore, RawRecordStore, make_engine, upgrade
from rareindex.storage.catalog_store import import_catalog
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import (
    asset_variants,
    auction_lots,
    auctions,
    connector_field_stats,
    images,
    listing_events,
    listings,
    news,
    normalized_records,
    population_reports,
    price_observations,
    raw_records,
    sales,
)
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.records import (
    NormalizedRecord,
    RawRecord,
    RawRecordInput,
    parse_normalized,
)
from rareindex_fakeweb.sites.catalog import world_catalog

CATALOG = world_catalog(7)
ZARD = "1999 Pokemon Base Set Charizard 4/102 Unlimited Holo"  # the world catalog's pk0012
T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
TABLES: tuple[Table, ...] = (
    asset_variants,
    sales,
    listings,
    listing_events,
    auctions,
    auction_lots,
    price_observations,
    population_reports,
    news,
    images,
    normalized_records,
    connector_field_stats,
)
VOLATILE = frozenset({"created_at", "updated_at", "resolved_at"})
PER_CHUNK = 25
"""Statements one more normalize batch or resolve batch may add (it sends about 7 and 16)."""


class _Echo:
    """A connector whose ``normalize()`` returns the records its raw payload spells out."""

    version = "1"
    parser_version = "1"
    meta = ConnectorMeta(
        id="echo-shop",
        source="Echo Shop",
        engines=("api",),
        categories=("tcg_card",),
        capabilities=("sale", "listing", "auction_lot", "price_observation"),
    )

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        nothing: tuple[RawRecordInput, ...] = ()  # never crawled here
        for record in nothing:
            yield record

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        payload: Any = raw.payload  # {"records": [...]}, as the tests below store it
        return [parse_normalized(r) for r in payload["records"]]

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


ECHO = _Echo()
REGISTRY = Registry(connectors={ECHO.meta.id: ECHO})


# --- records as the payload spells them ----------------------------------------------------------


def _at(day: int, hour: int = 0) -> str:
    return (T0 + timedelta(days=day, hours=hour)).isoformat()


def _usd(amount: str) -> dict[str, str]:
    return {"amount": amount, "currency": "USD"}


def _sale(
    ext: str, title: str, price: str, day: int, *, images: Sequence[str] = (), **more: Any
) -> dict[str, Any]:
    return {
        "kind": "sale",
        "external_id": ext,
        "title": title,
        "category": "tcg_card",
        "price": _usd(price),
        "sale_type": "fixed",
        "sold_at": _at(day),
        "image_urls": list(images),
        **more,
    }


def _listing(ext: str, price: str, *, available: bool = True) -> dict[str, Any]:
    return {
        "kind": "listing",
        "external_id": ext,
        "title": f"{ZARD} PSA 10",
        "category": "tcg_card",
        "price": _usd(price),
        "available": available,
        "image_urls": [f"http://echo.test/img/{ext}.jpg"],
    }


def _lot(ext: str, auction: str, number: str, **more: Any) -> dict[str, Any]:
    """A sold lot; ``closes_at`` given: its page, else its line of the prices-realised PDF."""
    return {
        "kind": "auction_lot",
        "external_id": ext,
        "title": f"{ZARD} PSA 10",
        "category": "tcg_card",
        "auction_id": auction,
        "lot_number": number,
        "status": "sold",
        **more,
    }


def _guide(ext: str, price: str, day: int) -> dict[str, Any]:
    return {
        "kind": "price_observation",
        "external_id": ext,
        "title": f"{ZARD} PSA 9",
        "category": "tcg_card",
        "price": _usd(price),
        "observed_at": _at(day),
    }


def _population(spec: str, tens: int, day: int) -> dict[str, Any]:
    return {
        "kind": "population_report",
        "external_id": spec,
        "grader": "PSA",
        "title": ZARD,
        "counts": {"10": tens, "9": 4},
        "total": tens + 4,
        "as_of": _at(day),
    }


def _news(ext: str, title: str, day: int) -> dict[str, Any]:
    return {
        "kind": "news_item",
        "external_id": ext,
        "title": title,
        "url": f"http://echo.test/news/{ext}",
        "published_at": _at(day),
    }


def _raw(name: str, fetched: datetime, records: list[dict[str, Any]]) -> RawRecordInput:
    url = f"http://echo.test/raw/{name}"
    return RawRecordInput(
        external_id=name, url=url, payload={"records": records}, fetched_at=fetched
    )


def _seen(day: int) -> datetime:
    return T0 + timedelta(days=day)


FIRST = [
    _raw(
        "r1",
        _seen(10),
        [
            _listing("L1", "100.00"),
            _sale("S1", f"{ZARD} PSA 9", "100.00", 1, images=["http://echo.test/a.jpg"] * 2),
            _guide("G1", "10.00", 3),
        ],
    ),
    _raw(
        "r2",
        _seen(11),
        [
            _listing("L1", "100.00"),
            _listing("L3", "70.00"),
            _sale("S2", f"{ZARD} PSA 9", "101.00", 2),
            _sale("S8", f"{ZARD} PSA 10", "300.00", 8, shipping=_usd("5.00")),
            _news("N1", "Old headline", 2),
        ],
    ),
]
"""Resolved first: listings L1 and L3 are stored (last seen on day 11) before the tricky batch."""

SECOND = [
    # older than what is stored: only first_seen_at moves
    _raw(
        "r3",
        _seen(5),
        [
            _listing("L1", "90.00"),
            _listing("L3", "60.00"),  # only an older sighting in the batch: the price stays
            _sale("S3", f"{ZARD} PSA 9", "99.00", 3),
            _sale("S8", f"{ZARD} PSA 10", "300.00", 8),  # the same sale without shipping
        ],
    ),
    _raw(
        "r4",
        _seen(12),
        [
            _listing("L1", "120.00"),  # price_changed
            _listing("L2", "50.00"),  # listed
            _sale("S4", f"{ZARD} PSA 9", "100.00", 4),
            _guide("G1", "12.00", 3),  # same observation key: the newer price wins
            _population("P1", 5, 1),
        ],
    ),
    _raw(
        "r5",
        _seen(13),
        [
            _listing("L1", "120.00", available=False),  # ended
            _listing("L2", "55.00"),  # price_changed
            _sale("S5", f"{ZARD} PSA 9", "102.00", 5),
            _news("N1", "New headline", 2),
            _population("P1", 6, 1),  # same report key: counts replaced
        ],
    ),
    _raw(
        "r6",
        _seen(14),
        [
            _listing("L1", "125.00"),  # relisted and price_changed
            _listing("L2", "55.00", available=False),
            _sale("S6", f"{ZARD} PSA 9", "98.00", 6),
            _sale("S7", f"{ZARD} PSA 9", "10000.00", 7),  # the outlier
            _sale("S1", f"{ZARD} PSA 9", "100.50", 1, images=["http://echo.test/b.jpg"]),
        ],
    ),
    _raw(
        "r7",
        _seen(15),
        [
            # the same sale as lot 8's: one row, a replace then two merges
            _sale("lot-8", f"{ZARD} PSA 10", "500.00", 9, sale_type="auction_house"),
            _lot("lot-7", "A1", "7", hammer_price=_usd("200.00")),  # PDF line: no sale yet
            _lot(
                "lot-8",
                "A1",
                "8",
                auction_title="Spring Sale",
                price_realised=_usd("550.00"),
                closes_at=_at(9),
            ),
        ],
    ),
    _raw(
        "r8",
        _seen(16),
        [
            _lot(
                "lot-7",
                "A1",
                "7",
                price_realised=_usd("240.00"),
                estimate_low=_usd("150.00"),
                closes_at=_at(9),
            ),
            _lot("lot-8", "A1", "8", hammer_price=_usd("480.00")),
            _sale("S9", "2031 Zyzzyx Galactic Nonexistent #999 PSA 10", "5.00", 8),
        ],
    ),
]


# --- helpers -------------------------------------------------------------------------------------


def _setup(engine: Engine) -> None:
    upgrade(engine)
    with engine.begin() as conn:
        sync_connectors(conn, [ECHO])
    import_catalog(engine, CATALOG)


def _store(engine: Engine, store: RawRecordStore, records: Sequence[RawRecordInput]) -> list[str]:
    with engine.begin() as conn:
        batch = store.insert_many(
            conn,
            connector_id=ECHO.meta.id,
            connector_version=ECHO.version,
            parser_version=ECHO.parser_version,
            records=list(records),
        )
    assert len(batch.raw_ids) == len(records)
    return batch.raw_ids


def _value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _dump(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    """Every row of :data:`TABLES` minus timestamps; normalized-record ids (which derive from the
    random raw ids) become their natural key, so two databases compare."""
    out: dict[str, list[dict[str, Any]]] = {}
    with engine.connect() as conn:
        natural = {
            nid: f"{ext}|{version}|{ordinal}"
            for nid, ext, version, ordinal in conn.execute(
                select(
                    normalized_records.c.id,
                    raw_records.c.external_id,
                    normalized_records.c.parser_version,
                    normalized_records.c.ordinal,
                ).join(raw_records, raw_records.c.id == normalized_records.c.raw_id)
            )
        }
        for table in TABLES:
            columns = [c for c in table.c if c.name not in VOLATILE]
            rows = []
            for row in conn.execute(select(*columns)):
                values = {c.name: _value(v) for c, v in zip(columns, row, strict=True)}
                if "normalized_id" in values:
                    values["normalized_id"] = natural.get(values["normalized_id"])
                if table is normalized_records:
                    values["id"] = natural[values["id"]]
                    del values["raw_id"]
                rows.append(values)
            out[table.name] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return out


class _Statements:
    """Counts what an engine sends (``before_cursor_execute``; an executemany counts once)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.count = 0

    def _seen(self, *_args: Any) -> None:
        self.count += 1

    def __enter__(self) -> _Statements:
        event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *_exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)


def _workload(prefix: str, n: int) -> list[RawRecordInput]:
    """``n`` raw records of about 3.5 records each: a sale, a listing seen three times, a guide
    price, half of an auction lot (its page, then its PDF line), now and then a population
    report and a news item."""
    out = []
    for i in range(n):
        lot = f"{prefix}lot-{i // 2}"
        records = [
            _sale(
                f"{prefix}s{i}",
                f"{ZARD} PSA {9 if i % 2 else 10}",
                f"{100 + i % 7}.00",
                i % 28,
                images=[f"http://echo.test/img/{prefix}{i}.jpg"],
            ),
            _listing(f"{prefix}l{i // 3}", f"{50 + i % 4}.00", available=i % 5 != 0),
            _guide(f"{prefix}g{i}", "10.00", i % 28),
            _lot(lot, f"{prefix}A", str(i // 2), price_realised=_usd("240.00"), closes_at=_at(9))
            if i % 2 == 0
            else _lot(lot, f"{prefix}A", str(i // 2), hammer_price=_usd("200.00")),
        ]
        if i % 10 == 0:
            records += [_population(f"{prefix}p{i}", i, 1), _news(f"{prefix}n{i}", "News", 2)]
        out.append(_raw(f"{prefix}{i}", T0 + timedelta(minutes=i), records))
    return out


def _chunks(raw: int, records: int) -> int:
    """Normalize batches plus resolve batches (and resolve's last, empty look) for a workload."""
    return math.ceil(raw / NORMALIZE_BATCH) + math.ceil(records / RESOLVE_BATCH) + 1


# --- tests ---------------------------------------------------------------------------------------


def test_statements_per_batch_not_per_raw_record(any_engine: Engine, tmp_path: Path) -> None:
    """Normalizing and resolving 10·N raw records costs N's statements plus a per-batch constant
    for the extra batches: one statement (or more) per record would grow with N."""
    _setup(any_engine)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    n = 30
    counts, chunks = [], []
    for prefix, size in (("a", n), ("b", 10 * n)):
        raw_ids = _store(any_engine, store, _workload(prefix, size))
        with _Statements(any_engine) as sent:
            normalized = normalize_raw(any_engine, REGISTRY, raw_ids, blobs=store.blobs)
            resolved = resolve_pending(any_engine)
        assert normalized.raw == size and normalized.failed == 0
        assert resolved.resolved == normalized.records > 3 * size
        counts.append(sent.count)
        chunks.append(_chunks(size, normalized.records))
    small, big = counts
    assert chunks[1] > chunks[0]  # the large workload really spans more batches
    assert small <= PER_CHUNK * chunks[0], counts
    assert big <= small + PER_CHUNK * (chunks[1] - chunks[0]), (counts, chunks)
    assert big < 10 * n, counts  # fewer statements than raw records (it was about 7 each)


def test_batched_writes_equal_writing_one_record_at_a_time(
    any_engine: Engine, tmp_path: Path
) -> None:
    """The same raw records, normalized and resolved in whole batches on either backend and one
    at a time on SQLite, give identical tables (ids, values, listing events, merged lots and
    sales, anomaly flags, decisions, field counters)."""
    one_by_one = make_engine(f"sqlite:///{tmp_path / 'one.db'}")
    dumps = []
    for engine, batch in ((one_by_one, 1), (any_engine, None)):
        _setup(engine)
        store = RawRecordStore(BlobStore(tmp_path / f"blobs-{batch}"))
        for records in (FIRST, SECOND):
            raw_ids = _store(engine, store, records)
            normalize_raw(
                engine, REGISTRY, raw_ids, blobs=store.blobs, batch=batch or NORMALIZE_BATCH
            )
            resolve_pending(engine, batch=batch or RESOLVE_BATCH)
        dumps.append(_dump(engine))
    one_by_one.dispose()
    expected, batched = dumps
    assert batched == expected

    events = sorted((e["listing_id"], e["event"], e["price"]) for e in batched["listing_events"])
    l1 = next(r["id"] for r in batched["listings"] if r["external_id"] == "L1")
    assert [(event, price) for lid, event, price in events if lid == l1] == sorted(
        [
            ("listed", "100"),
            ("price_changed", "120"),
            ("ended", "120"),
            ("relisted", "125"),
            ("price_changed", "125"),
        ]
    )
    [stored_l1] = [r for r in batched["listings"] if r["id"] == l1]
    assert (stored_l1["price"], stored_l1["available"], stored_l1["first_seen_at"]) == (
        "125",
        True,
        _seen(5).isoformat(),
    )
    [stored_l3] = [r for r in batched["listings"] if r["external_id"] == "L3"]
    assert (stored_l3["price"], stored_l3["first_seen_at"]) == ("70", _seen(5).isoformat())
    lots = {r["lot_number"]: r for r in batched["auction_lots"]}
    assert (lots["7"]["hammer_price"], lots["7"]["price_realised"]) == ("200", "240")
    assert (lots["8"]["hammer_price"], lots["8"]["price_realised"]) == ("480", "550")
    sold = {r["external_id"]: r for r in batched["sales"]}
    # lot 8: a sale record, then the lot's page and its PDF line merged into the same row
    assert (sold["lot-8"]["price"], sold["lot-8"]["price_basis"]) == ("550", "realized_incl_bp")
    assert sold["lot-7"]["price"] == "240"  # its PDF line came first: dated by its page
    assert sold["S1"]["price"] == "100.5"  # seen twice: the later record wins
    assert sold["S8"]["shipping"] is None  # a sale record replaces, NULLs included
    [auction] = batched["auctions"]
    assert auction["title"] == "Spring Sale"
    flagged = {r["source_item_id"]: r["anomaly_reason"] for r in batched["price_observations"]}
    assert flagged["S7"] == "robust_z" and flagged["S6"] is None
    assert {r["price"] for r in batched["price_observations"] if r["source_item_id"] == "G1"} == {
        "12"
    }


def test_concurrent_workers_count_fields_once_and_agree(pg_engine: Engine, tmp_path: Path) -> None:
    """Two normalizers, then two resolvers, on the same raw records at once (at-least-once
    delivery) on PostgreSQL: every raw record is counted once, and the tables are those of one
    worker alone."""
    engine = pg_engine
    _setup(engine)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    raw_ids = _store(engine, store, _workload("c", 240))
    errors: list[BaseException] = []

    def twice(work: Any) -> None:
        barrier = threading.Barrier(2)

        def run() -> None:
            try:
                barrier.wait()
                work()
            except BaseException as exc:  # reported by the test below
                errors.append(exc)

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)

    twice(lambda: normalize_raw(engine, REGISTRY, raw_ids, blobs=store.blobs))
    twice(lambda: resolve_pending(engine))
    assert errors == []
    concurrent = _dump(engine)

    alone = make_engine(f"sqlite:///{tmp_path / 'alone.db'}")
    _setup(alone)
    store_alone = RawRecordStore(BlobStore(tmp_path / "blobs-alone"))
    ids_alone = _store(alone, store_alone, _workload("c", 240))
    normalize_raw(alone, REGISTRY, ids_alone, blobs=store_alone.blobs)
    resolve_pending(alone)
    expected = _dump(alone)
    alone.dispose()
    assert concurrent == expected
    prices = [r for r in concurrent["connector_field_stats"] if r["field"] == "price"]
    assert {(r["record_kind"], r["present"], r["total"]) for r in prices} >= {("sale", 240, 240)}


def test_a_lot_merged_from_its_page_and_pdf_line_gets_its_premium(any_engine: Engine) -> None:
    """The page gave only the price realised, the PDF line only the hammer: once merged, the
    buyer's premium is their difference — on the lot, and on what the write returns; a premium a
    source states later replaces it."""
    from rareindex.storage.observation_store import write_auction_lots
    from rareindex.storage.schema import auction_lots

    class House:
        meta = ConnectorMeta(
            id="house",
            source="House",
            engines=("api",),
            categories=("coin",),
            capabilities=("auction_lot",),
        )
        version = parser_version = "1"

    upgrade(any_engine)
    auction = {
        "source_id": "house",
        "external_id": "a1",
        "title": "Sale 1",
        "ends_at": None,
        "currency": "USD",
    }

    def lot(**prices: Any) -> dict[str, Any]:
        base = dict.fromkeys(
            (
                "asset_id", "variant_id", "normalized_id", "hammer_price", "buyer_premium_rate",
                "buyer_premium", "price_realised", "estimate_low", "estimate_high", "closes_at",
            )
        )  # fmt: skip
        return {
            "source_id": "house",
            "connector_id": "house",
            "lot_number": "7",
            "external_id": "a1-7",
            "title": "Lot 7",
            "status": "sold",
            "currency": "USD",
            **base,
            **prices,
        }

    with any_engine.begin() as conn:
        sync_connectors(conn, [House()])  # type: ignore[list-item]
        page, line = write_auction_lots(
            conn,
            [
                (auction, lot(price_realised=Decimal("1200"))),
                (auction, lot(hammer_price=Decimal("1000"))),
            ],
        )
        assert page["buyer_premium"] is None  # only one half known after the page
        assert line["buyer_premium"] == Decimal("200")
        stated = write_auction_lots(conn, [(auction, lot(buyer_premium=Decimal("250")))])
        assert stated[0]["buyer_premium"] == Decimal("250")
    with any_engine.connect() as conn:
        assert conn.execute(select(auction_lots.c.buyer_premium)).scalar_one() == Decimal("250")


def test_an_edition_the_catalog_lacks_becomes_its_own_variant(
    any_engine: Engine, tmp_path: Path
) -> None:
    """The real Pokémon data has one Base Set Charizard; sales of its 1st Edition, Unlimited and
    unstated copies resolve to that asset and land in three variants, the edition on each."""
    from rareindex.catalog import read_catalog

    upgrade(any_engine)
    with any_engine.begin() as conn:
        sync_connectors(conn, [ECHO])
    import_catalog(any_engine, read_catalog(REPO_ROOT / "fixtures/catalogs/pokemon-tcg-sample"))
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    titles = {
        "E1": "Charizard 4/102 Base Set 1st Edition Holo PSA 9",
        "E2": "1999 Pokemon Charizard 4/102 Base Set 1st Ed. Holo PSA 9 MINT",
        "U1": "Charizard 4/102 Base Set Unlimited Holo PSA 9",
        "N1": "Charizard 4/102 Base Set Holo PSA 9",
    }
    sales_in = [_sale(ext, title, "100.00", i) for i, (ext, title) in enumerate(titles.items())]
    raw_ids = _store(any_engine, store, [_raw("ed", _seen(1), sales_in)])
    normalize_raw(any_engine, REGISTRY, raw_ids, blobs=store.blobs)
    resolve_pending(any_engine)
    with any_engine.connect() as conn:
        rows = conn.execute(
            select(sales.c.external_id, sales.c.asset_id, asset_variants.c.print_mark)
            .join(asset_variants, asset_variants.c.id == sales.c.variant_id)
            .order_by(sales.c.external_id)
        ).all()
    marks = {ext: mark for ext, _, mark in rows}
    assert marks == {"E1": "1st Edition", "E2": "1st Edition", "N1": None, "U1": "Unlimited"}
    assert len({asset for _, asset, _ in rows}) == 1  # one asset, three variants
    with any_engine.connect() as conn:
        keys = conn.execute(select(asset_variants.c.variant_key)).scalars().all()
    assert sorted(k.rsplit("|", 1)[1] for k in keys) == ["", "1st edition", "unlimited"]


def test_no_write_goes_out_one_row_at_a_time_on_postgresql(
    pg_engine: Engine, tmp_path: Path
) -> None:
    """On PostgreSQL an ``executemany`` is one statement per row on the wire (psycopg sends each
    in pipeline mode), though the counter above sees one: normalizing and resolving send none.
    The change events (one per new sale, listing change, lot result), the derived premiums and
    the anomaly flags each go out as one statement; the events are all there."""
    from rareindex.storage.schema import events

    _setup(pg_engine)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    raw_ids = _store(pg_engine, store, _workload("m", 60))
    many: list[str] = []

    def seen(*args: Any) -> None:
        statement, context = args[2], args[4]
        # INSERTMANYVALUES (multi-row VALUES batches, for RETURNING) is not one row at a time
        if context is not None and context.execute_style.name == "EXECUTEMANY":
            many.append(" ".join(statement.split())[:80])

    event.listen(pg_engine, "before_cursor_execute", seen)
    try:
        normalize_raw(pg_engine, REGISTRY, raw_ids, blobs=store.blobs)
        resolved = resolve_pending(pg_engine)
    finally:
        event.remove(pg_engine, "before_cursor_execute", seen)
    assert resolved.resolved > 3 * 60
    assert many == []
    with pg_engine.connect() as conn:
        kinds = [row.type for row in conn.execute(select(events.c.type).order_by(events.c.cursor))]
        sold = conn.execute(select(sales.c.id)).all()
        derived = conn.execute(
            select(auction_lots.c.buyer_premium).where(auction_lots.c.buyer_premium.is_not(None))
        ).all()
    assert kinds.count("sale.recorded") == len(sold) > 60
    assert "listing.appeared" in kinds and "auction_lot.result" in kinds
    assert len(derived) == 30  # each lot's page and PDF line merged: realised - hammer

"""The stages after the crawl on real raw records: normalize -> resolve -> the observation tables.

The fake web is crawled once per module over real sockets (five shipped connectors, politeness
lifted: it has its own tests) into a SQLite file that tests copy. Against the fake web's ground
truth: market sales resolve to the right asset (precision 1.0, recall >= 0.95) with the grade as
the variant; processing again and replaying change no row; two fresh databases fed the same raw
records agree on every id; failures stay visible rows; field stats count each raw record once;
unmatched observations stay visible; PostgreSQL's partitioned tables take the same upserts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, Table, func, select, text

from rareindex.crawl import run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.handoff import ValidatedRecords
from rareindex.indexer import resolve_pending
from rareindex.normalizer import normalize_raw
from rareindex.pipeline import PipelineResult, process, replay
from rareindex.registry import Registry, load_registry
from rareindex.resolution import asset_key
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, make_engine, upgrade
from rareindex.storage.catalog_store import import_catalog
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.ids import stable_id
from rareindex.storage.index_report import median_prices_usd
from rareindex.storage.normalized_store import pending_normalized
from rareindex.storage.schema import (
    asset_variants,
    assets,
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
from rareindex_connectors import Connector, ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import (
    NormalizedRecord,
    RawRecord,
    RawRecordInput,
    parse_normalized,
)
from rareindex_connectors.runtime import PolicySet
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.catalog import world_catalog
from rareindex_fakeweb.sites.market_data import Listing as TruthListing
from rareindex_fakeweb.sites.market_data import market_data
from rareindex_fakeweb.sites.truth import appearances

REGISTRY = load_registry(REPO_ROOT / "connectors")
# Every record kind but the two big store feeds (listings come from coins-woo): keeps it fast.
CRAWLED = ("auction-house", "card-market", "coins-woo", "grading-registry", "hobby-news")
FAST = PolicySet.from_mapping(FakeWeb.policy())
CATALOG = world_catalog(7)
MARKET = market_data(7)
OBSERVATION_TABLES: tuple[Table, ...] = (
    images,
    assets,
    asset_variants,
    sales,
    listings,
    listing_events,
    auctions,
    auction_lots,
    price_observations,
    population_reports,
    news,
)
VOLATILE = frozenset({"created_at", "updated_at", "resolved_at"})
ZARD = "1999 Pokemon Base Set Charizard 4/102 Unlimited Holo"  # the world catalog's pk0012
CATALOG_ZARD = next(i for i in CATALOG if i.external_id == "pk0012")
DAY = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)


# --- the crawl, once per module ----------------------------------------------------------------


@dataclass(frozen=True)
class Processed:
    root: Path
    result: PipelineResult
    raw_ids: list[str]


def _engine(root: Path) -> Engine:
    return make_engine(f"sqlite:///{root / 'db.sqlite'}")


def _raw_ids(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        query = select(raw_records.c.id).order_by(raw_records.c.fetched_at, raw_records.c.id)
        return list(conn.execute(query).scalars())


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file (and its blobs) holding what five connectors crawled from the fake web."""
    root = tmp_path_factory.mktemp("crawled")
    engine = _engine(root)
    upgrade(engine)
    with engine.begin() as conn:
        sync_connectors(conn, REGISTRY)
    store = RawRecordStore(BlobStore(root / "blobs"))
    with serve_asgi(FakeWeb().app) as base:
        port = urlsplit(base).port
        settings = Settings(
            _env_file=None,
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )

        async def crawl() -> list[Any]:
            stack = build_fetch_stack(settings, policies=FAST)
            try:
                return [
                    await run_connector(REGISTRY.get(slug), db=engine, stack=stack, store=store)
                    for slug in CRAWLED
                ]
            finally:
                await stack.aclose()

        summaries = asyncio.run(asyncio.wait_for(crawl(), timeout=120))
    engine.dispose()
    assert [(s.connector_id, s.status) for s in summaries] == [(c, "succeeded") for c in CRAWLED]
    return root


@pytest.fixture(scope="module")
def processed(crawled: Path, tmp_path_factory: pytest.TempPathFactory) -> Processed:
    """The crawl, plus the world catalog, normalized and resolved."""
    root = tmp_path_factory.mktemp("processed")
    shutil.copytree(crawled, root, dirs_exist_ok=True)
    engine = _engine(root)
    import_catalog(engine, CATALOG)
    raw_ids = _raw_ids(engine)
    result = process(engine, REGISTRY, raw_ids, blobs=BlobStore(root / "blobs"))
    engine.dispose()
    return Processed(root, result, raw_ids)


@pytest.fixture
def processed_copy(processed: Processed, tmp_path: Path) -> Iterator[tuple[Engine, BlobStore]]:
    root = tmp_path / "copy"
    shutil.copytree(processed.root, root)
    engine = _engine(root)
    yield engine, BlobStore(root / "blobs")
    engine.dispose()


def _inputs(root: Path, connector_id: str) -> list[RawRecordInput]:
    """The stored raw records of one connector, as the RawRecordInputs that made them."""
    engine = _engine(root)
    store = RawRecordStore(BlobStore(root / "blobs"))
    fields = set(RawRecordInput.model_fields)
    with engine.connect() as conn:
        stored = list(store.iter_connector(conn, connector_id, with_snapshot=True))
    engine.dispose()
    return [RawRecordInput(**r.model_dump(include=fields)) for r in stored]


# --- table dumps ------------------------------------------------------------------------------


def _value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _dump(
    engine: Engine,
    tables: Sequence[Table] = (*OBSERVATION_TABLES, normalized_records),
    *,
    portable: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    """Every row of ``tables`` minus timestamps. ``portable``: normalized-record ids (which derive
    from the random raw ids) become their natural key, so two databases can be compared."""
    out: dict[str, list[dict[str, Any]]] = {}
    with engine.connect() as conn:
        natural = {
            nid: f"{cid}|{ext}|{digest}|{version}|{ordinal}"
            for nid, cid, ext, digest, version, ordinal in conn.execute(
                select(
                    normalized_records.c.id,
                    normalized_records.c.connector_id,
                    raw_records.c.external_id,
                    raw_records.c.content_hash,
                    normalized_records.c.parser_version,
                    normalized_records.c.ordinal,
                ).join(raw_records, raw_records.c.id == normalized_records.c.raw_id)
            )
        }
        for table in tables:
            columns = [c for c in table.c if c.name not in VOLATILE]
            rows = []
            for row in conn.execute(select(*columns)):
                values = {c.name: _value(v) for c, v in zip(columns, row, strict=True)}
                if portable and "normalized_id" in values:
                    values["normalized_id"] = natural.get(values["normalized_id"])
                if portable and table is normalized_records:
                    values["id"] = natural[values["id"]]
                    del values["raw_id"]
                rows.append(values)
            out[table.name] = _sorted(rows)
    return out


def _field_stats(engine: Engine) -> list[dict[str, Any]]:
    return _dump(engine, (connector_field_stats,))["connector_field_stats"]


# --- ground truth -----------------------------------------------------------------------------


def _same_grade(stored: str | None, truth: str | None) -> bool:
    """``6.0`` and ``6`` are one grade; ``MS65`` is compared as written."""
    if stored is None or truth is None:
        return stored == truth
    try:
        return Decimal(stored) == Decimal(truth)
    except InvalidOperation:
        return stored == truth


def _assets_by_item(engine: Engine) -> dict[str, str]:
    """World item key (the catalog's ``external_id``) -> asset id, as stored."""
    with engine.connect() as conn:
        rows = conn.execute(select(assets.c.id, assets.c.attributes))
        return {attributes["external_id"]: asset_id for asset_id, attributes in rows}


def test_market_sales_resolve_to_their_true_assets_and_grades_become_variants(
    processed: Processed,
) -> None:
    engine = _engine(processed.root)
    by_item = _assets_by_item(engine)
    with engine.connect() as conn:
        sold = {
            r.external_id: r
            for r in conn.execute(select(sales).where(sales.c.connector_id == "card-market"))
        }
        variants = {r.id: r for r in conn.execute(select(asset_variants))}
        observed = set(
            conn.execute(
                select(price_observations.c.source_item_id).where(
                    price_observations.c.connector_id == "card-market"
                )
            ).scalars()
        )
    engine.dispose()
    assert len(by_item) == len(CATALOG) == 884
    assert all(by_item[i.external_id] == stable_id("ast", asset_key(i)) for i in CATALOG)

    truth = MARKET.sold()
    assert set(sold) == {x.item_id for x in truth}  # lots and best offers are rows too
    clean = [x for x in truth if not x.is_lot and x.sale_type != "best_offer"]
    assert len(clean) > 300
    matched = [x for x in clean if sold[x.item_id].asset_id is not None]
    wrong = [
        (x.title, x.copy.item.key)
        for x in matched
        if sold[x.item_id].asset_id != by_item[x.copy.item.key]
    ]
    assert wrong == []  # precision 1.0
    assert len(matched) / len(clean) >= 0.95, len(matched) / len(clean)

    bad_variants = []
    for x in matched:
        variant = variants[sold[x.item_id].variant_id]
        grade = x.copy.grade.grade if x.grader else None
        assert variant.asset_id == sold[x.item_id].asset_id
        if variant.grader != x.grader or not _same_grade(variant.grade, grade):
            bad_variants.append((x.title, variant.grader, variant.grade, x.grader, grade))
    assert bad_variants == []
    # lots and hidden best-offer prices stay out of the price series; clean matched sales enter
    assert not {x.item_id for x in truth if x.is_lot or x.sale_type == "best_offer"} & observed
    assert {x.item_id for x in matched} <= observed

    # a PSA 9 and a PSA 10 copy of one item: one asset, two variants
    psa: dict[str, dict[str, TruthListing]] = defaultdict(dict)
    for x in matched:
        if x.grader == "PSA" and x.copy.grade.grade in ("9", "10"):
            psa[x.copy.item.key][x.copy.grade.grade] = x
    pairs = [grades for grades in psa.values() if len(grades) == 2]
    assert pairs
    for grades in pairs:
        nine, ten = sold[grades["9"].item_id], sold[grades["10"].item_id]
        assert nine.asset_id == ten.asset_id
        assert nine.variant_id != ten.variant_id
        assert (variants[nine.variant_id].grader, variants[nine.variant_id].grade) == ("PSA", "9")
        assert (variants[ten.variant_id].grader, variants[ten.variant_id].grade) == ("PSA", "10")


def test_no_observation_of_any_site_points_at_a_wrong_asset(processed: Processed) -> None:
    """Precision across sites: every sale and listing whose page the ground truth knows."""
    engine = _engine(processed.root)
    by_item = _assets_by_item(engine)
    with engine.connect() as conn:
        rows = [
            *conn.execute(select(sales.c.connector_id, sales.c.url, sales.c.asset_id)),
            *conn.execute(select(listings.c.connector_id, listings.c.url, listings.c.asset_id)),
        ]
    engine.dispose()
    pages = {(a.host, a.path): a for a in appearances(7)}
    verdicts: Counter[tuple[str, str]] = Counter()
    for connector_id, url, asset_id in rows:
        parts = urlsplit(url)
        seen = pages.get((parts.hostname or "", parts.path))
        if seen is None:
            continue
        expected = by_item[seen.copy.item.key]
        verdict = (
            "unmatched" if asset_id is None else ("right" if asset_id == expected else "wrong")
        )
        verdicts[connector_id, verdict] += 1
    assert not [k for k in verdicts if k[1] == "wrong"], verdicts
    assert verdicts["card-market", "right"] >= 0.95 * len(MARKET.sold())
    assert verdicts["auction-house", "right"] >= 150


def test_a_lot_seen_on_its_page_and_in_the_pdf_is_one_dated_sale(processed: Processed) -> None:
    """The auction house shows each lot twice (its page, and a line of the prices-realised PDF
    without a date): one auction_lots row with both halves merged, and at most one sale, dated
    by the auction — never a second sale dated by the fetch."""
    engine = _engine(processed.root)
    with engine.connect() as conn:
        sold = conn.execute(
            select(sales.c.external_id, sales.c.sale_date, sales.c.asset_id).where(
                sales.c.source_id == "fake-auctions"
            )
        ).all()
        lots = conn.execute(
            select(auction_lots.c.lot_number, auction_lots.c.closes_at, auction_lots.c.status)
        ).all()
        fetched = conn.execute(select(func.min(raw_records.c.fetched_at))).scalar_one()
    engine.dispose()
    ids = [external_id for external_id, _, _ in sold]
    assert len(ids) == len(set(ids)) > 100
    assert all(when < fetched for _, when, _ in sold)  # the auction's date, not the crawl's
    assert all(asset is not None for _, _, asset in sold)
    closing = {when for _, when, status in lots if status == "sold"}
    assert {when for _, when, _ in sold} <= closing


def test_observations_keep_their_image_urls(processed: Processed) -> None:
    engine = _engine(processed.root)
    with engine.connect() as conn:
        rows = conn.execute(select(images.c.owner_type, images.c.owner_id, images.c.url)).all()
        sale_urls = {(owner, url) for kind, owner, url in rows if kind == "sale"}
        market = conn.execute(
            select(sales.c.id, sales.c.external_id).where(sales.c.connector_id == "card-market")
        ).all()
    engine.dispose()
    assert {kind for kind, _, _ in rows} >= {"sale", "auction_lot"}
    listing = next(x for x in market_data(7).listings if x.status == "sold")
    sale_id = next(i for i, ext in market if ext == listing.item_id)
    assert {url for owner, url in sale_urls if owner == sale_id} == {
        f"http://market.fake.test/img/{listing.item_id}-{n}.jpg" for n in (1, 2)
    }


def test_the_summary_counts_what_the_tables_hold(processed: Processed) -> None:
    engine = _engine(processed.root)
    with engine.connect() as conn:
        statuses: Counter[str] = Counter(
            dict(
                conn.execute(
                    select(normalized_records.c.status, func.count()).group_by(
                        normalized_records.c.status
                    )
                ).all()
            )
        )
        kinds = set(conn.execute(select(normalized_records.c.kind).distinct()).scalars())
    engine.dispose()
    n, r = processed.result.normalized, processed.result.resolved
    assert n.raw == len(processed.raw_ids) and n.skipped == 0
    assert statuses["pending"] == 0
    assert statuses["matched"] == r.matched and statuses["unmatched"] == r.unmatched
    assert sum(statuses.values()) == n.records + n.failed
    assert {"sale", "listing", "auction_lot", "population_report", "news_item"} <= kinds


def test_median_prices_never_pool_grades(processed: Processed) -> None:
    """The demo's median table is per variant: an asset sold at PSA 9 and PSA 10 gets a row for
    each, and each row's median is that grade's alone."""
    engine = _engine(processed.root)
    with engine.connect() as conn:
        rows = median_prices_usd(conn, top=100_000)
        usd = conn.execute(
            text(
                "SELECT v.asset_id, s.variant_id, v.price_usd FROM sales_multi_currency v "
                "JOIN sales s ON s.id = v.id AND s.sale_date = v.sale_date "
                "WHERE v.price_usd IS NOT NULL AND s.is_lot = :no "
                "AND s.price_visibility = 'exact'"
            ),
            {"no": False},
        ).all()
    engine.dispose()
    by_variant: dict[tuple[str, str | None], list[float]] = defaultdict(list)
    for asset_id, variant_id, price in usd:
        by_variant[(asset_id, variant_id)].append(float(price))
    per_asset = Counter(row.asset_id for row in rows)
    assert max(per_asset.values()) >= 2  # some asset sold at two grades: two rows
    for row in rows:
        assert row.median_usd == statistics.median(by_variant[(row.asset_id, row.variant_id)])
        assert " · " in row.title


# --- idempotency and replay --------------------------------------------------------------------


def test_processing_the_same_raw_records_again_changes_no_row(
    processed: Processed, processed_copy: tuple[Engine, BlobStore]
) -> None:
    engine, blobs = processed_copy
    before, stats = _dump(engine), _field_stats(engine)
    again = process(engine, REGISTRY, processed.raw_ids, blobs=blobs)
    assert (again.normalized.raw, again.normalized.skipped) == (0, len(processed.raw_ids))
    assert (again.normalized.records, again.resolved.resolved) == (0, 0)
    assert resolve_pending(engine).resolved == 0
    assert _dump(engine) == before
    assert _field_stats(engine) == stats


def test_replay_twice_rewrites_identical_tables_and_counts_no_field_twice(
    processed: Processed, processed_copy: tuple[Engine, BlobStore]
) -> None:
    engine, blobs = processed_copy
    before, stats = _dump(engine), _field_stats(engine)
    assert before["listing_events"] and before["price_observations"] and before["auction_lots"]
    first = replay(engine, REGISTRY, blobs=blobs)
    assert first.normalized.raw == 0 and first.normalized.skipped == len(processed.raw_ids)
    assert first.reopened == first.resolved.resolved == processed.result.resolved.resolved
    after_first = _dump(engine)
    assert after_first == before
    second = replay(engine, REGISTRY, blobs=blobs)
    assert (second.resolved.matched, second.resolved.unmatched) == (
        first.resolved.matched,
        first.resolved.unmatched,
    )
    assert _dump(engine) == after_first
    assert _field_stats(engine) == stats


def test_two_fresh_databases_fed_the_same_raw_records_agree_on_every_id(
    crawled: Path, processed: Processed, tmp_path: Path
) -> None:
    inputs = {slug: _inputs(crawled, slug) for slug in CRAWLED}
    dumps = []
    for name, reverse in (("a", False), ("b", True)):
        engine = make_engine(f"sqlite:///{tmp_path / f'{name}.db'}")
        upgrade(engine)
        store = RawRecordStore(BlobStore(tmp_path / f"{name}-blobs"))
        with engine.begin() as conn:
            sync_connectors(conn, REGISTRY)
            # b stores everything in reverse: other raw ids, other insertion order
            for slug in sorted(inputs, reverse=reverse):
                connector = REGISTRY.get(slug)
                store.insert_many(
                    conn,
                    connector_id=slug,
                    connector_version=connector.version,
                    parser_version=connector.parser_version,
                    records=inputs[slug][::-1] if reverse else inputs[slug],
                )
        import_catalog(engine, CATALOG)
        process(engine, REGISTRY, _raw_ids(engine), blobs=store.blobs)
        dumps.append(_dump(engine, portable=True))
        engine.dispose()
    a, b = dumps
    assert a["sales"] and a["listings"] and a["price_observations"] and a["asset_variants"]
    assert a == b
    crawled_db = _engine(processed.root)
    try:
        assert _dump(crawled_db, portable=True) == a  # and the database the crawl filled agrees
    finally:
        crawled_db.dispose()


def test_each_record_is_validated_once_and_chunks_change_no_row(
    crawled: Path, processed: Processed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``process`` hands the records it normalized to the resolver (no second validation of
    their stored JSON), in chunks of raw ids: the tables are those of normalizing everything,
    then resolving every stored row from its JSON."""
    import rareindex.indexer as indexer

    parsed: list[str] = []
    parse = indexer.parse_normalized
    monkeypatch.setattr(
        indexer, "parse_normalized", lambda doc: parsed.append(doc["kind"]) or parse(doc)
    )
    root = tmp_path / "chunked"
    shutil.copytree(crawled, root)
    engine = _engine(root)
    import_catalog(engine, CATALOG)
    result = process(engine, REGISTRY, _raw_ids(engine), blobs=BlobStore(root / "blobs"), chunk=97)
    assert result.resolved.resolved == processed.result.resolved.resolved > 0
    assert parsed == []  # every record came from the handoff
    assert result.normalize_seconds > 0 and result.resolve_seconds > 0
    chunked = _dump(engine, portable=True)
    engine.dispose()

    root = tmp_path / "from-json"
    shutil.copytree(crawled, root)
    engine = _engine(root)
    import_catalog(engine, CATALOG)
    normalize_raw(engine, REGISTRY, _raw_ids(engine), blobs=BlobStore(root / "blobs"))
    assert resolve_pending(engine).resolved == result.resolved.resolved
    assert len(parsed) == result.resolved.resolved  # without a handoff: each from its JSON
    assert _dump(engine, portable=True) == chunked
    engine.dispose()


# --- small, synthetic raw records --------------------------------------------------------------


def _sold(item_id: str, title: str, price: str, day: int = 1) -> RawRecordInput:
    """A raw record as card-market stores a sold item page."""
    url = f"http://market.fake.test/itm/{item_id}"
    listing = {
        "itemId": item_id,
        "title": title,
        "status": "SOLD",
        "format": "FIXED_PRICE",
        "price": {"value": price, "currency": "USD"},
        "soldPrice": {"value": price, "currency": "USD"},
        "soldDate": f"2026-04-{day:02d}T10:00:00-07:00",
        "itemSpecifics": {},
    }
    return RawRecordInput(
        external_id=item_id, url=url, payload={"url": url, "listing": listing}, fetched_at=DAY
    )


class _Scripted:
    """A connector whose ``normalize()`` does what the test says."""

    version = "1"
    parser_version = "1"

    def __init__(self, slug: str, normalize: Callable[[RawRecord], list[NormalizedRecord]]):
        self.meta = ConnectorMeta(
            id=slug,
            source=f"Source {slug}",
            engines=("api",),
            categories=("other",),
            capabilities=("sale",),
        )
        self._normalize = normalize

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        nothing: tuple[RawRecordInput, ...] = ()  # never crawled here
        for record in nothing:
            yield record

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        return self._normalize(raw)

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


def _setup(engine: Engine, connectors: Sequence[Any], *, catalog: bool = True) -> None:
    upgrade(engine)
    with engine.begin() as conn:
        sync_connectors(conn, connectors)
    if catalog:
        import_catalog(engine, CATALOG)


def _store(
    engine: Engine, store: RawRecordStore, connector: Connector, records: list[RawRecordInput]
) -> list[str]:
    with engine.begin() as conn:
        batch = store.insert_many(
            conn,
            connector_id=connector.meta.id,
            connector_version=connector.version,
            parser_version=connector.parser_version,
            records=records,
        )
    assert len(batch.raw_ids) == len(records)
    return batch.raw_ids


def _normalized(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """connector -> its normalized rows as (status, kind, reject_reason, ordinal, asset_id)."""
    rows: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    with engine.connect() as conn:
        for r in conn.execute(select(normalized_records).order_by(normalized_records.c.ordinal)):
            rows[r.connector_id].append((r.status, r.kind, r.reject_reason, r.ordinal, r.asset_id))
    return dict(rows)


def _crash(raw: RawRecord) -> list[NormalizedRecord]:
    raise RuntimeError("a bug in the connector")


def _parse_error(raw: RawRecord) -> list[NormalizedRecord]:
    raise ParseError(ParseReason.MISSING_FIELD, "no price on the page", field="price")


def _nothing(raw: RawRecord) -> list[NormalizedRecord]:
    return []


def test_failures_stay_visible_rows_and_the_worker_goes_on(
    any_engine: Engine, tmp_path: Path
) -> None:
    market = REGISTRY.get("card-market")
    gone = _Scripted("gone-shop", _nothing)
    scripted = [
        _Scripted("parse-fails", _parse_error),
        _Scripted("crashes", _crash),
        _Scripted("says-nothing", _nothing),
    ]
    _setup(any_engine, [market, gone, *scripted])
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    raw_ids = []
    for connector in (gone, *scripted):
        raw_ids += _store(any_engine, store, connector, [_sold("7", "anything", "1.00")])
    raw_ids += _store(any_engine, store, market, [_sold("8", f"{ZARD} PSA 9", "250.00")])
    installed: list[Connector] = [market, *scripted]  # not gone-shop
    registry = Registry(connectors={c.meta.id: c for c in installed})

    result = process(any_engine, registry, raw_ids, blobs=store.blobs)
    expected = {
        "gone-shop": [("failed", "none", "connector_missing", 0, None)],
        "parse-fails": [("failed", "none", "missing_field", 0, None)],
        "crashes": [("failed", "none", "normalize_crashed", 0, None)],
        "says-nothing": [("rejected", "none", "no_records", 0, None)],
        "card-market": [("matched", "sale", None, 0, stable_id("ast", asset_key(CATALOG_ZARD)))],
    }
    assert _normalized(any_engine) == expected
    assert result.normalized.failed == 4 and result.normalized.records == 1
    assert result.normalized.reasons == Counter(
        connector_missing=1, missing_field=1, normalize_crashed=1, no_records=1
    )
    with any_engine.connect() as conn:
        failed = conn.execute(
            select(normalized_records.c.record).where(normalized_records.c.kind == "none")
        ).scalars()
        assert {(r["reason"], r["url"]) for r in failed} == {
            (reason, "http://market.fake.test/itm/7")
            for reason in ("connector_missing", "missing_field", "normalize_crashed", "no_records")
        }
        assert conn.execute(select(func.count()).select_from(sales)).scalar_one() == 1

    before = _dump(any_engine)
    process(any_engine, registry, raw_ids, blobs=store.blobs)
    replay(any_engine, registry, blobs=store.blobs)
    assert _normalized(any_engine) == expected  # nothing duplicated, nothing lost
    assert _dump(any_engine) == before


def test_raw_records_of_a_missing_connector_are_normalized_once_it_is_back(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    """A connector missing for a while (an uninstalled file, a bad deploy) must not leave its
    raw records failed for good: once it is back, a replay normalizes them."""
    market = REGISTRY.get("card-market")
    _setup(sqlite_engine, [market])
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    raw_ids = _store(sqlite_engine, store, market, [_sold("8", f"{ZARD} PSA 9", "250.00")])
    process(sqlite_engine, Registry(), raw_ids, blobs=store.blobs)
    assert _normalized(sqlite_engine) == {
        "card-market": [("failed", "none", "connector_missing", 0, None)]
    }

    replay(sqlite_engine, REGISTRY, blobs=store.blobs)
    rows = _normalized(sqlite_engine)["card-market"]
    assert ("matched", "sale") in {(status, kind) for status, kind, *_ in rows}, rows
    with sqlite_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(sales)).scalar_one() == 1


def _stats_of(engine: Engine, connector_id: str) -> dict[tuple[str, str], tuple[int, int]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(connector_field_stats).where(
                connector_field_stats.c.connector_id == connector_id
            )
        )
        return {(r.record_kind, r.field): (r.present, r.total) for r in rows}


def test_field_stats_count_each_raw_record_once(any_engine: Engine, tmp_path: Path) -> None:
    market = REGISTRY.get("card-market")
    _setup(any_engine, [market], catalog=False)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    titles = [f"{ZARD} PSA 9", f"{ZARD} PSA 10", ZARD, f"{ZARD} BGS 9.5", "Some raw card"]
    first = _store(
        any_engine, store, market, [_sold(str(i), t, "10.00") for i, t in enumerate(titles)]
    )
    process(any_engine, REGISTRY, first, blobs=store.blobs)
    stats = _stats_of(any_engine, "card-market")
    assert stats[("sale", "price")] == (5, 5)
    assert stats[("sale", "grading.grade")] == (3, 5)

    replay(any_engine, REGISTRY, blobs=store.blobs)
    scoped = replay(any_engine, REGISTRY, blobs=store.blobs, connector_id="card-market", since=DAY)
    assert (scoped.normalized.skipped, scoped.reopened, scoped.resolved.resolved) == (5, 5, 5)
    later = replay(any_engine, REGISTRY, blobs=store.blobs, since=datetime(2999, 1, 1, tzinfo=UTC))
    assert (later.normalized.skipped, later.reopened, later.resolved.resolved) == (0, 0, 0)
    process(any_engine, REGISTRY, first, blobs=store.blobs)
    assert _stats_of(any_engine, "card-market") == stats

    more = _store(any_engine, store, market, [_sold("90", f"{ZARD} PSA 8", "9.00")])
    process(any_engine, REGISTRY, first + more, blobs=store.blobs)
    grown = _stats_of(any_engine, "card-market")
    assert grown[("sale", "price")] == (6, 6)
    assert grown[("sale", "grading.grade")] == (4, 6)


def test_a_raw_id_given_twice_in_one_call_is_counted_once(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    """At-least-once delivery hands the normalizer the same raw id twice; it is stored once, so
    it must be counted once (stats feed drift detection)."""
    market = REGISTRY.get("card-market")
    _setup(sqlite_engine, [market], catalog=False)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    raw_ids = _store(
        sqlite_engine, store, market, [_sold("1", ZARD, "1.00"), _sold("2", ZARD, "2.00")]
    )
    result = process(sqlite_engine, REGISTRY, [*raw_ids, raw_ids[0]], blobs=store.blobs)
    with sqlite_engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(normalized_records)).scalar_one()
    assert rows == 2
    assert _stats_of(sqlite_engine, "card-market")[("sale", "price")] == (2, 2)
    assert result.normalized.records == 2


def test_pending_rows_leave_out_only_the_records_the_handoff_holds(
    any_engine: Engine, tmp_path: Path
) -> None:
    market = REGISTRY.get("card-market")
    _setup(any_engine, [market], catalog=False)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    records = [_sold(str(i), f"{ZARD} PSA {i}", f"{i}0.00", day=i) for i in range(1, 5)]
    raw_ids = _store(any_engine, store, market, records)
    handoff = ValidatedRecords()
    normalize_raw(any_engine, REGISTRY, raw_ids, blobs=store.blobs, handoff=handoff)
    with any_engine.connect() as conn:
        full = pending_normalized(conn, limit=10)
        assert len(full) == len(handoff) == 4
        first = full[0]["id"]
        kept = handoff.take(first)
        assert kept is not None and parse_normalized(full[0]["record"]) == kept
        held = pending_normalized(conn, limit=10, held=handoff)
        assert held == [{**row, "record": None} if row["id"] != first else row for row in full]
        assert pending_normalized(conn, limit=10, held=ValidatedRecords()) == full


def test_unmatched_sales_stay_visible_and_outliers_are_flagged(
    any_engine: Engine, tmp_path: Path
) -> None:
    market = REGISTRY.get("card-market")
    _setup(any_engine, [market])
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    prices = ["100.00", "101.00", "99.00", "100.00", "102.00", "98.00", "10000.00"]
    records = [_sold(str(i), f"{ZARD} PSA 9", p, day=i) for i, p in enumerate(prices, 1)]
    records.append(_sold("20", f"{ZARD} PSA 10", "500.00", day=20))
    records.append(_sold("21", "2031 Zyzzyx Galactic Nonexistent #999 PSA 10", "5.00", day=21))
    raw_ids = _store(any_engine, store, market, records)
    result = process(any_engine, REGISTRY, raw_ids, blobs=store.blobs)
    assert (result.resolved.matched, result.resolved.unmatched) == (8, 1)
    assert result.resolved.anomalies == 1

    def state() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
        with any_engine.connect() as conn:
            sold = {r.external_id: r for r in conn.execute(select(sales))}
            observed = {r.source_item_id: r for r in conn.execute(select(price_observations))}
            variants = {r.id: r for r in conn.execute(select(asset_variants))}
            decisions = {
                r.record["external_id"]: r for r in conn.execute(select(normalized_records))
            }
        return sold, observed, variants, decisions

    sold, observed, variants, decisions = state()
    unknown = decisions["21"]
    assert (unknown.status, unknown.asset_id, unknown.variant_id) == ("unmatched", None, None)
    assert unknown.reject_reason == "no_candidate" and unknown.match_method is None
    assert (sold["21"].asset_id, sold["21"].variant_id) == (None, None)
    assert sold["21"].price == Decimal("5.00") and "21" not in observed

    asset_id = stable_id("ast", asset_key(CATALOG_ZARD))
    assert {r.asset_id for k, r in sold.items() if k != "21"} == {asset_id}
    nine, ten = variants[sold["1"].variant_id], variants[sold["20"].variant_id]
    assert (nine.asset_id, nine.grader, nine.grade) == (asset_id, "PSA", "9")
    assert (ten.asset_id, ten.grader, ten.grade) == (asset_id, "PSA", "10")
    assert len(variants) == 2
    assert all(
        d.status == "matched" and d.match_confidence >= 0.85
        for k, d in decisions.items()
        if k != "21"
    )
    assert {k: r.anomaly_reason for k, r in observed.items()} == {
        **{str(i): None for i in range(1, 7)},
        "7": "robust_z",
        "20": None,
    }
    before = _dump(any_engine)
    replay(any_engine, REGISTRY, blobs=store.blobs)
    assert _dump(any_engine) == before


# --- PostgreSQL: partitioned sales and price observations ------------------------------------


def _partitions(engine: Engine, table: str) -> dict[str, int]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(f"SELECT tableoid::regclass::text, count(*) FROM {table} GROUP BY 1")  # noqa: S608
        )
        return {name: count for name, count in rows}


def test_market_sales_on_postgres_land_in_partitions_and_replay_finds_them_there(
    pg_engine: Engine, crawled: Path, tmp_path: Path
) -> None:
    market = REGISTRY.get("card-market")
    _setup(pg_engine, list(REGISTRY))
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    raw_ids = _store(pg_engine, store, market, _inputs(crawled, "card-market"))
    process(pg_engine, REGISTRY, raw_ids, blobs=store.blobs)

    by_item = _assets_by_item(pg_engine)
    with pg_engine.connect() as conn:
        sold = {r.external_id: r.asset_id for r in conn.execute(select(sales))}
    truth = MARKET.sold()
    assert set(sold) == {x.item_id for x in truth}
    matched = [x for x in truth if sold[x.item_id] is not None]
    assert all(sold[x.item_id] == by_item[x.copy.item.key] for x in matched)
    assert len(matched) >= 0.95 * len(truth)

    # Partitions a fresh schema has are around today; maintenance adds monthly partitions back to
    # the oldest sale and moves the rows there out of DEFAULT. Upserts must then find them there.
    assert sum(_partitions(pg_engine, "sales").values()) == len(truth)
    now = datetime.now(UTC)
    oldest = min(x.when for x in truth)
    back = max(0, (now.year - oldest.year) * 12 + now.month - oldest.month + 1)
    with pg_engine.begin() as conn:
        for table in ("sales", "price_observations"):
            conn.execute(text(f"SELECT ri_ensure_partitions('{table}'::regclass, {back}, 3)"))
    monthly = _partitions(pg_engine, "sales")
    assert "sales_default" not in monthly and len(monthly) >= 3
    assert sum(monthly.values()) == len(truth)
    observed = _partitions(pg_engine, "price_observations")
    assert "price_observations_default" not in observed and len(observed) >= 3

    before = _dump(pg_engine)
    again = replay(pg_engine, REGISTRY, blobs=store.blobs, connector_id="card-market")
    assert again.resolved.resolved == len(truth)
    process(pg_engine, REGISTRY, raw_ids, blobs=store.blobs)
    assert _dump(pg_engine) == before
    assert _partitions(pg_engine, "sales") == monthly

"""The marketplace and grading-registry code connectors against the fake web over real sockets.

Market: a full crawl stores one raw record per sold item, each normalizing to a sale whose price,
currency, sale type, lot flag, grade and cert match the site's ground truth; the cursor resumes
and a re-run is all dupes. Grader: lookups return the cert record (404 for an unknown cert), and
the crawl's pop reports equal the registry's. Everything runs on 127.0.0.1, time-boxed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine

from rareindex.check import check_connector
from rareindex.crawl import RunSummary, run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.runs import connector_cursor
from rareindex_connectors import Connector, CrawlContext, CrawlOptions
from rareindex_connectors.errors import ParseError, PermanentFetchError
from rareindex_connectors.records import (
    Listing,
    NormalizedRecord,
    PopulationReport,
    RawRecord,
    RawRecordInput,
    Sale,
)
from rareindex_connectors.runtime import PolicySet
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.grader import grader_data
from rareindex_fakeweb.sites.market_data import Listing as TruthListing
from rareindex_fakeweb.sites.market_data import market_data
from rareindex_fakeweb.sites.truth import cert_numbers

REGISTRY = load_registry(REPO_ROOT / "connectors")
MARKET = REGISTRY.get("card-market")
GRADER = REGISTRY.get("grading-registry")
TRUTH = market_data(7)
SOLD = TRUTH.sold()
POPS = grader_data(7)
WATCHED: tuple[int, ...] = GRADER.specs  # type: ignore[attr-defined]
T = TypeVar("T")
# The shipped policy allows 60 requests a minute per host: a full sweep of ~400 item pages would
# take 7 minutes. These tests check what connectors fetch and make of it, so they lift the limits
# (politeness has its own tests); the one-page check goes through the shipped policy.
FAST = PolicySet.from_mapping(FakeWeb.policy())


@pytest.fixture(scope="module")
def settings() -> Iterator[Settings]:
    with serve_asgi(FakeWeb().app) as base:
        port = urlsplit(base).port
        yield Settings(
            _env_file=None,
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )


def _with_ctx(
    settings: Settings,
    connector: Connector,
    work: Callable[[CrawlContext], Awaitable[T]],
    *,
    cursor: dict[str, Any] | None = None,
    max_pages: int | None = None,
) -> T:
    async def go() -> T:
        stack = build_fetch_stack(settings, policies=FAST)
        ctx = CrawlContext(
            connector_id=connector.meta.id,
            fetch=stack.router.fetcher(connector.meta.engines),
            options=CrawlOptions(max_pages=max_pages),
            cursor=cursor,
        )
        try:
            return await asyncio.wait_for(work(ctx), timeout=60)
        finally:
            await stack.aclose()

    return asyncio.run(go())


def _crawl(
    connector: Connector, db: Engine, settings: Settings, tmp_path: Path
) -> tuple[RunSummary, list[RawRecord]]:
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])
    store = RawRecordStore(BlobStore(tmp_path))

    async def go() -> RunSummary:
        stack = build_fetch_stack(settings, policies=FAST)
        try:
            run = run_connector(connector, db=db, stack=stack, store=store)
            return await asyncio.wait_for(run, timeout=120)
        finally:
            await stack.aclose()

    summary = asyncio.run(go())
    with db.connect() as conn:
        raws = list(store.iter_connector(conn, connector.meta.id, with_snapshot=True))
    return summary, raws


def _raw(payload: dict[str, Any], url: str = "http://market.fake.test/itm/1") -> RawRecord:
    return RawRecord(
        external_id="1",
        url=url,
        payload=payload,
        id="raw_1",
        connector_id="card-market",
        content_hash="0" * 64,
        connector_version="1",
        parser_version="1",
    )


def _cents(amount: Decimal) -> int:
    return int(amount * 100)


def _assert_sale_matches(sale: NormalizedRecord, truth: TruthListing) -> None:
    assert isinstance(sale, Sale)
    assert (_cents(sale.price.amount), sale.price.currency) == (truth.price, truth.currency)
    assert sale.shipping is not None and _cents(sale.shipping.amount) == truth.shipping
    assert sale.sale_type == truth.sale_type
    assert sale.price_visibility == truth.price_visibility
    assert (sale.price_basis == "offer_accepted") == (truth.sale_type == "best_offer")
    assert sale.sold_at == truth.when
    assert sale.is_lot == truth.is_lot and ("lot" in sale.flags) == truth.is_lot
    if truth.grader is None:  # raw copies, whatever grader their title names or negates
        assert sale.grading is None and sale.identifiers.cert_number is None
    else:
        assert sale.grading is not None and sale.grading.grader == truth.grader
        assert sale.identifiers.cert_number == (truth.cert_in_title or truth.cert)
    if {"negated", "speculative", "comp"} & set(truth.flags):
        assert sale.grading is None
        assert {"negated_grade", "speculative_grade"} & set(sale.flags)


# --- market.fake.test ---------------------------------------------------------------------------


def test_market_check_normalizes_the_first_page_to_true_sales(settings: Settings) -> None:
    report = asyncio.run(asyncio.wait_for(check_connector(MARKET, settings), timeout=60))
    assert report.ok and not report.failures and report.fetch_error is None
    assert report.kinds() == {"sale": len(report.raws)} and len(report.raws) >= 20
    assert [r.external_id for r in report.raws] == [x.item_id for x in SOLD[: len(report.raws)]]
    for sale in report.normalized:
        _assert_sale_matches(sale, TRUTH.by_id[sale.external_id])


def test_a_market_crawl_stores_every_sold_item_once_and_a_rerun_is_all_dupes(
    sqlite_engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    summary, raws = _crawl(MARKET, sqlite_engine, settings, tmp_path)
    assert (summary.status, summary.records, summary.dupes) == ("succeeded", len(SOLD), 0)
    assert sorted(r.external_id for r in raws) == sorted(x.item_id for x in SOLD)
    assert len(SOLD) > 350 and all(r.snapshot is None for r in raws)
    sales = [record for raw in raws for record in MARKET.normalize(raw)]
    assert len(sales) == len(SOLD)
    for sale in sales:
        _assert_sale_matches(sale, TRUTH.by_id[sale.external_id])
    # the noise really is there, and the rules above really were exercised
    flags = {f for x in SOLD for f in x.flags}
    assert {"negated", "speculative", "comp", "lot", "best_offer", "cert", "item_id"} <= flags
    assert sum(s.price_visibility == "hidden" for s in sales if isinstance(s, Sale)) > 10
    assert connector_cursor(sqlite_engine, "card-market") == {"page": 1, "sweeps": 1}

    again, _ = _crawl(MARKET, sqlite_engine, settings, tmp_path)
    assert (again.status, again.records, again.dupes) == ("succeeded", 0, len(SOLD))
    assert connector_cursor(sqlite_engine, "card-market") == {"page": 1, "sweeps": 2}


def test_the_market_cursor_moves_after_a_page_and_resumes_there(settings: Settings) -> None:
    async def crawl(ctx: CrawlContext) -> tuple[list[RawRecordInput], Any]:
        return [r async for r in MARKET.crawl(ctx)], ctx.cursor

    first, cursor = _with_ctx(settings, MARKET, crawl, max_pages=1)
    assert [r.external_id for r in first] == [x.item_id for x in SOLD[:50]]
    assert cursor == {"page": 2, "sweeps": 0}  # budget spent mid-sweep: resume on page 2
    last_page = (len(SOLD) - 1) // 50 + 1
    rest, cursor = _with_ctx(settings, MARKET, crawl, cursor={"page": last_page, "sweeps": 4})
    assert [r.external_id for r in rest] == [x.item_id for x in SOLD[(last_page - 1) * 50 :]]
    assert cursor == {"page": 1, "sweeps": 5}  # the sweep is done: start over at the top


def test_market_lookup_resolves_item_urls_sold_and_active(settings: Settings) -> None:
    sold = next(x for x in SOLD if x.sale_type == "best_offer")
    active = TRUTH.active()[0]

    async def look(ctx: CrawlContext) -> list[list[RawRecordInput]]:
        return [
            await MARKET.lookup(f"https://market.fake.test/itm/{sold.item_id}", ctx),
            await MARKET.lookup(f"http://market.fake.test/itm/{active.item_id}?hash=x", ctx),
            await MARKET.lookup("http://market.fake.test/search?q=psa", ctx),
            await MARKET.lookup("http://grader.fake.test/itm/1", ctx),
        ]

    found_sold, found_active, search, elsewhere = _with_ctx(settings, MARKET, look)
    assert search == [] and elsewhere == []
    [sale] = MARKET.normalize(_raw(found_sold[0].model_dump()["payload"]))
    _assert_sale_matches(sale, sold)
    assert isinstance(sale, Sale) and sale.price_visibility == "hidden"
    [listing] = MARKET.normalize(_raw(found_active[0].model_dump()["payload"]))
    assert isinstance(listing, Listing) and listing.external_id == active.item_id
    assert (_cents(listing.price.amount), listing.price.currency) == (
        active.price,
        active.currency,
    )
    assert listing.seller == active.seller

    async def missing(ctx: CrawlContext) -> list[RawRecordInput]:
        return await MARKET.lookup("http://market.fake.test/itm/999999999999", ctx)

    with pytest.raises(PermanentFetchError) as caught:
        _with_ctx(settings, MARKET, missing)
    assert caught.value.status == 404


def _item(title: str, **specifics: str) -> dict[str, Any]:
    return {
        "url": "http://market.fake.test/itm/1",
        "listing": {
            "itemId": "1",
            "title": title,
            "status": "SOLD",
            "format": "FIXED_PRICE",
            "price": {"value": "10.00", "currency": "USD"},
            "soldPrice": {"value": "10.00", "currency": "USD"},
            "soldDate": "2026-04-01T10:00:00-07:00",
            "itemSpecifics": specifics,
        },
    }


PSA = {"Professional Grader": "Professional Sports Authenticator (PSA)"}


@pytest.mark.parametrize(
    ("title", "specifics", "cert"),
    [
        ("2018 Prizm Luka Doncic #280 PSA 10 GEM MINT #12345678", {}, "12345678"),
        ("Charizard 4/102 BGS 9.5 0012345678", {}, "0012345678"),
        ("1881-S Morgan $1 NGC MS65 1234567-001", {}, "1234567-001"),
        ("Spawn #1 CGC 9.8 Cert# 4218174033", {}, "4218174033"),
        ("Spawn #1 cert#4218174033", {}, "4218174033"),
        ("Luka Doncic #280 Raw NOT PSA 12345678", {}, None),
        ("Luka Doncic #280 PSA 10? 12345678", {}, None),
        ("Luka Doncic #280 PSA 10 comp 12345678", {}, None),
        ("Luka Doncic #280 PSA 10 crossed from BGS 9.5 0012345678", {}, None),
        ("Luka Doncic #280 1234567890 NM", {}, None),  # bare number: ambiguous, stays out
        ("PSA 10 Luka Doncic 2018 Panini Prizm Silver 12345678", {}, None),  # 6 tokens away
        ("Luka Doncic PSA 10 #'d 23/99 same as 125458985485", {}, None),  # serial, item id
        ("Luka Doncic PSA 10 GEM MINT", {**PSA, "Certification Number": "12345678"}, "12345678"),
        ("Luka Doncic BGS 9.5", {**PSA, "Certification Number": "12345678"}, None),
        ("Luka Doncic PSA 10 #87654321", {**PSA, "Certification Number": "12345678"}, None),
    ],
)
def test_market_certs_are_attributed_only_per_domain_rules(
    title: str, specifics: dict[str, str], cert: str | None
) -> None:
    [sale] = MARKET.normalize(_raw(_item(title, **specifics)))
    assert isinstance(sale, Sale)
    assert sale.identifiers.cert_number == cert
    assert ("cert_conflict" in sale.flags) == ("87654321" in title)


def test_the_item_s_lot_size_makes_a_lot_the_title_does_not_name() -> None:
    payload = _item("1999 Pokemon Jungle Flareon 3/64 Holo NM")
    [single] = MARKET.normalize(_raw(payload))
    payload["listing"]["lotSize"] = 3
    [lot] = MARKET.normalize(_raw(payload))
    assert isinstance(single, Sale) and isinstance(lot, Sale)
    assert (single.is_lot, lot.is_lot, lot.flags) == (False, True, ("lot",))


def test_market_normalize_fails_closed_without_next_data() -> None:
    with pytest.raises(ParseError) as caught:
        MARKET.normalize(_raw({"url": "http://market.fake.test/itm/1", "listing": None}))
    assert caught.value.reason.value == "missing_field"


# --- grader.fake.test ---------------------------------------------------------------------------


def _cert_of(record: RawRecordInput) -> dict[str, Any]:
    payload: Any = record.payload
    assert isinstance(payload, dict) and payload["IsValidRequest"] is True
    cert: dict[str, Any] = payload["Cert"]
    return cert


def test_grader_lookup_returns_the_cert_record_for_known_certs(settings: Settings) -> None:
    certs = list(cert_numbers(7))
    sample = [*certs[::97], next(c for c in certs if "-" in c)]

    async def look(ctx: CrawlContext) -> list[list[RawRecordInput]]:
        found = [await GRADER.lookup(f"https://grader.fake.test/cert/{c}", ctx) for c in sample]
        found.append(await GRADER.lookup(sample[0], ctx))  # a bare cert number
        found.append(await GRADER.lookup("http://market.fake.test/cert/1", ctx))
        return found

    *found, bare, elsewhere = _with_ctx(settings, GRADER, look)
    assert elsewhere == [] and bare[0].payload == found[0][0].payload
    for cert, records in zip(sample, found, strict=True):
        [record] = records
        truth = POPS.lookup(cert)
        assert truth is not None
        assert _cert_of(record)["CertNumber"] == cert
        assert _cert_of(record)["SpecID"] == truth.spec_id
        assert _cert_of(record)["Grade"] == truth.copy.grade.grade
        assert GRADER.normalize(_raw(record.model_dump()["payload"], record.url)) == []

    async def unknown(ctx: CrawlContext) -> list[RawRecordInput]:
        return await GRADER.lookup("http://grader.fake.test/cert/11111111", ctx)

    assert POPS.lookup("11111111") is None
    with pytest.raises(PermanentFetchError) as caught:
        _with_ctx(settings, GRADER, unknown)
    assert caught.value.status == 404


def _truth_counts(spec: int) -> dict[str, int]:
    counts = dict(POPS.pops[spec].counts)
    return {k.removesuffix(".0"): v for k, v in counts.items()}


def test_a_grader_crawl_stores_pop_reports_equal_to_the_registry_s(
    sqlite_engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    specs = WATCHED
    summary, raws = _crawl(GRADER, sqlite_engine, settings, tmp_path)
    assert (summary.status, summary.records, summary.dupes) == ("succeeded", len(specs), 0)
    reports = [record for raw in raws for record in GRADER.normalize(raw)]
    assert sorted(int(r.external_id) for r in reports) == sorted(specs) and len(specs) >= 20
    assert {r.grader for r in reports if isinstance(r, PopulationReport)} >= {"PSA", "CGC", "NGC"}
    for report in reports:
        assert isinstance(report, PopulationReport)
        truth = POPS.pops[int(report.external_id)]
        assert report.counts == _truth_counts(truth.spec_id) and report.total == truth.total
        assert report.grader == truth.grader and report.title == truth.item.title
        assert report.as_of <= datetime.now(UTC)
    again, _ = _crawl(GRADER, sqlite_engine, settings, tmp_path)
    assert (again.records, again.dupes) == (0, len(specs))
    assert connector_cursor(sqlite_engine, "grading-registry") == {"next": 0, "sweeps": 2}


def test_a_cert_s_spec_leads_to_its_pop_report_by_lookup(settings: Settings) -> None:
    certificate = next(
        c for c in map(POPS.lookup, cert_numbers(7)) if c and c.spec_id not in WATCHED
    )

    async def look(ctx: CrawlContext) -> list[RawRecordInput]:
        url = f"http://grader.fake.test/cert/{certificate.cert}"
        [record] = await GRADER.lookup(url, ctx)
        spec = _cert_of(record)["SpecID"]
        return await GRADER.lookup(f"http://grader.fake.test/pop/{spec}", ctx)

    [pop] = _with_ctx(settings, GRADER, look)
    [report] = GRADER.normalize(_raw(pop.model_dump()["payload"], pop.url))
    assert isinstance(report, PopulationReport)
    assert report.external_id == str(certificate.spec_id)
    assert report.counts == _truth_counts(certificate.spec_id)
    grade = certificate.copy.grade.grade.rstrip("+").removesuffix(".0")
    assert report.counts[grade] >= 1  # the slab itself is counted


def test_both_health_checks_make_one_light_fetch(settings: Settings) -> None:
    for connector in (MARKET, GRADER):
        health = _with_ctx(settings, connector, connector.health_check)
        assert health.status == "UP", (connector.meta.id, health.message)

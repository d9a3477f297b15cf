"""The auction-house and hobby-news code connectors against the fake web over real sockets: a full
auction crawl gives one raw record per lot page and per prices-realised PDF, and normalizes to
the ground truth's hammer / premium / realised kept apart; broken JSON-LD stays visible; news
items equal the feed's stories; undated feed entries are kept and fail with a reason; re-runs
are all dupes; cursors resume where they stopped."""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
from collections.abc import Awaitable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine

from rareindex.check import as_raw, check_connector
from rareindex.crawl import RunSummary, run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex_connectors import Connector, CrawlContext, CrawlOptions, FetchResult
from rareindex_connectors.errors import ParseError
from rareindex_connectors.records import AuctionLot, NewsItem, RawRecord, RawRecordInput
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.auction_data import auction_data
from rareindex_fakeweb.sites.news import articles

REGISTRY = load_registry(REPO_ROOT / "connectors")
AUCTION = REGISTRY.get("auction-house")
NEWS = REGISTRY.get("hobby-news")
TIMEOUT_S = 120
SITEMAPS = "http://auction.fake.test/sitemaps"
LOTS = "http://auction.fake.test/lots"
T = TypeVar("T")


def _run(coro: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, TIMEOUT_S)

    return asyncio.run(bounded())


@pytest.fixture(scope="module")
def local_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    # The shipped defaults allow 60 requests a minute per host (a full auction sweep is ~180
    # requests, three minutes); this test-only policy lifts that budget for the fake web.
    policy = tmp_path_factory.mktemp("policy")
    shutil.copytree(REPO_ROOT / "connectors" / "domains.d", policy / "domains.d")
    domains = json.loads((REPO_ROOT / "connectors" / "domains.json").read_text())
    domains["defaults"]["budget_per_minute"] = 100_000
    (policy / "domains.json").write_text(json.dumps(domains))
    with serve_asgi(FakeWeb().app) as base:
        port = urlsplit(base).port
        yield Settings(
            _env_file=None,  # type: ignore[call-arg]
            connectors_dir=policy,
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )


def _crawl(connector: Connector, db: Engine, settings: Settings, blobs: Path) -> RunSummary:
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])

    async def go() -> RunSummary:
        stack = build_fetch_stack(settings)
        try:
            return await run_connector(
                connector, db=db, stack=stack, store=RawRecordStore(BlobStore(blobs))
            )
        finally:
            await stack.aclose()

    return _run(go())


def _stored(db: Engine, connector: Connector, blobs: Path) -> list[RawRecord]:
    with db.connect() as conn:
        store = RawRecordStore(BlobStore(blobs))
        return list(store.iter_connector(conn, connector.meta.id, with_snapshot=True))


def _yielded(
    connector: Connector,
    settings: Settings,
    *,
    cursor: dict[str, Any] | None = None,
    options: CrawlOptions | None = None,
) -> tuple[list[RawRecordInput], dict[str, Any] | None]:
    """What ``crawl()`` yields on a bare context, and the cursor it leaves."""

    async def go() -> tuple[list[RawRecordInput], dict[str, Any] | None]:
        stack = build_fetch_stack(settings)
        fetch = stack.router.fetcher(connector.meta.engines)
        ctx = CrawlContext(connector.meta.id, fetch, options or CrawlOptions(), cursor)
        try:
            return [record async for record in connector.crawl(ctx)], ctx.cursor
        finally:
            await stack.aclose()

    return _run(go())


def _cents(value: int | None) -> Decimal | None:
    return None if value is None else Decimal(value) / 100


def test_check_shows_one_page_of_auction_lots(local_settings: Settings) -> None:
    report = _run(check_connector(AUCTION, local_settings))
    assert report.ok and not report.failures
    assert len(report.raws) == 25 and report.kinds() == {"auction_lot": 25}
    truth = {str(lot.number): lot for lot in auction_data(7).sales[0].lots}
    for lot in report.normalized:
        assert isinstance(lot, AuctionLot) and lot.auction_id == "7041"
        assert lot.price_realised is not None and lot.hammer_price is None
        assert lot.price_realised.amount == _cents(truth[lot.lot_number].realised)


def test_a_full_auction_crawl_matches_the_ground_truth(
    sqlite_engine: Engine, local_settings: Settings, tmp_path: Path
) -> None:
    truth = auction_data(7)
    summary = _crawl(AUCTION, sqlite_engine, local_settings, tmp_path)
    lots = truth.lots()
    assert (summary.status, summary.records, summary.dupes) == ("succeeded", len(lots) + 3, 0)
    raws = _stored(sqlite_engine, AUCTION, tmp_path)
    expected = {f"lot:{lot.sale_id}:{lot.number}" for lot in lots}
    expected |= {f"sale:{s.sale_id}:prices-realised" for s in truth.sales}
    assert sorted(r.external_id for r in raws) == sorted(expected)
    assert all(r.snapshot for r in raws)  # the HTML or the PDF, kept for re-parsing
    from_pages: dict[str, AuctionLot] = {}
    from_pdfs: dict[str, AuctionLot] = {}
    for raw in raws:
        target = from_pdfs if raw.external_id.startswith("sale:") else from_pages
        for record in AUCTION.normalize(raw):
            assert isinstance(record, AuctionLot) and record.external_id not in target
            target[record.external_id] = record
    assert len(from_pages) == len(from_pdfs) == len(lots)
    for sale in truth.sales:
        for lot in sale.lots:
            key = f"{sale.sale_id}:{lot.number}"
            pdf, page = from_pdfs[key], from_pages[key]
            assert pdf.status == page.status == ("sold" if lot.sold else "passed")
            assert pdf.title == page.title == lot.title  # the sale page's, not the PDF's wraps
            assert pdf.auction_title == sale.title
            for got in (pdf.hammer_price, pdf.price_realised, page.price_realised):
                assert got is None or got.currency == sale.currency
            assert (pdf.hammer_price and pdf.hammer_price.amount) == _cents(lot.hammer)
            assert (pdf.price_realised and pdf.price_realised.amount) == _cents(lot.realised)
            assert (page.price_realised and page.price_realised.amount) == _cents(lot.realised)
            assert page.hammer_price is None  # the page states only the price realised
            if lot.sold:
                assert pdf.buyer_premium_rate == Decimal(sale.premium_pct) / 100
                premium = pdf.hammer_price.amount * pdf.buyer_premium_rate  # type: ignore[union-attr]
                assert premium == _cents(lot.premium)
                assert page.closes_at == sale.closed or lot.is_group
    group = next(lot for lot in lots if lot.is_group)
    assert from_pages[f"{group.sale_id}:{group.number}"].grading is None  # three slabs, no grade
    broken = [lot for lot in lots if lot.broken_jsonld]
    assert len(broken) == 3
    for lot in broken:  # trailing-comma JSON-LD: stored, repaired by the adapter, read in full
        raw = next(r for r in raws if r.external_id == f"lot:{lot.sale_id}:{lot.number}")
        assert isinstance(raw.payload, dict) and raw.payload["rejected"] == []
        assert b",}}</script>" in (raw.snapshot or b"")
    again = _crawl(AUCTION, sqlite_engine, local_settings, tmp_path)  # no page is due yet
    assert (again.status, again.records, again.skipped) == ("succeeded", 0, len(lots) + 3)


def test_auction_cursors_resume_and_since_filters(local_settings: Settings) -> None:
    truth = auction_data(7)
    first, cursor = _yielded(AUCTION, local_settings, options=CrawlOptions(max_pages=1))
    assert [r.external_id for r in first] == [f"lot:7041:{n}" for n in range(1, 51)]
    assert cursor == {"sitemap": f"{SITEMAPS}/lots-2.xml.gz", "after": None, "sweeps": 0}
    mid = {"sitemap": f"{SITEMAPS}/lots-1.xml.gz", "after": f"{LOTS}/7041/47", "sweeps": 0}
    resumed, _ = _yielded(AUCTION, local_settings, cursor=mid, options=CrawlOptions(max_pages=1))
    assert [r.external_id for r in resumed] == ["lot:7041:48", "lot:7041:49", "lot:7041:50"]
    since = datetime(2026, 4, 12, tzinfo=UTC)
    recent, cursor = _yielded(AUCTION, local_settings, options=CrawlOptions(since=since))
    want = {f"lot:{lot.sale_id}:{lot.number}" for lot in truth.lots() if lot.lastmod >= since}
    assert want and {r.external_id for r in recent} == want  # no sale closed after `since`
    assert cursor == {"sweeps": 1}


def _bare_ctx(pages: dict[str, bytes]) -> CrawlContext:
    async def fetch(url: str, **_: object) -> FetchResult:
        return FetchResult(url=url, status=200, content=pages[urlsplit(url).path], engine="api")

    return CrawlContext(connector_id="test", fetch=fetch)


def test_unreadable_json_ld_is_kept_and_fails_closed(local_settings: Settings) -> None:
    [good] = _yielded(AUCTION, local_settings, options=CrawlOptions(max_pages=1))[0][21:22]
    assert good.external_id == "lot:7041:22" and good.snapshot is not None
    broken = good.snapshot.replace(b",}}</script>", b",}</script>")  # unbalanced: no repair
    ctx = _bare_ctx({"/robots.txt": b"User-agent: *\nDisallow: /admin/\n", "/lots/7041/22": broken})
    [raw] = _run(AUCTION.lookup("http://auction.fake.test/lots/7041/22", ctx))
    assert raw.snapshot == broken and raw.payload["rejected"]  # type: ignore[index,call-overload]
    with pytest.raises(ParseError) as caught:
        AUCTION.normalize(as_raw(AUCTION, raw, 0))
    assert (caught.value.reason.value, caught.value.field) == ("invalid_json", "ld+json")
    assert _run(AUCTION.lookup("http://auction.fake.test/sales/7041", ctx)) == []


def test_health_checks_are_up(local_settings: Settings) -> None:
    async def go(connector: Connector) -> str:
        stack = build_fetch_stack(local_settings)
        ctx = CrawlContext(connector.meta.id, stack.router.fetcher(connector.meta.engines))
        try:
            return (await connector.health_check(ctx)).status
        finally:
            await stack.aclose()

    assert _run(go(AUCTION)) == _run(go(NEWS)) == "UP"


def _plain(summary_html: str) -> str:
    return "".join(html.unescape(re.sub(r"<[^>]+>", " ", summary_html)).split())


def test_a_news_crawl_gives_the_feed_s_stories_and_a_rerun_is_all_dupes(
    sqlite_engine: Engine, local_settings: Settings, tmp_path: Path
) -> None:
    stories = articles(7)
    summary = _crawl(NEWS, sqlite_engine, local_settings, tmp_path)
    assert (summary.status, summary.records, summary.dupes) == ("succeeded", len(stories), 0)
    items = [i for raw in _stored(sqlite_engine, NEWS, tmp_path) for i in NEWS.normalize(raw)]
    by_url = {item.url: item for item in items if isinstance(item, NewsItem)}
    assert len(by_url) == len(stories) == 30
    for story in stories:
        item = by_url[f"http://news.fake.test{story.path}"]
        assert (item.title, item.author, item.categories) == (
            story.title,
            story.author,
            (story.category,),
        )
        assert item.published_at == story.published and item.external_id == item.url
        assert "".join((item.summary or "").split()) == _plain(story.summary_html)
    again = _crawl(NEWS, sqlite_engine, local_settings, tmp_path)
    assert (again.records, again.dupes) == (0, len(stories))
    report = _run(check_connector(NEWS, local_settings))
    assert report.ok and len(report.raws) == 25 and not report.failures


def test_undated_feed_entries_are_kept_and_fail_with_a_reason() -> None:
    feed = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>W</title>'
        b"<item><title>Dated</title><link>http://news.fake.test/a</link><guid>a-1</guid>"
        b"<pubDate>Tue, 10 Jun 2025 04:00:00 GMT</pubDate></item>"
        b"<item><title>Undated</title><link>http://news.fake.test/b</link><guid>b-2</guid>"
        b"</item></channel></rss>"
    )
    ctx = _bare_ctx({"/feed.rss": feed})

    async def go() -> list[RawRecordInput]:
        return [record async for record in NEWS.crawl(ctx)]

    dated, undated = _run(go())
    assert (dated.external_id, undated.external_id) == ("a-1", "b-2")
    [item] = NEWS.normalize(as_raw(NEWS, dated, 0))
    assert isinstance(item, NewsItem) and item.published_at == datetime(2025, 6, 10, 4, tzinfo=UTC)
    with pytest.raises(ParseError) as caught:
        NEWS.normalize(as_raw(NEWS, undated, 1))
    assert (caught.value.reason.value, caught.value.field) == ("missing_field", "published")
    assert ctx.cursor == {"sweeps": 1}
    assert _run(NEWS.lookup("http://news.fake.test/articles/x", ctx)) == []

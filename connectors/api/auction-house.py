"""``auction-house``: Fake Auctions (``auction.fake.test``), lot pages and prices-realised PDFs.

Crawl: ``/robots.txt`` (``Disallow`` obeyed; ``Crawl-delay`` is the gates' business) -> its
``Sitemap:`` (gzipped index) -> urlsets, entries kept when ``lastmod >= options.since``. A lot
page ``/lots/<sale>/<n>`` gives one raw record (payload: URL, JSON-LD products, Open Graph,
rejected blocks; snapshot: the HTML). A sale ``/sales/<sale>`` gives one raw record for its
``prices-realised.pdf`` (snapshot: the PDF; payload: sale id, title, premium rate, currency read
from a lot page's ``priceCurrency`` because the PDF's ``$`` is ambiguous, and the sale page's lot
titles because the PDF wraps long titles across table rows and drops accents).

Normalize: a lot page -> one :class:`AuctionLot`, ``price_realised`` = the JSON-LD offer price
(this house states the price realised there; a group lot's ``AggregateOffer`` shares are summed),
no hammer. A PDF -> every lot with hammer, premium and realised kept apart (authoritative). Both
use ``external_id = "<sale>:<lot>"``. Fail closed: JSON-LD unreadable even after the adapter's
repairs raises ``ParseError(field="ld+json")`` instead of falling back to Open Graph, which cannot
tell a passed lot (the snapshot is kept; the PDF still has the lot); a PDF with any rejected row
raises too (a misread column misprices the rows after it).

Revisits: in an incremental run a lot page or a sale's PDF that the budget store says is not due
(:meth:`CrawlContext.should_fetch`) is skipped and counted; a due one is fetched conditionally
(``If-None-Match`` / ``If-Modified-Since`` when the host gave validators), and a 304 yields
nothing. Backfills and lookups fetch in full.

Cursor ``{"sitemap": <urlset URL>, "after": <last lot URL>, "sweeps": n}``, set every 25 lots and
at each urlset's end: locations, not positions, so a grown sitemap re-fetches rather than skips.
A finished sweep leaves ``{"sweeps": n + 1}``; ``options.max_pages`` counts urlsets.

Usage: ``rareindex connectors check auction-house --fake-web``
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from rareindex_adapters import (
    Sitemap,
    extract_structured,
    filter_since,
    lift_grading,
    listings_from_products,
    parse_prices_realised,
    parse_sitemap,
    rows_to_auction_lots,
)
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext, FetchResult
from rareindex_connectors.errors import FetchError, ParseError, ParseReason, PermanentFetchError
from rareindex_connectors.records import (
    AuctionLot,
    Money,
    NormalizedRecord,
    RawRecord,
    RawRecordInput,
    parse_normalized,
)
from rareindex_connectors.runtime import RobotsRules

ORIGIN = "http://auction.fake.test"
LOT = re.compile(r"^/lots/([^/]+)/(\d+)/?$")
SALE = re.compile(r"^/sales/([^/]+)/?$")
BATCH = 25
_STATUS = {"SoldOut": "sold", "OutOfStock": "passed", "Discontinued": "withdrawn", "": None}
_H1 = re.compile(r"<h1[^>]*>(.*?)</h1>", re.S)
_RATE = re.compile(r"Buyer(?:'|&#x27;|&#39;|’)s premium (\d+(?:\.\d+)?)\s*%")
_LINK = re.compile(r"""<a href=["']([^"']*/lots/[^"']+)["'][^>]*>(.*?)</a>""", re.S)
_TAG = re.compile(r"<[^>]+>")


def _text(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def _offers(value: Any) -> list[dict[str, Any]]:
    """A product's offers, an ``AggregateOffer``'s listed offers in its place."""
    found: list[dict[str, Any]] = []
    for offer in value if isinstance(value, list) else [value]:
        if isinstance(offer, dict):
            found.extend(_offers(offer["offers"]) if offer.get("offers") else [offer])
    return found


def _aware(value: Any) -> datetime | None:
    """``validFrom`` (the close, on this site) when it is an ISO datetime with an offset."""
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return parsed if parsed is not None and parsed.tzinfo is not None else None


def _raw(external_id: str, url: str, payload: Any, result: FetchResult) -> RawRecordInput:
    """A capture with the response's bytes as its snapshot (HTML or PDF)."""
    return RawRecordInput(
        external_id=external_id,
        url=url,
        payload=payload,
        snapshot=result.content,
        engine=result.engine,
        http_status=result.status,
    )


def _grading(title: str) -> dict[str, Any]:
    """The grade and raw condition a lot's title states."""
    facts = lift_grading(title)
    return {"grading": facts.grading, "condition": facts.condition}


def _graded(record: dict[str, Any]) -> AuctionLot:
    lot = parse_normalized({**record, **_grading(record["title"])})
    if not isinstance(lot, AuctionLot):  # pragma: no cover - the caller fixes the kind
        raise TypeError(type(lot).__name__)
    return lot


def _page_lot(payload: dict[str, Any]) -> AuctionLot:
    """A lot page's payload as one lot (sold/passed from ``availability``, price realised)."""
    if rejected := payload.get("rejected"):
        where = f"{rejected[0]['where']}: " if rejected[0].get("where") else ""
        reason, message = ParseReason(rejected[0]["reason"]), where + rejected[0]["message"]
        raise ParseError(reason, message, field="ld+json")
    products, url = payload.get("products") or [], str(payload["url"])
    if len(products) != 1 or payload.get("source") != "json-ld":
        message = f"{len(products)} products from {payload.get('source')}, want 1 from JSON-LD"
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, message, field="products")
    offers = _offers(products[0].get("offers"))
    kinds = {str(o.get("availability") or "").rsplit("/", 1)[-1] for o in offers}
    statuses = {_STATUS.get(kind, "?") for kind in kinds} - {None}
    priced = any(o.get("price") not in (None, "") for o in offers)
    status = statuses.pop() if len(statuses) == 1 else "sold" if priced and not statuses else "?"
    if status == "?" or (status == "sold") != priced:
        message = f"availability {sorted(kinds)} with{'' if priced else 'out'} a price"
        raise ParseError(ParseReason.INVALID_VALUE, message, field="offers")
    realised = None
    if status == "sold":  # one offer, or one per slab of a group lot: the lot's price is the sum
        prices = [item.price for item in listings_from_products(products, url=url)]
        if len({p.currency for p in prices}) != 1:
            raise ParseError(ParseReason.CURRENCY_MISMATCH, "offers in several currencies")
        realised = Money(amount=sum(p.amount for p in prices), currency=prices[0].currency)
    images = products[0].get("image") or []
    sale_id, number = str(payload["sale_id"]), str(payload["lot_number"])
    return _graded(
        {
            "kind": "auction_lot",
            "external_id": f"{sale_id}:{number}",
            "title": " ".join(str(products[0].get("name") or f"Lot {number}").split()),
            "url": url,
            "auction_id": sale_id,
            "lot_number": number,
            "status": status,
            "price_realised": realised,
            "closes_at": _aware(offers[0].get("validFrom")),
            "image_urls": [i for i in (images if isinstance(images, list) else [images]) if i],
        }
    )


class AuctionHouseConnector:
    """Fake Auctions: sitemaps -> lot pages and prices-realised PDFs -> auction lots."""

    meta = ConnectorMeta(
        id="auction-house",
        source="Fake Auctions",
        engines=("api",),
        categories=("sports_card", "tcg_card", "comic", "coin"),
        capabilities=("auction_lot", "historical_backfill", "url_lookup"),
        url_patterns=(r"^https?://auction\.fake\.test/lots/[^/]+/\d+/?$",),
    )
    version = "1"
    parser_version = "1"

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        cursor, since = dict(ctx.cursor or {}), ctx.options.since
        sweeps, budget = int(str(cursor.get("sweeps", 0))), ctx.options.max_pages
        rules = await self._robots(ctx)
        top_url = rules.sitemaps[0] if rules.sitemaps else f"{ORIGIN}/sitemap_index.xml.gz"
        top = await self._sitemap(ctx, top_url)
        locs = [r.loc for r in top.sitemaps] or [top_url]
        fresh = {r.loc for r in filter_since(top.sitemaps, since)} if since else set(locs)
        start = locs.index(str(cursor["sitemap"])) if cursor.get("sitemap") in locs else 0
        for i in range(start, len(locs)):
            if budget is not None and i - start >= budget:
                return  # the cursor already points at locs[i]
            urls = []
            if locs[i] in fresh or top.kind == "urlset":
                urlset = top if top.kind == "urlset" else await self._sitemap(ctx, locs[i])
                if urlset.kind == "index":  # an index inside the index: not followed, but said
                    ctx.log.warning("sitemap.nested_index_skipped", url=locs[i])
                urls = filter_since(urlset.urls, since) if since else list(urlset.urls)
            if i == start and cursor.get("after") in (done := [u.loc for u in urls]):
                urls = urls[done.index(str(cursor["after"])) + 1 :]
            for count, entry in enumerate(urls, start=1):
                if (record := await self._capture(ctx, entry.loc, rules)) is not None:
                    yield record
                if count % BATCH == 0 and count < len(urls):
                    ctx.set_cursor({"sitemap": locs[i], "after": entry.loc, "sweeps": sweeps})
            more = {"sitemap": locs[i + 1], "after": None} if i + 1 < len(locs) else {}
            ctx.set_cursor({**more, "sweeps": sweeps if more else sweeps + 1})
            ctx.progress(pages=1, items=len(urls), total_pages=len(locs))

    async def _robots(self, ctx: CrawlContext) -> RobotsRules:
        return await ctx.robots(ORIGIN)  # the router's cached copy: its sitemaps, its rules

    async def _sitemap(self, ctx: CrawlContext, url: str) -> Sitemap:
        sitemap = parse_sitemap((await ctx.fetch(url, expect="binary")).content)
        for rejected in sitemap.rejected:  # an unusable entry is logged, never silently lost
            ctx.log.warning("sitemap.entry_rejected", url=url, reason=str(rejected.reason))
        return sitemap

    async def _capture(
        self, ctx: CrawlContext, url: str, rules: RobotsRules
    ) -> RawRecordInput | None:
        path = urlsplit(url).path
        revisit = ctx.options.mode == "incremental"
        try:
            if not rules.can_fetch(url):
                ctx.log.info("robots.disallowed", url=url)
            elif LOT.match(path):
                if not revisit or ctx.should_fetch(url):
                    return await self._lot_page(ctx, url, conditional=revisit)
            elif sale := SALE.match(path):
                pdf = f"{url.rstrip('/')}/prices-realised.pdf"
                if not revisit or ctx.should_fetch(pdf):
                    return await self._prices_realised(
                        ctx, url.rstrip("/"), sale.group(1), rules, conditional=revisit
                    )
            else:
                ctx.log.info("sitemap.url_skipped", url=url)  # neither a lot nor a sale
        except PermanentFetchError as exc:  # gone since the sitemap was written
            ctx.log.warning("fetch.failed", url=url, status=exc.status, error=str(exc))
        return None

    async def _lot_page(
        self, ctx: CrawlContext, url: str, *, conditional: bool = False
    ) -> RawRecordInput | None:
        if (match := LOT.match(urlsplit(url).path)) is None:
            raise ValueError(f"{url} is not a lot page")
        sale_id, number = match.groups()
        result = await ctx.fetch(url, expect="text", conditional=conditional)
        if result.not_modified:
            return None  # as it was when last stored
        payload: dict[str, Any] = {"kind": "lot_page", "url": url, "sale_id": sale_id}
        payload["lot_number"] = number
        try:
            data = extract_structured(result.content, base_url=url)
        except ParseError as exc:  # too large: kept, and normalize() says why
            payload["rejected"] = [{"reason": exc.reason.value, "message": str(exc)}]
        else:
            payload |= {
                "source": data.source,
                "products": json.loads(json.dumps(data.products, default=str)),
                "opengraph": data.opengraph,
                "rejected": [
                    {"reason": r.reason.value, "message": r.message, "where": r.where}
                    for r in data.rejected
                ],
            }
        return _raw(f"lot:{sale_id}:{number}", url, payload, result)

    async def _prices_realised(
        self,
        ctx: CrawlContext,
        url: str,
        sale_id: str,
        rules: RobotsRules,
        *,
        conditional: bool = False,
    ) -> RawRecordInput | None:
        page = (await ctx.fetch(url, expect="text")).text
        heading = _text(m.group(1)) if (m := _H1.search(page)) else ""
        rate = _RATE.search(page)
        titles = {
            lot.group(2): _text(title)
            for href, title in _LINK.findall(page)
            if (lot := LOT.match(urlsplit(href).path)) and lot.group(1) == sale_id
        }
        currency = None
        if titles:
            first = await ctx.fetch(f"{ORIGIN}/lots/{sale_id}/{min(titles, key=int)}")
            data = extract_structured(first.content)
            offers = _offers([p.get("offers") for p in data.products])
            found = (o["priceCurrency"] for o in offers if o.get("priceCurrency"))
            currency = next(found, data.opengraph.get("product:price:currency"))
        pdf_url = f"{url}/prices-realised.pdf"
        if not rules.can_fetch(pdf_url):
            ctx.log.info("robots.disallowed", url=pdf_url)
            return None
        payload: dict[str, Any] = {"kind": "prices_realised", "sale_id": sale_id}
        payload |= {
            "sale_url": url,
            "title": re.sub(rf"^Sale {re.escape(sale_id)}:\s*", "", heading) or None,
            "currency": currency,
            "premium_rate": str(Decimal(rate.group(1)) / 100) if rate else None,
            "titles": titles,
        }
        result = await ctx.fetch(pdf_url, expect="binary", conditional=conditional)
        if result.not_modified:
            return None
        return _raw(f"sale:{sale_id}:prices-realised", pdf_url, payload, result)

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        payload: dict[str, Any] = raw.payload if isinstance(raw.payload, dict) else {}
        if payload.get("kind") == "lot_page":
            return [_page_lot(payload)]
        if payload.get("kind") != "prices_realised":
            raise ParseError(ParseReason.UNEXPECTED_SHAPE, "neither a lot page nor a PDF")
        if raw.snapshot is None:
            raise ParseError(ParseReason.EMPTY_PAYLOAD, "the PDF snapshot was not loaded")
        try:
            table = parse_prices_realised(raw.snapshot, currency=payload.get("currency"))
        except ValueError as exc:  # the lot page's priceCurrency is not ISO-4217
            raise ParseError(ParseReason.UNKNOWN_CURRENCY, str(exc), field="currency") from None
        if table.rejected:
            raise table.rejected[0].to_error()
        titles, rate = payload.get("titles") or {}, payload.get("premium_rate")
        lots = rows_to_auction_lots(
            [replace(row, title=titles.get(row.lot_number) or row.title) for row in table.rows],
            auction_id=str(payload["sale_id"]),
            auction_title=payload.get("title"),
            buyer_premium_rate=Decimal(rate) if rate else None,
            title_fields=_grading,  # validated with the lot, not dumped and validated again
        )
        return list(lots)

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        try:
            result = await ctx.fetch(f"{ORIGIN}/robots.txt", expect="text")
        except FetchError as exc:
            return ConnectorHealth(status="BROKEN", message=f"{type(exc).__name__}: {exc}"[:300])
        found = bool(RobotsRules.parse(result.content).sitemaps)
        message = None if found else "robots.txt names no sitemap"
        status = "UP" if found else "DEGRADED"
        return ConnectorHealth(status=status, latency_ms=result.elapsed_ms, message=message)

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        if not self.meta.matches_url(url) or not (await self._robots(ctx)).can_fetch(url):
            return []
        record = await self._lot_page(ctx, f"{ORIGIN}{urlsplit(url).path}")
        return [record] if record is not None else []


connector = AuctionHouseConnector()

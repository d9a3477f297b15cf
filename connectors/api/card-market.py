"""``card-market``: Market (``market.fake.test``), sold search results and their item pages.

Crawl: ``/search?q=&sold=1&page=N`` (50 results a page, latest sale first; the ghost result has no
listing id; ``a.pagination__next`` with an ``href`` means more), then each ``/itm/<id>``: one raw
record per item, payload ``{"url": <item page>, "listing": <__NEXT_DATA__ pageProps.listing>}``.
A page without readable ``__NEXT_DATA__`` (not UTF-8, broken JSON) is kept with ``listing: null``
and its HTML as snapshot, so ``normalize()`` fails closed on it; a page over the size limit is kept
the same way without a snapshot; an item gone (404) since the search is logged and skipped.

Normalize: sold -> :class:`Sale`, active (via ``lookup()``) -> :class:`Listing`. A best offer shows
only the struck list price: ``sale_type="best_offer"``, ``price_basis="offer_accepted"``,
``price_visibility="hidden"``, ``price`` = the list price (an upper bound;
docs/domain.md#observations-and-prices). Grade, condition and flags come from the title
(``lift_grading``: ``NOT PSA``, ``PSA 10?``, ``comp`` give no grade); ``is_lot`` from the title or
``lotSize``; the category from the item specifics.

``identifiers.cert_number``: from the title by the SDK's rule (``adapters.extract_certs``,
docs/certificates.md#1-attribution-rules, the one the index reads titles with): the one number
attributed to the item's grader or labelled ``Cert#``, when the title does not negate or speculate
on a grade without also stating one (card numbers, serials, years and 12-digit item ids never
match; a bare number stays out). Otherwise the specifics' ``Certification Number`` when they
name the ``Professional Grader`` and it agrees with the title. Title and specifics disagreeing: no
cert, flag ``cert_conflict``.

Cursor: ``{"page": n, "sweeps": s}`` once page ``n - 1``'s items are yielded; a finished sweep
leaves ``{"page": 1, "sweeps": s + 1}`` (new sales land on page 1). ``max_pages`` = search pages.

Usage::

    rareindex connectors check card-market --fake-web
    [raw] = await connector.lookup("http://market.fake.test/itm/256711097386", ctx)
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from html.parser import HTMLParser
from typing import Any

from rareindex_adapters import (
    Extracted,
    PageNumber,
    PageRequest,
    TitleFacts,
    extract_certs,
    lift_grading,
    next_data,
    paginate,
)
from rareindex_connectors import (
    ConnectorHealth,
    ConnectorMeta,
    CrawlContext,
    FetchResult,
    FieldScorer,
)
from rareindex_connectors.errors import (
    ConnectorError,
    ParseError,
    ParseReason,
    PermanentFetchError,
    ResponseTooLarge,
)
from rareindex_connectors.records import (
    NormalizedRecord,
    RawRecord,
    RawRecordInput,
    parse_normalized,
)

ORIGIN = "http://market.fake.test"
SEARCH = f"{ORIGIN}/search"
ITEM = re.compile(r"^https?://market\.fake\.test(?::\d+)?/itm/(\d{6,20})/?(?:[?#].*)?$")
MAX_SEARCH_PAGES = 100
_CATEGORY = {"Player/Athlete": "sports_card", "Character": "tcg_card"}
_CATEGORY |= {"Series Title": "comic", "Denomination": "coin"}
_GRADER_NAMED = re.compile(r"\((\w+)\)\s*$")  # "Professional Sports Authenticator (PSA)"


class _Results(HTMLParser):
    """Listing ids (``li[data-listingid]``) and whether ``a.pagination__next`` links on."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.more = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        listing_id = attr.get("data-listingid") or ""
        if tag == "li" and listing_id.isdigit():
            self.ids.append(listing_id)
        elif tag == "a" and "pagination__next" in (attr.get("class") or "").split():
            self.more = self.more or bool(attr.get("href"))


def _results(result: FetchResult) -> Extracted:
    parser = _Results()
    parser.feed(result.text)
    parser.close()
    return Extracted(items=list(dict.fromkeys(parser.ids)), has_more=parser.more)


def _title_cert(title: str, facts: TitleFacts) -> str | None:
    """The cert the rules of docs/certificates.md#1-attribution-rules (:func:`extract_certs`)
    attribute to this item's grader in ``title``, or None: a number labelled ``Cert#`` counts
    whoever's it is; a number attributed to another grader ("crossed from BGS 9.5 …") does not."""
    grader = facts.grading.grader if facts.grading else None
    found = set()
    for m in extract_certs(title):
        ours = m.attribution == "attributed" and (grader is None or m.grader == grader)
        if "lookup_url" not in m.flags and ("cert_label" in m.flags or ours):
            found.add(m.number)
    return found.pop() if len(found) == 1 else None


def _cert(title: str, facts: TitleFacts, specifics: Mapping[str, Any]) -> tuple[str | None, bool]:
    """``(cert, conflict)`` from the title, else from the item specifics (module docstring)."""
    if facts.negated and facts.grading is None:
        return None, False  # "NOT PSA 12345678", "PSA 10? 12345678": not this item's slab
    titled = _title_cert(title, facts)
    grader = _GRADER_NAMED.search(str(specifics.get("Professional Grader") or ""))
    agrees = grader is not None and (facts.grading is None or grader[1] == facts.grading.grader)
    stated = (str(specifics.get("Certification Number") or "") or None) if agrees else None
    if titled and stated and titled.replace("-", "") != stated.replace("-", ""):
        return None, True
    return titled or stated, False


def _page_data(result: FetchResult) -> Any:
    return next_data(result.content)


_ITEM_FIELDS = FieldScorer(
    {
        "props.pageProps.listing.itemId": 1,
        "props.pageProps.listing.title": 2,
        "props.pageProps.listing.status": 1,
        "props.pageProps.listing.price": 2,
    },
    extract=_page_data,
)
"""What normalize() needs from an item page's ``__NEXT_DATA__``: a page without it (a JavaScript
shell, a bot wall) scores 0 and goes to the next engine."""


def _plain(value: Any) -> Any:
    """JSON with the adapter's exact ``Decimal`` numbers turned back into strings."""
    return json.loads(json.dumps(value, default=str))


class CardMarketConnector:
    """Sold results of ``market.fake.test`` as sales; item pages by URL as sales or listings."""

    meta = ConnectorMeta(
        id="card-market",
        source="Market (market.fake.test)",
        engines=("api", "firecrawl", "scrapfly"),  # paid ones only when a page needs rendering
        categories=("sports_card", "tcg_card", "comic", "coin"),
        capabilities=("sale", "listing", "url_lookup"),
        refresh_class="ACTIVE",
        url_patterns=(ITEM.pattern,),
    )
    version = "1"
    parser_version = "1"

    def score(self, result: FetchResult) -> float | None:
        """The share of normalize()'s fields an item page holds; other pages: the router's
        document heuristic."""
        return _ITEM_FIELDS(result) if ITEM.match(result.url) else None

    async def _item(self, ctx: CrawlContext, item_id: str) -> RawRecordInput:
        url = f"{ORIGIN}/itm/{item_id}"
        result = await ctx.fetch(url, expect="text")
        try:
            # The marketplace serves UTF-8: bytes that are not are a broken page, to fail closed
            # (kept, then refused by normalize()), never to read with replacement characters.
            html = result.content.decode("utf-8")
            listing = _obj(next_data(html)["props"]["pageProps"]["listing"]) or None
        except (ParseError, KeyError, TypeError, UnicodeDecodeError):
            listing = None
        return RawRecordInput(
            external_id=item_id,
            url=url,
            payload={"url": url, "listing": _plain(listing)},
            snapshot=None if listing else result.content,
            engine=result.engine,
            http_status=result.status,
        )

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        cursor: dict[str, Any] = dict(ctx.cursor or {})
        sweeps = int(cursor.get("sweeps", 0))
        budget = ctx.options.max_pages or MAX_SEARCH_PAGES

        async def fetch_page(request: PageRequest) -> FetchResult:
            return await ctx.fetch(request.url, expect="text", params=dict(request.params))

        start = PageRequest(SEARCH, {"q": "", "sold": 1, "page": int(cursor.get("page", 1))})
        budget_spent = False
        async for page in paginate(
            fetch_page, start=start, strategy=PageNumber(), extract=_results, max_pages=budget
        ):
            for item_id in page.items:
                try:
                    yield await self._item(ctx, item_id)
                except ResponseTooLarge as exc:
                    # Too big to keep whole, but never skipped silently (invariant 6 of
                    # docs/architecture.md): kept with no listing and no snapshot, so normalize()
                    # fails it closed and it is counted.
                    ctx.log.warning("item.too_large", url=exc.url)
                    url = f"{ORIGIN}/itm/{item_id}"
                    yield RawRecordInput(
                        external_id=item_id, url=url, payload={"url": url, "listing": None}
                    )
                except PermanentFetchError as exc:
                    ctx.log.warning("item.skipped", url=exc.url, status=exc.status)
            ctx.progress(pages=1, items=len(page.items))
            number = int(page.request.params["page"])
            if page.has_more:
                ctx.set_cursor({"page": number + 1, "sweeps": sweeps})
            budget_spent = bool(page.has_more) and page.next_request is None
        if not budget_spent:
            ctx.set_cursor({"page": 1, "sweeps": sweeps + 1})

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        """One :class:`Sale` (sold) or :class:`Listing` (active) per item page.

        Raises:
            ParseError: no listing (``missing_field``), an unknown status, or a field that does
                not validate (its reason and dotted field).
        """
        payload: dict[str, Any] = raw.payload if isinstance(raw.payload, dict) else {}
        item: Any = payload.get("listing")
        if not isinstance(item, dict):
            raise ParseError(ParseReason.MISSING_FIELD, "no __NEXT_DATA__ listing", field="listing")
        title = str(item.get("title") or "")
        facts = lift_grading(title)
        specifics = _obj(item.get("itemSpecifics"))
        cert, conflict = _cert(title, facts, specifics)
        condition = facts.condition
        if condition is None and facts.grading is None and not facts.negated:
            condition = lift_grading(str(item.get("conditionDescription") or "")).condition
        common: dict[str, Any] = {
            "external_id": str(item.get("itemId") or raw.external_id),
            "title": title,
            "url": payload.get("url") or raw.url,
            "category": next((c for k, c in _CATEGORY.items() if k in specifics), None),
            "identifiers": {"cert_number": cert},
            "grading": facts.grading,
            "condition": condition,
            "image_urls": tuple(i for i in item.get("images") or () if isinstance(i, str)),
            "price": _money(item.get("price")),
        }
        if item.get("status") == "ACTIVE":
            seller = _obj(item.get("seller")).get("username")
            listing = {"kind": "listing", "quantity": item.get("quantity"), "seller": seller}
            return [parse_normalized(common | listing)]
        if item.get("status") != "SOLD":
            raise ParseError(ParseReason.INVALID_VALUE, "status", snippet=repr(item.get("status")))
        best_offer = bool(item.get("bestOfferAccepted"))
        if not best_offer and item.get("soldPrice"):
            common["price"] = _money(item["soldPrice"])
        sale_type = "auction" if item.get("format") == "AUCTION" else "fixed"
        lot = isinstance(item.get("lotSize"), int) and item["lotSize"] > 1
        flags = [*facts.flags, *(["lot"] if lot and not facts.is_lot else [])]
        sale = {
            "kind": "sale",
            "shipping": _money(item.get("shipping")),
            "sale_type": "best_offer" if best_offer else sale_type,
            "price_basis": "offer_accepted" if best_offer else "sold_price",
            "price_visibility": "hidden" if best_offer else "exact",
            "sold_at": item.get("soldDate"),
            "is_lot": facts.is_lot or lot,
            "flags": (*flags, *(["cert_conflict"] if conflict else [])),
        }
        return [parse_normalized(common | sale)]

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        try:
            result = await ctx.fetch(SEARCH, expect="text", params={"q": "", "sold": 1, "page": 1})
            found = len(_results(result).items)
        except ConnectorError as exc:
            return ConnectorHealth(status="BROKEN", message=f"{type(exc).__name__}: {exc}"[:300])
        status = "UP" if found else "DEGRADED"
        message = None if found else "the first page of sold results is empty"
        return ConnectorHealth(status=status, latency_ms=result.elapsed_ms, message=message)

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        """The item page of a ``/itm/<id>`` URL (``[]`` for any other URL).

        Raises:
            PermanentFetchError: ``status=404`` when the marketplace has no such item.
        """
        match = ITEM.match(url)
        return [await self._item(ctx, match[1])] if match else []


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _money(value: Any) -> dict[str, Any] | None:
    """``{"value": "12.50", "currency": "USD"}`` as :class:`Money` input; None when absent."""
    money = _obj(value)
    if money.get("value") is None:
        return None
    return {"amount": money["value"], "currency": money.get("currency")}


connector = CardMarketConnector()

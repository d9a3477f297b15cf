"""``market.fake.test``: a marketplace of sold and active listings (think eBay search results).

Paths:

* ``/search?q=…&sold=1&page=N``: 50 results a page (``sold=1``: sold listings, most recent first;
  otherwise active ones, ending soonest first). ``q`` keeps titles containing every word
  (case-insensitive, NFKC). Each result is an ``li.s-item[data-listingid]`` with the title in
  ``.s-item__title span[role=heading]``, the price in ``.s-item__price`` (``$1,234.56``,
  ``US $12.00``, ``£45.00``; struck through with ``Best offer accepted`` beside it), the sold
  date, bids or ``Buy It Now``, and shipping. Like the real thing, every page opens with a
  ghost ``Shop on Market`` result that has no ``data-listingid``. A page past the end has no
  results; ``a.pagination__next`` links onward while there is more.
* ``/itm/<id>``: the item page, with the listing in
  ``<script id="__NEXT_DATA__" type="application/json">`` (``props.pageProps.listing``: title,
  price, currency, status, sold date in ISO 8601 with a Pacific offset, seller, condition, item
  specifics with the cert, images).
* ``/img/...``: a 1x1 GIF.
"""

from __future__ import annotations

import unicodedata
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from ._web import (
    PIXEL_GIF,
    Lazy,
    decimal_text,
    esc,
    gbp,
    html_response,
    int_param,
    not_found,
    origin,
    page,
    script_json,
    us_local_iso,
    usd,
)
from .market_data import HOST, SPEC_GRADERS, Listing, MarketData, build_market
from .world import World

__all__ = ["HOST", "Marketplace"]

PER_PAGE = 50
HOME = (
    '<h1>Market</h1><form action="/search"><input name="q">'
    '<label><input type="checkbox" name="sold" value="1"> Sold items</label>'
    "<button>Search</button></form>"
)
GHOST = (
    '<li class="s-item s-item--watch-at-corner" data-viewport="{}"><div class="s-item__wrapper">'
    '<a class="s-item__link" href="/b/Trading-Cards/"><div class="s-item__title">'
    '<span role="heading" aria-level="3">Shop on Market</span></div></a>'
    '<span class="s-item__price">$20.00</span></div></li>'
)


class Marketplace:
    """The marketplace handler; listings are built on the first request."""

    def __init__(self, seed: int, world_: Lazy[World]) -> None:
        self._data = Lazy(lambda: build_market(seed, world_.get()))

    async def __call__(self, request: Request) -> Response:
        data = self._data.get()
        path = request.url.path
        if path == "/search":
            return html_response(_search(request, data))
        if path.startswith("/itm/"):
            listing = data.by_id.get(path.removeprefix("/itm/"))
            if listing is None:
                return not_found("Item")
            return html_response(_item_page(listing, origin(request, HOST)))
        if path.startswith("/img/"):
            return Response(PIXEL_GIF, media_type="image/gif")
        if path == "/":
            return html_response(page("Market", HOME))
        return not_found()


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _search(request: Request, data: MarketData) -> str:
    query = request.query_params.get("q", "")
    sold = request.query_params.get("sold") == "1"
    number = max(1, int_param(request, "page", 1) or 1)
    words = _fold(query).split()
    pool = data.sold() if sold else data.active()
    matches = [x for x in pool if all(w in _fold(x.title) for w in words)]
    shown = matches[(number - 1) * PER_PAGE : number * PER_PAGE]
    results = GHOST + "".join(_result(x) for x in shown)
    params = {"q": query, **({"sold": "1"} if sold else {})}
    prev_link = next_link = ""
    if number > 1:
        href = esc(f"/search?{urlencode({**params, 'page': number - 1})}")
        prev_link = f'<a class="pagination__previous" href="{href}">Previous</a>'
    if number * PER_PAGE < len(matches):
        href = esc(f"/search?{urlencode({**params, 'page': number + 1})}")
        next_link = f'<a class="pagination__next" href="{href}">Next</a>'
    else:
        next_link = '<a class="pagination__next" aria-disabled="true">Next</a>'
    heading = (
        f'<h1 class="srp-controls__count-heading"><span class="BOLD">{len(matches):,}</span> '
        f'results for <span class="BOLD">{esc(query)}</span></h1>'
    )
    empty = "" if shown else '<div class="srp-save-null-search">No exact matches found</div>'
    body = (
        f"{heading}{empty}<ul class='srp-results srp-list clearfix'>{results}</ul>"
        f'<nav class="pagination" role="navigation">{prev_link}'
        f'<span class="pagination__item" aria-current="page">{number}</span>{next_link}</nav>'
    )
    title = f"{query or 'All items'} {'sold' if sold else 'for sale'} | Market"
    return page(title, body)


def _shipping(listing: Listing) -> str:
    if not listing.shipping:
        return "Free shipping"
    money = gbp if listing.currency == "GBP" else usd
    return f"+{money(listing.shipping)} shipping"


def _result(listing: Listing) -> str:
    price = f'<span class="POSITIVE">{esc(listing.price_text)}</span>'
    if listing.sale_type == "best_offer":
        price = f'<span class="STRIKETHROUGH POSITIVE">{esc(listing.price_text)}</span>'
        purchase = '<span class="s-item__purchase-options">Best offer accepted</span>'
    elif listing.sale_type == "auction":
        purchase = f'<span class="s-item__bids s-item__bidCount">{listing.bids} bids</span>'
    else:
        purchase = '<span class="s-item__purchase-options">Buy It Now</span>'
    caption = ""
    if listing.status == "sold":
        caption = (
            '<div class="s-item__caption"><span class="s-item__caption--signal POSITIVE">'
            f"<span>Sold  {listing.when:%b} {listing.when.day}, {listing.when.year}</span>"
            "</span></div>"
        )
    return (
        f'<li class="s-item s-item__pl-on-bottom" data-listingid="{listing.item_id}">'
        '<div class="s-item__wrapper clearfix"><div class="s-item__image">'
        f'<a href="{listing.path}" tabindex="-1"><img src="/img/{listing.item_id}-1.jpg" '
        f'alt="{esc(listing.title)}"></a></div><div class="s-item__info clearfix">{caption}'
        f'<a class="s-item__link" href="{listing.path}"><div class="s-item__title">'
        f'<span role="heading" aria-level="3">{esc(listing.title)}</span></div></a>'
        '<div class="s-item__details clearfix"><div class="s-item__detail">'
        f'<span class="s-item__price">{price}</span></div>'
        f'<div class="s-item__detail">{purchase}</div><div class="s-item__detail">'
        f'<span class="s-item__shipping s-item__logisticsCost">{_shipping(listing)}</span>'
        "</div></div></div></div></li>"
    )


def _specifics(listing: Listing) -> dict[str, str]:
    item, grade = listing.copy.item, listing.copy.grade
    specifics = {"Year Manufactured": str(item.year), "Manufacturer": item.brand}
    if item.category in ("sports", "tcg"):
        specifics |= {"Set": item.set_name, "Card Number": item.number}
        specifics["Player/Athlete" if item.category == "sports" else "Character"] = item.subject
        if item.variant:
            specifics["Parallel/Variety"] = item.variant
    elif item.category == "comic":
        specifics |= {"Series Title": item.set_name, "Issue Number": item.number}
    else:
        specifics |= {
            "Denomination": item.denomination or "",
            "Mint Location": item.mint_mark or "P",
        }
    if grade.graded and grade.grader:
        specifics |= {"Professional Grader": SPEC_GRADERS[grade.grader], "Grade": grade.grade}
        specifics["Certification Number"] = grade.cert or ""
    return specifics


def _next_data(listing: Listing, base: str) -> dict[str, Any]:
    money = {"value": decimal_text(listing.price), "currency": listing.currency}
    sold = listing.status == "sold"
    grade = listing.copy.grade
    when = us_local_iso(listing.when, -8)
    record = {
        "itemId": listing.item_id,
        "title": listing.title,
        "status": "SOLD" if sold else "ACTIVE",
        "format": "AUCTION" if listing.sale_type == "auction" else "FIXED_PRICE",
        "price": money,
        "soldPrice": money if sold and listing.sale_type != "best_offer" else None,
        "bestOfferAccepted": listing.sale_type == "best_offer",
        "bidCount": listing.bids,
        "soldDate": when if sold else None,
        "endDate": None if sold else when,
        "quantity": 1,
        "lotSize": listing.lot_size,
        "shipping": {"value": decimal_text(listing.shipping), "currency": listing.currency},
        "seller": {"username": listing.seller, "feedbackScore": int(listing.item_id[-4:]) + 12},
        "condition": "Graded" if grade.graded else "Ungraded",
        "conditionDescription": grade.phrase,
        "itemSpecifics": _specifics(listing),
        "images": [f"{base}/img/{listing.item_id}-{n}.jpg" for n in (1, 2)],
    }
    return {
        "props": {"pageProps": {"listing": record}, "__N_SSP": True},
        "page": "/itm/[id]",
        "query": {"id": listing.item_id},
        "buildId": "mkt-2026.05.01",
        "isFallback": False,
        "gssp": True,
        "scriptLoader": [],
    }


def _item_page(listing: Listing, base: str) -> str:
    status = (
        f'<div class="x-item-status">This listing sold on {listing.when:%b %d, %Y}.</div>'
        if listing.status == "sold"
        else ""
    )
    body = (
        f'<div id="__next"><h1 class="x-item-title__mainTitle"><span>{esc(listing.title)}</span>'
        f'</h1>{status}<div class="x-price-primary"><span>{esc(listing.price_text)}</span></div>'
        f'<div class="x-sellercard">{esc(listing.seller)}</div></div>'
        f'<script id="__NEXT_DATA__" type="application/json">'
        f"{script_json(_next_data(listing, base))}</script>"
    )
    head = f'<meta property="og:title" content="{esc(listing.title)}">'
    return page(f"{listing.title} | Market", body, head=head)

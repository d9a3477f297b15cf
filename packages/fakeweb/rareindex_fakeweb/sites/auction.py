"""``auction.fake.test``: an auction house with sitemaps, lot pages and prices-realised PDFs.

Paths:

* ``/robots.txt``: ``Crawl-delay: 0.02`` (the fake web's own pace: crawls obey it and stay
  quick) and ``Disallow: /admin/`` for ``*``, a ``Sitemap:`` line.
* ``/sitemap_index.xml.gz``: a gzipped sitemap index -> ``/sitemaps/lots-<n>.xml.gz`` (gzipped
  urlsets of 50 lot URLs with ``<lastmod>``; every seventh ``<loc>`` wrapped in CDATA) and
  ``/sitemaps/sales.xml.gz``. Served as ``application/x-gzip`` with no ``Content-Encoding``.
* ``/lots/<sale>/<lot>``: schema.org ``Product`` + ``Offer`` JSON-LD (``price`` is the price
  realised, ``availability`` ``SoldOut``; unsold lots have no price and ``OutOfStock``), Open
  Graph tags, hammer / premium / realised in the page; some pages add microdata, a few have
  JSON-LD with a trailing comma, and the group lot has an ``AggregateOffer`` with one offer per
  slab (see :mod:`.auction_data`).
* ``/sales/<sale>`` (HTML list of lots) and ``/sales/<sale>/prices-realised.pdf``.
* ``/admin/`` answers 403; ``/images/...`` a 1x1 GIF.
"""

from __future__ import annotations

import gzip
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ._web import PIXEL_GIF, Lazy, esc, html_response, not_found, origin, page, script_json
from .auction_data import HOST, AuctionData, Lot, Sale, build_auction
from .auction_pdf import money, prices_realised_pdf
from .world import World

__all__ = ["HOST", "AuctionHouse"]

SITE = "Fake Auctions"
PER_SITEMAP = 50
SCHEMA = "https://schema.org/"


class AuctionHouse:
    """The auction house's handler; sales are built on first use, each PDF once."""

    def __init__(self, seed: int, world_: Lazy[World]) -> None:
        self._data = Lazy(lambda: build_auction(seed, world_.get()))
        self._pdfs: dict[str, Lazy[bytes]] = {}

    async def __call__(self, request: Request) -> Response:
        data = self._data.get()
        path = request.url.path
        base = origin(request, HOST)
        if path == "/robots.txt":
            return Response(_robots(base), media_type="text/plain; charset=utf-8")
        if path == "/sitemap_index.xml.gz":
            return _gz(_sitemap_index(data, base))
        if path.startswith("/sitemaps/") and path.endswith(".xml.gz"):
            body = _urlset(data, base, path.removeprefix("/sitemaps/").removesuffix(".xml.gz"))
            return _gz(body) if body else not_found("Sitemap")
        if path.startswith("/lots/"):
            sale_id, _, number = path.removeprefix("/lots/").partition("/")
            sale = data.sale(sale_id)
            if sale and number.isdigit() and 1 <= int(number) <= len(sale.lots):
                return html_response(_lot_page(sale, sale.lots[int(number) - 1], base))
            return not_found("Lot")
        if path.startswith("/sales/"):
            sale_id, _, rest = path.removeprefix("/sales/").partition("/")
            sale = data.sale(sale_id)
            if sale and rest == "":
                return html_response(_sale_page(sale))
            if sale and rest == "prices-realised.pdf":
                return Response(self._pdf(sale), media_type="application/pdf")
            return not_found("Sale")
        if path.startswith("/admin"):
            return html_response(page("Forbidden", "<h1>403 Forbidden</h1>"), status=403)
        if path.startswith("/images/"):
            return Response(PIXEL_GIF, media_type="image/gif")
        if path == "/":
            items = "".join(
                f'<li><a href="{s.path}">Sale {s.sale_id}: {esc(s.title)}</a></li>'
                for s in data.sales
            )
            return html_response(page(SITE, f"<h1>{SITE}</h1><ul>{items}</ul>"))
        return not_found()

    def _pdf(self, sale: Sale) -> bytes:
        lazy = self._pdfs.setdefault(sale.sale_id, Lazy(lambda: prices_realised_pdf(sale)))
        return lazy.get()


def _gz(xml: str) -> Response:
    # mtime=0: the gzip header carries no timestamp, so the bytes depend on the seed only.
    return Response(gzip.compress(xml.encode(), mtime=0), media_type="application/x-gzip")


def _robots(base: str) -> str:
    return (
        f"# robots.txt for {SITE}\n"
        "User-agent: *\nCrawl-delay: 0.02\nDisallow: /admin/\nDisallow: /bid/\n\n"
        "User-agent: GPTBot\nDisallow: /\n\n"
        f"Sitemap: {base}/sitemap_index.xml.gz\n"
    )


def _chunks(data: AuctionData) -> list[tuple[Lot, ...]]:
    lots = data.lots()
    return [lots[i : i + PER_SITEMAP] for i in range(0, len(lots), PER_SITEMAP)]


def _sitemap_index(data: AuctionData, base: str) -> str:
    entries = [
        (f"lots-{n}", max(lot.lastmod for lot in chunk))
        for n, chunk in enumerate(_chunks(data), start=1)
    ]
    entries.append(("sales", max(s.closed for s in data.sales)))
    body = "".join(
        f"<sitemap><loc>{base}/sitemaps/{name}.xml.gz</loc>"
        f"<lastmod>{when.isoformat()}</lastmod></sitemap>\n"
        for name, when in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{body}</sitemapindex>\n"
    )


def _urlset(data: AuctionData, base: str, name: str) -> str | None:
    if name == "sales":
        rows = [(s.path, s.closed) for s in data.sales]
    else:
        chunks = _chunks(data)
        number = name.removeprefix("lots-")
        if not name.startswith("lots-") or not number.isdigit():
            return None
        if not 1 <= int(number) <= len(chunks):
            return None
        rows = [(lot.path, lot.lastmod) for lot in chunks[int(number) - 1]]
    urls = []
    for n, (path, when) in enumerate(rows):
        loc = f"<![CDATA[{base}{path}]]>" if n % 7 == 3 else f"{base}{path}"
        urls.append(
            f"<url><loc>{loc}</loc><lastmod>{when.isoformat()}</lastmod>"
            "<changefreq>yearly</changefreq></url>\n"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{''.join(urls)}</urlset>\n"
    )


def _amount(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _offers(sale: Sale, lot: Lot, url: str) -> dict[str, Any]:
    if lot.is_group and lot.realised is not None:
        offers = [
            {
                "@type": "Offer",
                "name": copy.item.title,
                "price": _amount(share),
                "priceCurrency": lot.currency,
                "availability": SCHEMA + "SoldOut",
            }
            for copy, share in zip(lot.copies, lot.shares, strict=True)
        ]
        return {
            "@type": "AggregateOffer",
            "url": url,
            "priceCurrency": lot.currency,
            "lowPrice": _amount(min(lot.shares)),
            "highPrice": _amount(max(lot.shares)),
            "offerCount": len(offers),
            "offers": offers,
        }
    offer: dict[str, Any] = {"@type": "Offer", "url": url, "priceCurrency": lot.currency}
    if lot.realised is not None:
        offer["price"] = _amount(lot.realised)
    offer["validFrom"] = sale.closed.isoformat()
    offer["availability"] = SCHEMA + ("SoldOut" if lot.sold else "OutOfStock")
    return offer


def _lot_page(sale: Sale, lot: Lot, base: str) -> str:
    url = f"{base}{lot.path}"
    image = f"{base}/images/{sale.sale_id}/{lot.number}-1.jpg"
    first = lot.copies[0]
    ld = {
        "@context": SCHEMA,
        "@type": "Product",
        "name": lot.title,
        "description": f"Lot {lot.number} of sale {sale.sale_id}, {sale.title}.",
        "image": [image],
        "sku": f"{sale.sale_id}-{lot.number}",
        "brand": {"@type": "Brand", "name": first.item.brand},
        "offers": _offers(sale, lot, url),
    }
    ld_text = script_json(ld)
    if lot.broken_jsonld:
        ld_text = ld_text[:-2] + ",}}"  # a trailing comma inside "offers", as careless CMSs emit
    cur = lot.currency
    head = (
        f'<meta name="description" content="{esc(lot.title)}">'
        f'<meta property="og:site_name" content="{SITE}">'
        '<meta property="og:type" content="product">'
        f'<meta property="og:title" content="{esc(lot.title)}">'
        f'<meta property="og:url" content="{esc(url)}">'
        f'<meta property="og:image" content="{esc(image)}">'
    )
    if lot.realised is not None:
        head += (
            f'<meta property="product:price:amount" content="{_amount(lot.realised)}">'
            f'<meta property="product:price:currency" content="{cur}">'
        )
    head += f'<link rel="canonical" href="{esc(url)}">'
    head += f'<script type="application/ld+json">{ld_text}</script>'
    estimate = f"{money(lot.estimate_low, cur)} – {money(lot.estimate_high, cur)}"
    if lot.hammer is not None and lot.premium is not None and lot.realised is not None:
        result = (
            f"<dt>Hammer price</dt><dd class='hammer'>{money(lot.hammer, cur)}</dd>"
            f"<dt>Buyer's premium ({sale.premium_pct}%)</dt>"
            f"<dd class='premium'>{money(lot.premium, cur)}</dd>"
            f"<dt>Price realised</dt><dd class='realised'>{money(lot.realised, cur)}</dd>"
        )
    else:
        result = "<dt>Result</dt><dd class='result'>Unsold</dd>"
    notes = "".join(
        f"<li>{esc(c.grade.grader or '')} certification #{c.grade.cert}</li>"
        for c in lot.copies
        if c.grade.cert
    )
    body = (
        f'<nav><a href="/">{SITE}</a> › <a href="{sale.path}">Sale {sale.sale_id}</a></nav>'
        f'<main><p class="lot-number">Lot {lot.number}</p>'
        f'<h1 class="lot-title">{esc(lot.title)}</h1>'
        f'<img src="{esc(image)}" alt="">'
        f"<dl class='lot-result'><dt>Estimate</dt><dd class='estimate'>{estimate}</dd>{result}</dl>"
        f"<div class='description'><ul>{notes}</ul></div>"
        f"{_microdata(lot) if lot.microdata else ''}</main>"
    )
    lang = "fr" if sale.currency == "EUR" else "en"
    title = f"{lot.title} | Lot {lot.number} | Sale {sale.sale_id} | {SITE}"
    return page(title, body, head=head, lang=lang)


def _microdata(lot: Lot) -> str:
    price = ""
    if lot.realised is not None:
        price = f'<meta itemprop="price" content="{_amount(lot.realised)}">'
    availability = "SoldOut" if lot.sold else "OutOfStock"
    return (
        f'<div itemscope itemtype="{SCHEMA}Product">'
        f'<meta itemprop="name" content="{esc(lot.title)}">'
        f'<div itemprop="offers" itemscope itemtype="{SCHEMA}Offer">{price}'
        f'<meta itemprop="priceCurrency" content="{lot.currency}">'
        f'<link itemprop="availability" href="{SCHEMA}{availability}"></div></div>'
    )


def _sale_page(sale: Sale) -> str:
    rows = "".join(
        f"<tr><td>{lot.number}</td><td><a href='{lot.path}'>{esc(lot.title)}</a></td>"
        f"<td>{'Unsold' if lot.realised is None else money(lot.realised, sale.currency)}</td></tr>"
        for lot in sale.lots
    )
    body = (
        f"<h1>Sale {sale.sale_id}: {esc(sale.title)}</h1>"
        f"<p>{esc(sale.city)}, closed {sale.closed:%d %B %Y}. "
        f"Buyer's premium {sale.premium_pct}%.</p>"
        f"<p><a href='{sale.path}/prices-realised.pdf'>Prices realised (PDF)</a></p>"
        "<table class='lots'><tr><th>Lot</th><th>Title</th><th>Price realised</th></tr>"
        f"{rows}</table>"
    )
    return page(
        f"Sale {sale.sale_id} | {SITE}", body, lang="fr" if sale.currency == "EUR" else "en"
    )

"""``cards-shop.fake.test``: a Shopify storefront selling graded and raw cards and sealed product.

Paths (docs/domain.md#store-feeds):

* ``/products.json?limit=N&page=N``: ``limit`` 1 to 250 (default 30, larger values clamp to 250); a
  page past the end is ``{"products": []}``.
* ``/collections.json``; ``/collections/<handle>/products.json`` for ``all``, ``pokemon``,
  ``sports``, ``graded`` and ``sealed`` (unknown handle: 404).
* ``/products/<handle>.json`` (``{"product": {...}}``) and ``/products/<handle>`` (HTML with
  JSON-LD ``Product`` and Open Graph price tags).

Every path is served in a market sub-folder too (Shopify Markets): ``/en-eu/products.json``,
``/en-eu/collections/<handle>/products.json``, ``/en-eu/products/<handle>(.json)`` answer the same
catalogue with prices in EUR (:data:`MARKETS`); an unknown sub-folder is a 404 page.

JSON answers carry ``ETag`` and ``Last-Modified`` (the newest ``updated_at`` they show) and are a
304 to a conditional request that matches (:mod:`._conditional`); :meth:`ShopifyStore.reprice`
changes a product, as a merchant would, for tests of re-crawls.

Titles carry the grade as stores write it (``PSA 10 GEM MINT``, ``BGS 9.5``, ``Raw NM``, ``LP``);
graded bodies carry the cert. Raw Pokémon singles are often one product with a variant per
condition. Sealed product and supplies carry ``barcode`` (UPC, EAN, JAN or ISBN) on the variant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ._conditional import conditional, newest
from ._web import (
    Lazy,
    esc,
    html_response,
    int_param,
    json_bytes,
    json_response,
    origin,
    page,
    script_json,
    usd,
)
from .shopify_data import HOST, ShopData, build_shop
from .world import World

__all__ = ["HOST", "MARKETS", "Market", "ShopifyStore"]


@dataclass(frozen=True, slots=True)
class Market:
    """A market sub-folder: its currency and the rate from the store's USD."""

    currency: str
    rate: Decimal


MARKETS = {"en-eu": Market("EUR", Decimal("0.92"))}
"""Sub-folder -> market, as ``https://cards-shop.fake.test/en-eu/…`` serves it."""


class ShopifyStore:
    """The ASGI-side handler; the catalogue is built on the first request."""

    def __init__(self, seed: int, world_: Lazy[World]) -> None:
        self._data = Lazy(lambda: build_shop(seed, world_.get()))

    def reprice(self, handle: str, price: str, *, updated_at: str) -> None:
        """Change every variant's price of product ``handle``, stamped ``updated_at`` (ISO)."""
        product = self._data.get().by_handle[handle]
        product["updated_at"] = updated_at
        for variant in product["variants"]:
            variant["price"], variant["updated_at"] = price, updated_at

    async def __call__(self, request: Request) -> Response:
        data = self._data.get()
        path = request.url.path
        first = path.split("/")[1] if path.count("/") >= 2 else ""
        market = MARKETS.get(first)
        if market is not None:
            path = path.removeprefix(f"/{first}")
        base = origin(request, HOST) + (f"/{first}" if market else "")
        if path == "/products.json":
            return _paged(request, data.products, market)
        if path == "/collections.json":
            return json_response({"collections": _collections(data)})
        if path.startswith("/collections/") and path.endswith("/products.json"):
            indexes = data.collections.get(path.split("/")[2])
            if indexes is None:
                return json_response({"errors": "Not Found"}, status=404)
            return _paged(request, [data.products[i] for i in indexes], market)
        if path.startswith("/products/"):
            handle = path.removeprefix("/products/")
            product = data.by_handle.get(handle.removesuffix(".json"))
            if product is None:
                return json_response({"errors": "Not Found"}, status=404)
            product = _in_market(product, market)
            if handle.endswith(".json"):
                response = json_response({"product": product})
                return conditional(request, response, newest([product["updated_at"]]))
            currency = market.currency if market else "USD"
            return html_response(_product_page(product, base, currency))
        if path == "/":
            links = "".join(
                f'<li><a href="/collections/{h}">{h}</a></li>' for h in data.collections
            )
            return html_response(page("Cards Shop", f"<h1>Cards Shop</h1><ul>{links}</ul>"))
        return html_response(page("404 Not Found", "<h1>404 Page Not Found</h1>"), status=404)


def _paged(request: Request, products: Sequence[dict[str, Any]], market: Market | None) -> Response:
    limit = int_param(request, "limit", 30) or 30
    limit = max(1, min(limit, 250))
    number = max(1, int_param(request, "page", 1) or 1)
    start = (number - 1) * limit
    shown = [_in_market(p, market) for p in products[start : start + limit]]
    chosen = b",".join(json_bytes(p) for p in shown)
    response = Response(
        b'{"products":[' + chosen + b"]}", media_type="application/json; charset=utf-8"
    )
    return conditional(request, response, newest(p["updated_at"] for p in shown))


def _in_market(product: dict[str, Any], market: Market | None) -> dict[str, Any]:
    """``product`` with its prices in ``market``'s currency (the store's own without one)."""
    if market is None:
        return product

    def convert(price: str | None) -> str | None:
        if price is None:
            return None
        amount = (Decimal(price) * market.rate).quantize(Decimal("0.01"), ROUND_HALF_UP)
        return str(amount)

    variants = [
        {**v, "price": convert(v["price"]), "compare_at_price": convert(v["compare_at_price"])}
        for v in product["variants"]
    ]
    return {**product, "variants": variants}


def _collections(data: ShopData) -> list[dict[str, Any]]:
    return [
        {
            "id": 291_000_000_000 + n,
            "title": handle.title(),
            "handle": handle,
            "description": f"<p>{handle.title()} singles and sealed product.</p>",
            "published_at": "2024-11-02T10:00:00-04:00",
            "updated_at": "2026-04-20T09:00:00-04:00",
            "image": None,
            "products_count": len(indexes),
        }
        for n, (handle, indexes) in enumerate(data.collections.items())
    ]


def _product_page(product: dict[str, Any], base: str, currency: str = "USD") -> str:
    variant = product["variants"][0]
    url = f"{base}/products/{product['handle']}"
    image = product["images"][0]["src"] if product["images"] else None
    cents = int(variant["price"].replace(".", ""))
    offers = [
        {
            "@type": "Offer",
            "availability": "http://schema.org/" + ("InStock" if v["available"] else "OutOfStock"),
            "price": v["price"],
            "priceCurrency": currency,
            "sku": v["sku"],
            "url": f"{url}?variant={v['id']}",
        }
        for v in product["variants"]
    ]
    ld = {
        "@context": "http://schema.org/",
        "@type": "Product",
        "name": product["title"],
        "url": url,
        "image": [image] if image else [],
        "description": product["body_html"],
        "brand": {"@type": "Brand", "name": product["vendor"]},
        "offers": offers,
    }
    head = (
        '<meta property="og:site_name" content="Cards Shop">'
        f'<meta property="og:url" content="{esc(url)}">'
        f'<meta property="og:title" content="{esc(product["title"])}">'
        '<meta property="og:type" content="product">'
        + (f'<meta property="og:image" content="{esc(image)}">' if image else "")
        + f'<meta property="og:price:amount" content="{usd(cents)[1:]}">'
        f'<meta property="og:price:currency" content="{currency}">'
        f'<script type="application/ld+json">{script_json(ld)}</script>'
    )
    options = "".join(
        f'<option value="{v["id"]}"{"" if v["available"] else " disabled"}>{esc(v["title"])}'
        f" - {usd(int(v['price'].replace('.', '')))}</option>"
        for v in product["variants"]
    )
    sold_out = "" if variant["available"] else '<span class="badge">Sold out</span>'
    body = (
        f'<main><h1 class="product__title">{esc(product["title"])}</h1>'
        f'<p class="product__vendor">{esc(product["vendor"])}</p>'
        f'<div class="price"><span class="price-item price-item--regular">{usd(cents)} {currency}'
        f"</span>{sold_out}</div>"
        f'<select name="id">{options}</select>'
        f'<div class="product__description rte">{product["body_html"]}</div></main>'
    )
    return page(f"{product['title']} – Cards Shop", body, head=head)

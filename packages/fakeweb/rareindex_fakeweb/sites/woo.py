"""``comics-woo.fake.test`` (GBP) and ``coins-woo.fake.test`` (KWD, minor unit 3): the WooCommerce
Store API (docs/domain.md#store-feeds).

Paths:

* ``GET /wp-json/wc/store/v1/products?page=N&per_page=N``: ``per_page`` 1 to 100 (default 10);
  ``per_page=0``, ``per_page=101`` or ``page=0`` answer 400 ``rest_invalid_param``. Headers
  ``X-WP-Total``, ``X-WP-TotalPages`` and ``Link`` (``rel="prev"`` / ``rel="next"``). A page past
  the end is ``[]`` with the same headers. ``search=`` (name substring), ``sku=`` and
  ``category=`` (a slug) filter.
* ``GET /wp-json/wc/store/v1/products/<id>``: one product, or 404
  ``woocommerce_rest_product_invalid_id``.
* ``/product/<slug>/``: the HTML product page (JSON-LD ``Product`` as WooCommerce emits it).

Answers carry an ``ETag`` and are a 304 to an ``If-None-Match`` that matches
(:mod:`._conditional`); :meth:`WooStore.reprice` changes a product or variation, as a merchant
would, for tests of re-crawls.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from ._conditional import conditional
from ._web import Lazy, esc, html_response, json_bytes, origin, page, script_json
from .woo_data import WooData, build_woo
from .world import World

__all__ = ["WooStore"]

API = "/wp-json/wc/store/v1/products"


class WooStore:
    """One store's handler; the catalogue is built on the first request."""

    def __init__(self, seed: int, host: str, world_: Lazy[World]) -> None:
        self.host = host
        self._data = Lazy(lambda: build_woo(seed, host, world_.get()))

    def reprice(self, product_id: int, minor: int) -> None:
        """Change the price (minor units) of the product or variation ``product_id``."""
        prices = self._data.get().by_id[product_id]["prices"]
        prices["price"] = prices["regular_price"] = str(minor)

    async def __call__(self, request: Request) -> Response:
        return conditional(request, await self._answer(request), None)

    async def _answer(self, request: Request) -> Response:
        data = self._data.get()
        path = request.url.path.rstrip("/") or "/"
        base = origin(request, self.host)
        if path == API:
            return self._list(request, data, base)
        if path.startswith(API + "/"):
            raw_id = path.removeprefix(API + "/")
            product = data.by_id.get(int(raw_id)) if raw_id.isdigit() else None
            if product is None:
                return self._json(
                    {
                        "code": "woocommerce_rest_product_invalid_id",
                        "message": "Invalid product ID.",
                        "data": {"status": 404},
                    },
                    base,
                    status=404,
                )
            return self._json(product, base)
        if path.startswith("/product/"):
            product = data.by_slug.get(path.removeprefix("/product/"))
            if product is not None:
                return html_response(self._rebase(_product_page(product, data), base))
        return html_response(
            page("Page not found", "<h1>Oops! That page can’t be found.</h1>"), 404
        )

    def _rebase(self, text: str, base: str) -> str:
        # WordPress writes its configured site URL; follow the address the client used instead.
        return text.replace(f"http://{self.host}", base)

    def _json(
        self, data: Any, base: str, status: int = 200, headers: dict[str, str] | None = None
    ) -> Response:
        body = json_bytes(data).replace(f"http://{self.host}".encode(), base.encode())
        return Response(
            body, status_code=status, headers=headers, media_type="application/json; charset=UTF-8"
        )

    def _list(self, request: Request, data: WooData, base: str) -> Response:
        params = request.query_params
        errors: dict[str, str] = {}
        per_page = _int(params.get("per_page"), 10)
        number = _int(params.get("page"), 1)
        if per_page is None or not 1 <= per_page <= 100:
            errors["per_page"] = "per_page must be between 1 (inclusive) and 100 (inclusive)"
        if number is None or number < 1:
            errors["page"] = "page must be greater than or equal to 1"
        if errors or per_page is None or number is None:
            return self._json(
                {
                    "code": "rest_invalid_param",
                    "message": f"Invalid parameter(s): {', '.join(errors)}",
                    "data": {"status": 400, "params": errors, "details": {}},
                },
                base,
                status=400,
            )
        products: list[dict[str, Any]] | tuple[dict[str, Any], ...] = data.products
        if search := params.get("search"):
            products = [p for p in products if search.casefold() in p["name"].casefold()]
        if sku := params.get("sku"):
            wanted = set(sku.split(","))
            products = [p for p in products if p["sku"] in wanted]
        if category := params.get("category"):
            products = [p for p in products if any(c["slug"] == category for c in p["categories"])]
        total = len(products)
        pages = -(-total // per_page)
        start = (number - 1) * per_page
        headers = {"X-WP-Total": str(total), "X-WP-TotalPages": str(pages)}
        kept = {k: v for k, v in params.items() if k != "page"}
        links = []
        if number > 1:
            prev = min(number - 1, pages) if pages else 1
            links.append(f'<{base}{API}?{urlencode({**kept, "page": prev})}>; rel="prev"')
        if number < pages:
            links.append(f'<{base}{API}?{urlencode({**kept, "page": number + 1})}>; rel="next"')
        if links:
            headers["Link"] = ", ".join(links)
        return self._json(list(products[start : start + per_page]), base, headers=headers)


def _int(raw: str | None, default: int) -> int | None:
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        return None


def _product_page(product: dict[str, Any], data: WooData) -> str:
    prices = product["prices"]
    unit = prices["currency_minor_unit"]
    amount = int(prices["price"])
    ld = {
        "@context": "https://schema.org/",
        "@type": "Product",
        "@id": product["permalink"] + "#product",
        "name": product["name"],
        "url": product["permalink"],
        "description": product["short_description"],
        "image": product["images"][0]["src"],
        "sku": product["sku"],
        "offers": [
            {
                "@type": "Offer",
                "price": f"{amount / 10**unit:.{unit}f}",
                "priceCurrency": prices["currency_code"],
                "availability": "http://schema.org/"
                + ("InStock" if product["is_in_stock"] else "OutOfStock"),
                "url": product["permalink"],
            }
        ],
    }
    body = (
        f'<div class="product"><h1 class="product_title entry-title">{esc(product["name"])}</h1>'
        f'<p class="price">{product["price_html"]}</p>'
        f'<div class="woocommerce-product-details__short-description">'
        f"{product['short_description']}</div>"
        f'<div id="tab-description">{product["description"]}</div>'
        f'<span class="sku_wrapper">SKU: <span class="sku">{esc(product["sku"])}</span>'
        "</span></div>"
    )
    head = f'<script type="application/ld+json">{script_json(ld)}</script>'
    return page(f"{product['name']} – {data.host}", body, head=head)

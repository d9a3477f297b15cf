"""The page server of ``bench.crawl``, in its own process so it does not share the client's GIL.

``python -m bench.crawl_server PORT SHOP_PAGES SMALL_PAGES`` serves, on 127.0.0.1:

- ``/products.json?limit=250&page=N`` — a Shopify storefront: pages 1..SHOP_PAGES hold ``limit``
  products of ~1 KB each (distinct ids, so every page is new content), later pages
  ``{"products": []}``. The pages are built once at start-up, so serving one costs no JSON work.
- ``/small.json?page=N`` — one product per page for pages 1..SMALL_PAGES, then an empty page:
  cheap pages for the long memory crawl.

Any other path is a 404.
"""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import parse_qs

SHOPIFY_LIMIT = 250
EMPTY = b'{"products":[]}'


def product(pid: int) -> dict[str, Any]:
    """A Shopify-shaped product of about 1 KB of JSON."""
    stamp = "2024-05-01T10:00:00-04:00"
    return {
        "id": pid,
        "title": f"1999 Pokemon Base Set Charizard #{pid % 102 + 1} Holo PSA {pid % 10 + 1}",
        "handle": f"charizard-base-set-{pid}",
        "body_html": "<p>Graded by PSA. Ships in a team bag inside a rigid mailer.</p>",
        "published_at": stamp,
        "created_at": stamp,
        "updated_at": stamp,
        "vendor": "Bench Cards",
        "product_type": "Trading Card",
        "tags": ["pokemon", "psa", "base-set", "holo"],
        "variants": [
            {
                "id": pid * 10 + 1,
                "product_id": pid,
                "title": "Default Title",
                "option1": "Default Title",
                "sku": f"BC-{pid:08d}",
                "price": f"{100 + pid % 900}.00",
                "compare_at_price": None,
                "available": True,
                "requires_shipping": True,
                "taxable": True,
                "grams": 20,
                "position": 1,
                "created_at": stamp,
                "updated_at": stamp,
            }
        ],
        "images": [
            {
                "id": pid * 10 + 2,
                "product_id": pid,
                "src": f"https://cdn.shopify.com/s/files/1/0000/0001/products/cz-{pid}.jpg",
                "width": 1000,
                "height": 1400,
                "position": 1,
            }
        ],
        "options": [{"name": "Title", "position": 1, "values": ["Default Title"]}],
    }


def shop_page(page: int, limit: int = SHOPIFY_LIMIT) -> bytes:
    """Page ``page`` (from 1) of the storefront, ``limit`` products."""
    first = (page - 1) * limit + 1
    return json.dumps({"products": [product(first + i) for i in range(limit)]}).encode()


def make_app(shop_pages: int, small_pages: int) -> Any:
    shop = {page: shop_page(page) for page in range(1, shop_pages + 1)}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        query = parse_qs(scope["query_string"].decode())
        page = int(query.get("page", ["1"])[0])
        status, body = 200, EMPTY
        if scope["path"] == "/products.json":
            limit = int(query.get("limit", [str(SHOPIFY_LIMIT)])[0])
            if 1 <= page <= shop_pages:
                body = shop[page] if limit == SHOPIFY_LIMIT else shop_page(page, limit)
        elif scope["path"] == "/small.json":
            if 1 <= page <= small_pages:
                body = json.dumps({"products": [product(10_000_000 + page)]}).encode()
        else:
            status, body = 404, b'{"error":"not found"}'
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def main(port: int, shop_pages: int, small_pages: int) -> None:
    import uvicorn

    try:
        import httptools  # noqa: F401 - the faster HTTP parser, when installed

        http = "httptools"
    except ImportError:
        http = "h11"
    uvicorn.run(
        make_app(shop_pages, small_pages),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        http=http,
        loop="asyncio",
    )


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))

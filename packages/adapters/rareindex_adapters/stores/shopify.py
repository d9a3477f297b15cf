"""``ShopifyStoreConnector``: a Shopify storefront as a config-only connector.

Crawls ``/products.json`` (or each configured collection's) 250 products a page until an empty
page; one raw record per product (its JSON as the store sent it); ``normalize()`` turns each
variant into a :class:`Listing` with identifiers and grades lifted from the title;
``lookup()`` resolves ``/products/<handle>`` URLs. A ``base_url`` with a market sub-folder
(``https://cards.example/en-eu``) is kept on every request: ``/en-eu/products.json``,
``/en-eu/collections/<handle>/products.json``, ``/en-eu/products/<handle>.json``.

Example:
    >>> connector = ShopifyStoreConnector.from_config(
    ...     {"source": "Demo Cards", "base_url": "https://cards.example", "currency": "USD",
    ...      "categories": ["tcg_card"]}, slug="demo-cards")
    >>> connector.meta.id, connector.meta.capabilities
    ('demo-cards', ('listing', 'url_lookup'))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from rareindex_connectors import ConnectorHealth, CrawlContext, FetchResult
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import NormalizedRecord, RawRecord, RawRecordInput

from ..pagination import PageRequest
from ..shopify import (
    SHOPIFY_MAX_LIMIT,
    extract_shopify_page,
    parse_shopify_products,
    shopify_products_url,
)
from ._common import StoreConnector, probe

__all__ = ["ShopifyStoreConnector"]


class ShopifyStoreConnector(StoreConnector):
    """One Shopify store, configured by a :class:`StoreConfig`."""

    platform = "shopify"
    extract = staticmethod(extract_shopify_page)

    def start(self, collection: str | None) -> PageRequest:
        limit = self.config.page_size or SHOPIFY_MAX_LIMIT
        url = shopify_products_url(self.config.origin, 1, limit, collection)
        path = url.split("?", 1)[0]
        return PageRequest(path, {"limit": limit, "page": 1})

    def record(self, product: Mapping[str, Any], result: FetchResult) -> RawRecordInput:
        if not isinstance(product, Mapping) or "id" not in product:
            raise ParseError(
                ParseReason.UNEXPECTED_SHAPE, "a product object with an id", snippet=repr(product)
            )
        handle = product.get("handle") or product["id"]
        return RawRecordInput(
            external_id=str(product["id"]),
            url=f"{self.config.origin}/products/{handle}",
            payload=dict(product),
            engine=result.engine,
            http_status=result.status,
        )

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        page = parse_shopify_products(
            {"products": [raw.payload]},
            base_url=self.config.origin,
            currency=self.config.currency,
            category=self.config.default_category,
        )
        return list(page.listings)

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        url = shopify_products_url(self.config.origin, 1, 1)
        return await probe(ctx, url, lambda result: extract_shopify_page(result))

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        market = urlsplit(self.config.origin).path  # "/en-eu", or "" without a sub-folder
        match = re.match(rf"^{re.escape(market)}/products/([^/?#]+)", urlsplit(url).path)
        if not self.meta.matches_url(url) or match is None:
            return []
        result = await ctx.fetch(
            f"{self.config.origin}/products/{match.group(1)}.json", expect="json"
        )
        product = result.json().get("product") if isinstance(result.json(), dict) else None
        if not isinstance(product, Mapping):
            raise ParseError(
                ParseReason.MISSING_FIELD,
                "no product in the response",
                field="product",
                snippet=result.text,
            )
        return [self.record(product, result)]

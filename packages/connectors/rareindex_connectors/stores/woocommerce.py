"""``WooCommerceStoreConnector``: a WooCommerce Store API as a config-only connector.

Crawls ``/wp-json/wc/store/v1/products`` 100 products a page (``X-WP-TotalPages`` / ``Link``
and an empty page end it); one raw record per product; ``normalize()`` reads minor-unit prices
with the payload's own ``currency_minor_unit``. Configured ``collections`` are category slugs.

Example:
    >>> connector = WooCommerceStoreConnector.from_config(
    ...     {"source": "Comic Vault", "base_url": "https://comics.example", "currency": "GBP",
    ...      "categories": ["comic"]}, slug="comic-vault")
    >>> connector.meta.engines
    ('api',)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._context import CrawlContext, FetchResult
from .._errors import ParseError, ParseReason
from .._health import ConnectorHealth
from .._normalized import NormalizedRecord
from .._raw import RawRecord, RawRecordInput
from ..adapters.pagination import PageRequest
from ..adapters.woocommerce import (
    WOO_MAX_PER_PAGE,
    WOO_PRODUCTS_PATH,
    extract_woo_page,
    parse_woo_product,
    parse_woo_products,
)
from ._common import StoreConnector, probe

__all__ = ["WooCommerceStoreConnector"]


class WooCommerceStoreConnector(StoreConnector):
    """One WooCommerce store, configured by a :class:`StoreConfig`."""

    platform = "woocommerce"
    extract = staticmethod(extract_woo_page)

    def start(self, collection: str | None) -> PageRequest:
        params: dict[str, str | int] = {
            "per_page": self.config.page_size or WOO_MAX_PER_PAGE,
            "page": 1,
        }
        if collection:
            params["category"] = collection
        return PageRequest(f"{self.config.origin}{WOO_PRODUCTS_PATH}", params)

    def record(self, product: Mapping[str, Any], result: FetchResult) -> RawRecordInput:
        if not isinstance(product, Mapping) or "id" not in product:
            raise ParseError(
                ParseReason.UNEXPECTED_SHAPE, "a product object with an id", snippet=repr(product)
            )
        url = product.get("permalink") or f"{self.config.origin}/?p={product['id']}"
        return RawRecordInput(
            external_id=str(product["id"]),
            url=str(url),
            payload=dict(product),
            engine=result.engine,
            http_status=result.status,
        )

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        page = parse_woo_products([raw.payload], category=self.config.default_category)
        return list(page.listings)

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        url = f"{self.config.origin}{WOO_PRODUCTS_PATH}?per_page=1&page=1"
        return await probe(ctx, url, extract_woo_page)

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        if not self.meta.matches_url(url):
            return []
        return []  # permalink pages carry no product id the Store API can be asked for

    @staticmethod
    def parse_single(payload: Any) -> list[NormalizedRecord]:
        """A ``/products/<id>`` response (a variation) as listings."""
        return list(parse_woo_product(payload).listings)

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

from collections.abc import AsyncIterator, Mapping
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
from ._common import crawl_collections, probe
from .config import StoreConfig

__all__ = ["WooCommerceStoreConnector"]


class WooCommerceStoreConnector:
    """One WooCommerce store, configured by a :class:`StoreConfig`."""

    version = "1"
    parser_version = "1"

    def __init__(self, config: StoreConfig, *, slug: str):
        self.config = config
        self.meta = config.meta(slug, platform="woocommerce")

    @classmethod
    def from_config(cls, data: Mapping[str, Any], *, slug: str) -> WooCommerceStoreConnector:
        """Validate a parsed config file (``ValidationError`` names the field)."""
        return cls(StoreConfig.model_validate(data), slug=slug)

    def _start(self, collection: str | None) -> PageRequest:
        params: dict[str, str | int] = {
            "per_page": self.config.page_size or WOO_MAX_PER_PAGE,
            "page": 1,
        }
        if collection:
            params["category"] = collection
        return PageRequest(f"{self.config.origin}{WOO_PRODUCTS_PATH}", params)

    def _record(self, product: Mapping[str, Any], result: FetchResult) -> RawRecordInput:
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

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        collections: tuple[str | None, ...] = self.config.collections or (None,)
        async for record in crawl_collections(
            ctx,
            collections=collections,
            start=self._start,
            extract=extract_woo_page,
            record=self._record,
            max_pages=self.config.max_pages,
        ):
            yield record

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

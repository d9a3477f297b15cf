"""``WooCommerceStoreConnector``: a WooCommerce Store API as a config-only connector.

Crawls ``/wp-json/wc/store/v1/products`` 100 products a page (``X-WP-TotalPages`` / ``Link``
and an empty page end it); one raw record per product. A ``variable`` product's own price is only
its cheapest variation's, so it yields no listing: each of its ``variations`` is fetched from
``/products/<id>`` right after it and stored as its own raw record (external id
``"<parent>:<id>"``); a variation gone by then (404/410) is logged and skipped.
In an incremental run a variation is fetched only when the budget store says it is due
(:meth:`CrawlContext.should_fetch`; skipped ones are counted), and then conditionally, so an
unchanged one is a cheap 304. ``variations = false`` in the config turns this off (a request
per variation adds up on a store with thousands of them). ``normalize()`` reads minor-unit
prices with the payload's own ``currency_minor_unit``. Configured ``collections`` are category
slugs.

The feed states its currency (``prices.currency_code``) and the feed wins: the listings keep it, and
a config ``currency`` that disagrees is one ``store.currency_disagreed`` warning per run (per feed
currency), which ``rareindex connectors check`` prints too.

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

from rareindex_connectors import ConnectorHealth, CrawlContext, FetchResult
from rareindex_connectors.errors import ParseError, ParseReason, PermanentFetchError
from rareindex_connectors.records import NormalizedRecord, RawRecord, RawRecordInput

from ..pagination import PageRequest
from ..woocommerce import (
    WOO_MAX_PER_PAGE,
    WOO_PRODUCTS_PATH,
    extract_woo_page,
    parse_woo_product,
    parse_woo_products,
    woo_variation_ids,
)
from ._common import StoreConnector, probe

__all__ = ["WooCommerceStoreConnector", "feed_currency"]


def feed_currency(product: object) -> str | None:
    """The currency a Store API product states (``prices.currency_code``), upper-cased; ``None``
    when it states none (``normalize()`` then refuses the product with ``missing_field``)."""
    prices = product.get("prices") if isinstance(product, Mapping) else None
    code = prices.get("currency_code") if isinstance(prices, Mapping) else None
    return code.strip().upper() if isinstance(code, str) and code.strip() else None


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
        parent = product.get("parent") if product.get("type") == "variation" else None
        return RawRecordInput(
            external_id=f"{parent}:{product['id']}" if parent else str(product["id"]),
            url=str(url),
            payload=dict(product),
            engine=result.engine,
            http_status=result.status,
        )

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        warned: set[str] = set()
        async for record in super().crawl(ctx):
            stated = feed_currency(record.payload)
            if stated is not None and stated != self.config.currency and stated not in warned:
                warned.add(stated)
                ctx.log.warning(
                    "store.currency_disagreed",
                    url=record.url,
                    configured=self.config.currency,
                    feed=stated,
                    kept=stated,
                )
            yield record

    def expand(
        self, product: Mapping[str, Any], ctx: CrawlContext
    ) -> AsyncIterator[RawRecordInput] | None:
        if not self.config.variations or not isinstance(product, Mapping):
            return None
        if product.get("type") != "variable":
            return None
        return self._variations(product, ctx)

    async def _variations(
        self, product: Mapping[str, Any], ctx: CrawlContext
    ) -> AsyncIterator[RawRecordInput]:
        """Each variation of a variable product, fetched by id (the list carries only ids)."""
        revisit = ctx.options.mode == "incremental"
        for child in woo_variation_ids(dict(product)):
            url = f"{self.config.origin}{WOO_PRODUCTS_PATH}/{child}"
            if revisit and not ctx.should_fetch(url):
                continue  # not due: the budget store expects it unchanged (counted as skipped)
            try:
                result = await ctx.fetch(url, expect="json", conditional=revisit)
            except PermanentFetchError as exc:
                if exc.status not in (404, 410):
                    raise
                ctx.log.warning(
                    "variation_gone", url=url, parent=product.get("id"), status=exc.status
                )
                continue
            if result.not_modified:
                continue  # a 304: as it was, nothing new to store
            variation = result.json()
            if not isinstance(variation, Mapping) or variation.get("id") != child:
                raise ParseError(
                    ParseReason.UNEXPECTED_SHAPE,
                    f"variation {child} as one product object",
                    snippet=repr(variation)[:200],
                )
            yield self.record(variation, result)

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        payload = raw.payload
        if isinstance(payload, dict) and payload.get("type") == "variation":
            page = parse_woo_product(payload, category=self.config.default_category)
        else:
            page = parse_woo_products([payload], category=self.config.default_category)
        return list(page.listings)

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        url = f"{self.config.origin}{WOO_PRODUCTS_PATH}?per_page=1&page=1"
        return await probe(ctx, url, extract_woo_page)

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        if not self.meta.matches_url(url):
            return []
        return []  # permalink pages carry no product id the Store API can be asked for

"""A Shopify store's market sub-folder (``base_url = "https://shop.example/en-eu"``), over real
sockets: the folder is kept on every request (feed pages, collections, product pages, lookups),
and the listings carry the market's prices."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import Engine

from rareindex.fetching import build_fetch_stack
from rareindex.settings import Settings
from rareindex.storage import BlobStore, RawRecordStore
from rareindex_adapters.stores import ShopifyStoreConnector
from rareindex_connectors import CrawlContext
from rareindex_connectors.records import Listing, RawRecordInput
from rareindex_fakeweb.sites.shopify_data import shop_data
from tests.integration.store_web import StoreWeb, crawl, serve_stores

SHOP = "cards-shop.fake.test"
MARKET = f"http://{SHOP}/en-eu"


@pytest.fixture(scope="module")
def stores() -> Iterator[tuple[StoreWeb, Settings]]:
    with serve_stores() as served:
        yield served


def _connector(base_url: str = MARKET, **more: object) -> ShopifyStoreConnector:
    config = {
        "source": "Cards Shop EU",
        "base_url": base_url,
        "currency": "EUR",
        "categories": ["tcg_card", "sports_card"],
        **more,
    }
    return cast(ShopifyStoreConnector, ShopifyStoreConnector.from_config(config, slug="cards-eu"))


def test_every_feed_request_keeps_the_market_folder_and_its_prices(
    stores: tuple[StoreWeb, Settings], sqlite_engine: Engine, tmp_path: Path
) -> None:
    web, settings = stores
    connector = _connector(collections=["pokemon", "graded"], page_size=100)
    mark = len(web.hits)
    summary = crawl(connector, sqlite_engine, settings, tmp_path)
    truth = shop_data(7)
    expected = len(truth.collections["pokemon"]) + len(truth.collections["graded"])
    assert (summary.status, summary.records + summary.dupes) == ("succeeded", expected)
    paths = {h.path for h in web.since(mark, SHOP)}
    assert paths == {
        "/en-eu/collections/pokemon/products.json",
        "/en-eu/collections/graded/products.json",
    }
    with sqlite_engine.connect() as conn:
        raws = RawRecordStore(BlobStore(tmp_path)).get_many(conn, summary.raw_ids[:20])
    usd = {str(p["id"]): p for p in truth.products}
    for raw in raws.values():
        assert raw.url.startswith(f"{MARKET}/products/")
        for listing in connector.normalize(raw):
            assert isinstance(listing, Listing) and listing.url.startswith(f"{MARKET}/products/")
            assert listing.price.currency == "EUR"
            variant = next(
                v
                for v in usd[raw.external_id]["variants"]
                if listing.external_id.endswith(str(v["id"]))
            )
            eur = (Decimal(variant["price"]) * Decimal("0.92")).quantize(Decimal("0.01"))
            assert listing.price.amount == eur  # the market's price, not the store's USD


def test_lookup_and_health_stay_in_the_market(stores: tuple[StoreWeb, Settings]) -> None:
    web, settings = stores
    product = shop_data(7).products[3]
    connector = _connector()

    async def go() -> tuple[list[RawRecordInput], list[RawRecordInput], str]:
        stack = build_fetch_stack(settings)
        try:
            ctx = CrawlContext("cards-eu", stack.router.fetcher(connector.meta.engines))
            found = await connector.lookup(f"{MARKET}/products/{product['handle']}", ctx)
            elsewhere = await connector.lookup(f"http://{SHOP}/products/{product['handle']}", ctx)
            return found, elsewhere, (await connector.health_check(ctx)).status
        finally:
            await stack.aclose()

    mark = len(web.hits)
    found, elsewhere, health = asyncio.run(go())
    assert [r.url for r in found] == [f"{MARKET}/products/{product['handle']}"]
    assert elsewhere == [] and health == "UP"  # the root store is another market's
    assert [h.path for h in web.since(mark, SHOP)] == [
        f"/en-eu/products/{product['handle']}.json",
        "/en-eu/products.json",
    ]


def test_without_a_market_folder_the_store_s_own_prices_are_kept(
    stores: tuple[StoreWeb, Settings], sqlite_engine: Engine, tmp_path: Path
) -> None:
    """The control: the same store at its root answers in USD, so the EUR above came from the
    folder and not from the connector's configured currency."""
    web, settings = stores
    connector = _connector(f"http://{SHOP}/", collections=["sealed"])
    mark = len(web.hits)
    summary = crawl(connector, sqlite_engine, settings, tmp_path)
    assert {h.path for h in web.since(mark, SHOP)} == {"/collections/sealed/products.json"}
    with sqlite_engine.connect() as conn:
        raw = next(
            iter(RawRecordStore(BlobStore(tmp_path)).get_many(conn, summary.raw_ids[:1]).values())
        )
    usd = {str(p["id"]): p for p in shop_data(7).products}[raw.external_id]
    assert raw.payload["variants"][0]["price"] == usd["variants"][0]["price"]  # type: ignore[index]
    assert raw.url == f"http://{SHOP}/products/{usd['handle']}"

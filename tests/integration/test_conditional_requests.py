"""Conditional requests in the shipped store connectors, over real sockets: the fake stores send
ETag / Last-Modified and answer 304; a re-run of an unchanged store is answered from 304s, a
changed product is still picked up, and WooCommerce variations are skipped when not due and
revalidated when due."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import Engine, select, update

from rareindex.settings import Settings
from rareindex.storage.schema import crawl_state, raw_records
from rareindex_adapters.stores import ShopifyStoreConnector, WooCommerceStoreConnector
from rareindex_fakeweb.sites.shopify import ShopifyStore
from rareindex_fakeweb.sites.shopify_data import shop_data
from rareindex_fakeweb.sites.woo import WooStore
from rareindex_fakeweb.sites.woo_data import COMICS_HOST, woo_data
from tests.integration.store_web import StoreWeb, crawl, serve_stores

SHOP = "cards-shop.fake.test"


@pytest.fixture(scope="module")
def stores() -> Iterator[tuple[StoreWeb, Settings]]:
    with serve_stores() as served:
        yield served


def _shop() -> ShopifyStoreConnector:
    config = {
        "source": "Cards Shop",
        "base_url": f"http://{SHOP}",
        "currency": "USD",
        "categories": ["tcg_card", "sports_card"],
        "page_size": 50,  # 656 products: 14 pages and the empty 15th
    }
    return cast(ShopifyStoreConnector, ShopifyStoreConnector.from_config(config, slug="cards-shop"))


def _comics(category: str) -> WooCommerceStoreConnector:
    config = {
        "source": "Comics Woo",
        "base_url": f"http://{COMICS_HOST}",
        "currency": "GBP",
        "categories": ["comic"],
        "collections": [category],  # one category, 20 a page: a few pages, fast
        "page_size": 20,
    }
    connector = WooCommerceStoreConnector.from_config(config, slug="comics-woo")
    return cast(WooCommerceStoreConnector, connector)


def _in(category: str) -> tuple[list[dict[str, Any]], set[str]]:
    """The category's products in feed order, and the external ids a crawl of it stores."""
    products = [
        p
        for p in woo_data(7, COMICS_HOST).products
        if any(c["slug"] == category for c in p["categories"])
    ]
    ids = {str(p["id"]) for p in products}
    ids |= {f"{p['id']}:{v['id']}" for p in products for v in p.get("variations") or []}
    return products, ids


def _stored(db: Engine) -> list[str]:
    with db.connect() as conn:
        return list(conn.execute(select(raw_records.c.external_id)).scalars())


def test_an_unchanged_shopify_store_is_answered_from_304s_and_a_change_is_picked_up(
    stores: tuple[StoreWeb, Settings], sqlite_engine: Engine, tmp_path: Path
) -> None:
    web, settings = stores
    first = crawl(_shop(), sqlite_engine, settings, tmp_path)
    assert (first.status, first.records, first.unchanged) == ("succeeded", 656, 0)

    mark = len(web.hits)
    again = crawl(_shop(), sqlite_engine, settings, tmp_path)
    pages = web.since(mark, SHOP, "/products.json")
    assert len(pages) == 15  # the same walk, to the empty page and no further
    assert all(h.if_none_match and h.if_modified_since for h in pages[:14])  # both validators
    not_modified = [h for h in pages if h.status == 304]
    assert len(not_modified) / len(pages) >= 0.9
    assert (again.status, again.records, again.dupes) == ("succeeded", 0, 0)
    assert again.unchanged == len(not_modified)  # counted in the run

    product = shop_data(7).products[120]  # on page 3 of 50
    store = cast(ShopifyStore, web.sites[SHOP])
    store.reprice(product["handle"], "12345.00", updated_at="2026-11-30T10:00:00-05:00")
    mark = len(web.hits)
    changed = crawl(_shop(), sqlite_engine, settings, tmp_path)
    pages = web.since(mark, SHOP, "/products.json")
    assert [h.query for h in pages if h.status == 200] == ["limit=50&page=3"]
    assert (changed.records, changed.dupes, changed.unchanged) == (1, 49, 14)
    assert _stored(sqlite_engine).count(str(product["id"])) == 2  # the new price, a new capture


def test_woocommerce_pages_and_variations_revalidate_and_skip(
    stores: tuple[StoreWeb, Settings], sqlite_engine: Engine, tmp_path: Path
) -> None:
    web, settings = stores
    products, ids = _in("dc")  # 80 products: 4 pages of 20
    first = crawl(_comics("dc"), sqlite_engine, settings, tmp_path)
    assert (first.status, first.records) == ("succeeded", len(ids))

    mark = len(web.hits)
    again = crawl(_comics("dc"), sqlite_engine, settings, tmp_path)
    requests = web.since(mark, COMICS_HOST)
    assert len(requests) == 4 and all(h.status == 304 for h in requests)  # the list pages only
    assert (again.records, again.dupes, again.unchanged) == (0, 0, 4)

    # A simple product changes on page 2: that page is read in full, and its variable
    # products' variations, not due yet, are skipped (counted) rather than fetched.
    page2 = products[20:40]
    simple = next(p for p in page2 if p["type"] == "simple")
    variable = next(p for p in page2 if p["type"] == "variable")
    store = cast(WooStore, web.sites[COMICS_HOST])
    store.reprice(simple["id"], 99_999)
    mark = len(web.hits)
    changed = crawl(_comics("dc"), sqlite_engine, settings, tmp_path)
    requests = web.since(mark, COMICS_HOST)
    assert [h.status for h in requests] == [304, 200, 304, 304]  # list pages only
    expected_skips = sum(len(p["variations"]) for p in page2 if p["type"] == "variable")
    assert changed.records == 1 and changed.skipped == expected_skips > 0
    assert changed.unchanged == 3

    # Once due, variations are revalidated: 304 for the unchanged ones, a full answer and a new
    # record for the one that changed.
    child = variable["variations"][0]["id"]
    store.reprice(child, 77_777)
    store.reprice(simple["id"], 88_888)  # page 2 changes again, so its variations are listed
    with sqlite_engine.begin() as conn:
        conn.execute(update(crawl_state).values(next_fetch_at=datetime.now(UTC) - timedelta(1)))
    mark = len(web.hits)
    due = crawl(_comics("dc"), sqlite_engine, settings, tmp_path)
    variations = [h for h in web.since(mark, COMICS_HOST) if h.path.rsplit("/", 1)[-1].isdigit()]
    assert len(variations) == expected_skips and all(h.if_none_match for h in variations)
    full = [h.path for h in variations if h.status == 200]
    assert full == [f"/wp-json/wc/store/v1/products/{child}"]
    assert due.records == 2 and due.skipped == 0  # the simple product and the variation
    assert f"{variable['id']}:{child}" in _stored(sqlite_engine)


def test_a_run_that_fails_mid_page_does_not_turn_the_page_into_a_304(
    stores: tuple[StoreWeb, Settings], sqlite_engine: Engine, tmp_path: Path
) -> None:
    """A variation of page 2 fails: the run commits what it yielded, with the cursor before
    page 2, and must not commit page 2's validators, or the next run would get a 304 for it
    and never store the rest of its products."""
    web, settings = stores
    products, ids = _in("image")  # 54 products: 3 pages of 20
    variable = next(p for p in products[20:40] if p["type"] == "variable")
    broken = f"/wp-json/wc/store/v1/products/{variable['variations'][0]['id']}"
    web.failing.add(broken)
    try:
        failed = crawl(_comics("image"), sqlite_engine, settings, tmp_path)
    finally:
        web.failing.discard(broken)
    assert (failed.status, failed.failure_reason) == ("failed", "transient")
    assert set(_stored(sqlite_engine)) < ids

    mark = len(web.hits)
    resumed = crawl(_comics("image"), sqlite_engine, settings, tmp_path)
    pages = [h for h in web.since(mark, COMICS_HOST) if h.path.endswith("/products")]
    assert "page=2" in pages[0].query.split("&") and pages[0].status == 200  # read in full
    assert resumed.status == "succeeded"
    assert set(_stored(sqlite_engine)) == ids

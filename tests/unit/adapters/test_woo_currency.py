"""A WooCommerce store whose config names another currency than its feed: the feed's
``currency_code`` wins, and the run says so once, as a warning."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from rareindex_adapters.stores import WooCommerceStoreConnector
from rareindex_adapters.stores.woocommerce import feed_currency
from rareindex_connectors import CrawlContext
from rareindex_connectors._context import FetchResult
from rareindex_connectors.records import Money, RawRecord, RawRecordInput, content_hash

FIXTURE = (
    Path(__file__).resolve().parents[3]
    / "fixtures"
    / "adapters"
    / "woocommerce"
    / "store_currency_eur.json"
)
ORIGIN = "https://muenzhaus.example"


def _connector(currency: str) -> WooCommerceStoreConnector:
    config = {
        "source": "Münzhaus",
        "base_url": ORIGIN,
        "currency": currency,
        "categories": ["coin"],
    }
    return WooCommerceStoreConnector.from_config(config, slug="muenzhaus")  # type: ignore[return-value]


def _crawl(connector: WooCommerceStoreConnector) -> list[RawRecordInput]:
    async def fetch(url: str, **kwargs: Any) -> FetchResult:
        body = FIXTURE.read_bytes() if kwargs["params"]["page"] == 1 else b"[]"
        return FetchResult(url, 200, body, "api")

    async def go() -> list[RawRecordInput]:
        ctx = CrawlContext(connector_id="muenzhaus", fetch=fetch)
        return [record async for record in connector.crawl(ctx)]

    return asyncio.run(go())


def _stored(record: RawRecordInput, index: int) -> RawRecord:
    return RawRecord(
        **record.model_dump(),
        id=f"raw_{index:06d}",
        connector_id="muenzhaus",
        content_hash=content_hash(record.payload, record.snapshot),
        connector_version="1",
        parser_version="1",
    )


def test_a_disagreeing_config_currency_is_a_warning_once_per_run() -> None:
    with capture_logs() as logs:
        records = _crawl(_connector("USD"))
    assert len(records) == 2
    warnings = [e for e in logs if e["event"] == "store.currency_disagreed"]
    assert len(warnings) == 1  # two EUR products, one warning
    assert warnings[0]["log_level"] == "warning"
    assert (warnings[0]["configured"], warnings[0]["feed"], warnings[0]["kept"]) == (
        "USD",
        "EUR",
        "EUR",
    )


def test_the_feed_currency_wins_in_the_listings() -> None:
    connector = _connector("USD")
    records = _crawl(connector)
    listings = [
        listing for i, r in enumerate(records) for listing in connector.normalize(_stored(r, i))
    ]
    assert [listing.price for listing in listings] == [  # type: ignore[attr-defined]
        Money(amount="529.00", currency="EUR"),
        Money(amount="1250.50", currency="EUR"),
    ]


def test_an_agreeing_config_currency_says_nothing() -> None:
    with capture_logs() as logs:
        _crawl(_connector("EUR"))
    assert not [e for e in logs if e["event"] == "store.currency_disagreed"]


def test_feed_currency_reads_prices_currency_code() -> None:
    products = json.loads(FIXTURE.read_text())
    assert feed_currency(products[0]) == "EUR"
    assert feed_currency({"prices": {"currency_code": " gbp "}}) == "GBP"
    assert feed_currency({"prices": {}}) is None
    assert feed_currency({"id": 1}) is None
    assert feed_currency([]) is None

"""The WooCommerce store connector fetches a variable product's variations by id; one gone by
then (404/410) is skipped, any other failure ends the crawl like a failed page."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from rareindex_adapters.stores import WooCommerceStoreConnector
from rareindex_connectors import CrawlContext
from rareindex_connectors._context import FetchResult
from rareindex_connectors.errors import ParseError, ParseReason, PermanentFetchError
from rareindex_connectors.records import RawRecordInput

ORIGIN = "https://comics.example"
API = f"{ORIGIN}/wp-json/wc/store/v1/products"


def _product(pid: int, **extra: Any) -> dict[str, Any]:
    base = {"id": pid, "name": f"Comic {pid}", "type": "simple", "permalink": f"{ORIGIN}/p/{pid}/"}
    return base | extra


def _connector(**keys: Any) -> WooCommerceStoreConnector:
    config = {"source": "Comics", "base_url": ORIGIN, "currency": "GBP", "categories": ["comic"]}
    return WooCommerceStoreConnector.from_config(config | keys, slug="comics")  # type: ignore[return-value]


def _crawl(
    pages: dict[str, Any], *, missing: dict[int, int] | None = None, **keys: Any
) -> list[RawRecordInput]:
    """Crawl a store whose list is ``pages['list']`` and whose products by id are the rest."""
    fetched: list[str] = []

    async def fetch(url: str, **kwargs: Any) -> FetchResult:
        fetched.append(f"{url} {kwargs.get('params')}")
        if url == API:
            page = kwargs["params"]["page"]
            body = pages["list"] if page == 1 else []
            return FetchResult(url, 200, json.dumps(body).encode(), "api")
        child = int(url.rsplit("/", 1)[1])
        if missing and child in missing:
            status = missing[child]
            raise PermanentFetchError(f"HTTP {status}", url=url, status=status)
        return FetchResult(url, 200, json.dumps(pages[str(child)]).encode(), "api")

    async def go() -> list[RawRecordInput]:
        ctx = CrawlContext(connector_id="comics", fetch=fetch)
        return [record async for record in _connector(**keys).crawl(ctx)]

    records = asyncio.run(go())
    assert len(fetched) == len(set(fetched))  # nothing fetched twice
    return records


STORE = {
    "list": [
        _product(10),
        _product(20, type="variable", variations=[{"id": 21}, {"id": 22}]),
        _product(30),
    ],
    "21": _product(21, type="variation", parent=20, variation="Condition: VF 8.0"),
    "22": _product(22, type="variation", parent=20, variation="Condition: FN 6.0"),
}


def test_variations_follow_their_parent_as_records_of_their_own() -> None:
    records = _crawl(STORE)
    assert [r.external_id for r in records] == ["10", "20", "20:21", "20:22", "30"]
    assert records[2].payload["variation"] == "Condition: VF 8.0"


def test_a_variation_gone_since_the_list_was_read_is_skipped() -> None:
    records = _crawl(STORE, missing={21: 404})
    assert [r.external_id for r in records] == ["10", "20", "20:22", "30"]


def test_any_other_refusal_of_a_variation_ends_the_crawl() -> None:
    with pytest.raises(PermanentFetchError, match="HTTP 403"):
        _crawl(STORE, missing={22: 403})


def test_a_store_configured_without_variations_fetches_none() -> None:
    records = _crawl(STORE, missing={21: 403, 22: 403}, variations=False)  # never asked for
    assert [r.external_id for r in records] == ["10", "20", "30"]


def test_variations_without_integer_ids_fail_the_page_like_the_adapter_does() -> None:
    broken = {"list": [_product(20, type="variable", variations=[{"id": "21"}])]}
    with pytest.raises(ParseError) as caught:
        _crawl(broken)
    assert (caught.value.reason, caught.value.field) == (ParseReason.INVALID_TYPE, "variations")

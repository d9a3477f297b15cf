"""WooCommerce Store API products → Listings: minor units, variations, headers paging."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from rareindex_adapters.pagination import PageNumber, PageRequest, paginate
from rareindex_adapters.storefront import NoteCode
from rareindex_adapters.woocommerce import (
    extract_woo_page,
    parse_woo_product,
    parse_woo_products,
    woo_next_page,
    woo_products_url,
)
from rareindex_connectors import FetchResult
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "adapters" / "woocommerce"
BASE = "https://cardsandcoins.example"


def _raw(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _json(name: str) -> Any:
    return json.loads(_raw(name))


def _headers(name: str) -> dict[str, str]:
    headers: dict[str, str] = _json(name)
    return headers


def _simple(**changes: Any) -> dict[str, Any]:
    product: dict[str, Any] = copy.deepcopy(_json("products_page1.json")[0])
    for key, value in changes.items():
        target, _, leaf = key.rpartition("__")
        obj = product[target] if target else product
        if value is ...:
            del obj[leaf]
        else:
            obj[leaf] = value
    return product


# --- the good page ------------------------------------------------------------------------------


def test_page_listings_notes_and_follow_up() -> None:
    page = parse_woo_products(_raw("products_page1.json"))
    assert [x.external_id for x in page.listings] == ["101", "102", "104", "105"]
    assert page.follow_up == ("201", "202")
    notes = [(n.external_id, n.code, n.field, n.value) for n in page.notes]
    assert notes == [
        ("200", NoteCode.VARIATIONS_PENDING, "[2].type", "201,202"),
        ("103", NoteCode.NO_PRICE, "[3].prices.price", None),
        ("105", NoteCode.INVALID_CHECK_DIGIT, "[5].sku", "012345678900"),
        ("105", NoteCode.TITLE_FLAG, "[5].name", "reprint"),
    ]


def test_minor_units_with_the_stated_unit() -> None:
    charizard, blastoise, watchmen, _ = parse_woo_products(_raw("products_page1.json")).listings
    assert charizard.price == Money(amount="1850.00", currency="GBP")
    assert watchmen.price == Money(amount="39.99", currency="GBP")
    assert blastoise.price == Money(amount="210.00", currency="GBP")
    assert blastoise.compare_at_price == Money(amount="245.00", currency="GBP")  # on sale
    assert charizard.compare_at_price is None  # regular == price


def test_fields_of_a_simple_product() -> None:
    charizard, blastoise, watchmen, mantle = parse_woo_products(
        _raw("products_page1.json")
    ).listings
    assert charizard.url == f"{BASE}/product/charizard-base-set-psa-9/"
    assert charizard.grading is not None
    assert (charizard.grading.grader, charizard.grading.grade) == ("PSA", "9")
    assert charizard.quantity == 1  # low_stock_remaining
    assert charizard.category == "tcg_card"  # "Pok&eacute;mon" unescaped
    assert charizard.identifiers.sku == "PKM-BS4-PSA9"
    assert blastoise.title == "Blastoise Base Set Holo 2/102 – Near Mint"  # &#8211; unescaped
    assert (blastoise.condition, blastoise.available) == ("NM", False)
    assert blastoise.identifiers.jan == "4521329239590"
    assert len(blastoise.image_urls) == 2
    assert watchmen.identifiers.isbn == "9780930289232"  # hyphens dropped from the ISBN
    assert watchmen.category == "comic"
    assert mantle.identifiers.upc is None and mantle.identifiers.sku == "012345678900"


def test_variation_fetched_by_id() -> None:
    page = parse_woo_product(_raw("variation_201.json"))
    (listing,) = page.listings
    assert listing.external_id == "200:201"
    assert listing.title == "1986 Fleer Michael Jordan #57 - Grade: PSA 8"
    assert listing.variant_title == "Grade: PSA 8"
    assert listing.grading is not None and listing.grading.grade == "8"
    assert listing.price == Money(amount="4500", currency="GBP")
    assert listing.category == "sports_card"


def test_store_with_minor_unit_three() -> None:
    herbert, eagle = parse_woo_products(_raw("store_minor_unit_3.json")).listings
    assert herbert.price == Money(amount="1105", currency="USD")  # "1105000" / 10**3
    assert str(herbert.price.amount) == "1105.00"
    assert eagle.price == Money(amount="24.125", currency="KWD")
    assert str(eagle.price.amount) == "24.125"


def test_default_category_only_when_categories_say_nothing() -> None:
    products = [_simple(categories=[]), _simple(id=9)]
    listings = parse_woo_products(products, category="coin").listings
    assert [x.category for x in listings] == ["coin", "tcg_card"]


def test_grouped_product_follows_up_its_children() -> None:
    grouped = _simple(type="grouped", grouped_products=[11, 12])
    page = parse_woo_products([grouped])
    assert (page.listings, page.follow_up) == ((), ("11", "12"))


# --- broken payloads ----------------------------------------------------------------------------

BROKEN = [
    ("broken_truncated.json", ParseReason.TRUNCATED, None),
    ("broken_not_a_list.json", ParseReason.UNEXPECTED_SHAPE, None),
    ("broken_missing_minor_unit.json", ParseReason.MISSING_FIELD, "[1].prices.currency_minor_unit"),
    ("broken_minor_unit_string.json", ParseReason.INVALID_TYPE, "[1].prices.currency_minor_unit"),
    ("broken_price_float.json", ParseReason.INVALID_TYPE, "[1].prices.price"),
    ("broken_price_decimal_string.json", ParseReason.INVALID_VALUE, "[1].prices.price"),
    ("broken_unknown_currency.json", ParseReason.UNKNOWN_CURRENCY, "[1].prices.currency_code"),
    ("broken_missing_in_stock.json", ParseReason.MISSING_FIELD, "[1].is_in_stock"),
    ("broken_missing_prices.json", ParseReason.MISSING_FIELD, "[1].prices"),
    ("broken_minor_unit_3_too_precise.json", ParseReason.AMOUNT_PRECISION, "[1].prices.price"),
]


@pytest.mark.parametrize(("name", "reason", "field"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_page_raises(name: str, reason: ParseReason, field: str | None) -> None:
    with pytest.raises(ParseError) as info:
        parse_woo_products(_raw(name))
    assert info.value.reason is reason
    assert info.value.field == field


def test_every_broken_fixture_is_tested() -> None:
    assert {p.name for p in FIXTURES.glob("broken_*.json")} == {b[0] for b in BROKEN}


@pytest.mark.parametrize(
    ("product", "reason", "field"),
    [
        (_simple(id="101"), ParseReason.INVALID_TYPE, "[0].id"),
        (_simple(name=...), ParseReason.MISSING_FIELD, "[0].name"),
        (_simple(is_in_stock="yes"), ParseReason.INVALID_TYPE, "[0].is_in_stock"),
        (
            _simple(prices__currency_minor_unit=True),
            ParseReason.INVALID_TYPE,
            "[0].prices.currency_minor_unit",
        ),
        (
            _simple(prices__currency_minor_unit=-1),
            ParseReason.INVALID_VALUE,
            "[0].prices.currency_minor_unit",
        ),
        (_simple(prices__currency_code=...), ParseReason.MISSING_FIELD, "[0].prices.currency_code"),
        (_simple(prices__price=...), ParseReason.MISSING_FIELD, "[0].prices.price"),
        (
            _simple(prices__regular_price="12,00"),
            ParseReason.INVALID_VALUE,
            "[0].prices.regular_price",
        ),
        (_simple(categories="pokemon"), ParseReason.INVALID_TYPE, "[0].categories"),
        (_simple(images=[{"id": 1}]), ParseReason.INVALID_TYPE, "[0].images"),
        (
            _simple(type="variable", variations=[{"attributes": []}]),
            ParseReason.INVALID_TYPE,
            "[0].variations",
        ),
        ("101", ParseReason.UNEXPECTED_SHAPE, "[0]"),
    ],
)
def test_bad_field_raises_with_its_path(product: Any, reason: ParseReason, field: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_woo_products([product])
    assert (info.value.reason, info.value.field) == (reason, field)


def test_single_product_paths_have_no_index() -> None:
    with pytest.raises(ParseError) as info:
        parse_woo_product(_simple(prices__currency_minor_unit=...))
    assert info.value.field == "prices.currency_minor_unit"
    with pytest.raises(ParseError) as info:
        parse_woo_product([_simple()])
    assert info.value.reason is ParseReason.UNEXPECTED_SHAPE


# --- paging -------------------------------------------------------------------------------------


def test_products_url() -> None:
    assert woo_products_url(BASE) == f"{BASE}/wp-json/wc/store/v1/products?per_page=100&page=1"
    assert woo_products_url(BASE + "/", 4, per_page=25).endswith("/products?per_page=25&page=4")
    for page, per_page in [(0, 10), (1, 0), (1, 101)]:
        with pytest.raises(ValueError, match="per_page"):
            woo_products_url(BASE, page, per_page=per_page)


@pytest.mark.parametrize(
    ("headers", "page", "expected"),
    [
        (_headers("products_page1.headers.json"), 1, 2),
        (_headers("products_page3.headers.json"), 3, None),  # total says done, Link has no next
        ({"X-WP-TotalPages": "3"}, 2, 3),
        ({"X-WP-TotalPages": "3"}, 3, None),
        ({"x-wp-totalpages": "3"}, 3, None),  # header names are case-insensitive
        ({"X-WP-TotalPages": "0"}, 1, None),  # no results at all
        ({"Link": '<https://s.example/p?page=5>; rel="next"'}, 4, 5),
        ({"Link": '<https://s.example/p?page=3>; rel="prev"'}, 4, None),
        # They disagree: whichever says "done" wins.
        ({"X-WP-TotalPages": "9", "Link": '<https://s.example/p?page=3>; rel="prev"'}, 4, None),
        ({"X-WP-TotalPages": "4", "Link": '<https://s.example/p?page=5>; rel="next"'}, 4, None),
        # No paging headers at all (a proxy stripped them): go on, the empty page ends it.
        ({}, 7, 8),
    ],
)
def test_next_page(headers: dict[str, str], page: int, expected: int | None) -> None:
    assert woo_next_page(headers, page) == expected


def test_next_page_refuses_a_garbled_total() -> None:
    with pytest.raises(ParseError) as info:
        woo_next_page({"X-WP-TotalPages": "three"}, 1)
    assert (info.value.reason, info.value.field) == (ParseReason.INVALID_VALUE, "X-WP-TotalPages")


def test_paginate_stops_at_total_pages() -> None:
    page1 = _json("products_page1.json")
    bodies = {n: json.dumps(page1[2 * (n - 1) : 2 * n]).encode() for n in (1, 2, 3)}
    asked: list[int] = []

    async def fetch(request: PageRequest) -> FetchResult:
        number = int(request.params["page"])
        asked.append(number)
        headers = {"X-WP-Total": "6", "X-WP-TotalPages": "3"}
        if number < 3:
            headers["Link"] = f'<{request.url}?page={number + 1}>; rel="next"'
        return FetchResult(request.url, 200, bodies[number], "api", headers)

    async def run() -> list[tuple[int, int | None]]:
        start = PageRequest(f"{BASE}/wp-json/wc/store/v1/products", {"per_page": 2})
        pages = paginate(
            fetch, start=start, strategy=PageNumber(), extract=extract_woo_page, max_pages=10
        )
        return [(len(p.items), p.total_pages) async for p in pages]

    with capture_logs() as logs:
        assert asyncio.run(run()) == [(2, 3), (2, 3), (2, 3)]
    assert asked == [1, 2, 3]
    assert [e["reason"] for e in logs] == ["total_reached"]  # page 3 is page 3 of 3

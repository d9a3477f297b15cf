"""Shopify products.json → one Listing per variant; malformed pages fail closed."""

from __future__ import annotations

import asyncio
import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from rareindex_adapters.pagination import PageNumber, PageRequest, paginate
from rareindex_adapters.shopify import (
    extract_shopify_page,
    parse_shopify_products,
    shopify_products_url,
)
from rareindex_adapters.storefront import FeedPage, NoteCode
from rareindex_connectors import FetchResult
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "adapters" / "shopify"
BASE = "https://kanto.example"


def _raw(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _page(payload: Any = None, **kwargs: Any) -> FeedPage:
    payload = _raw("products_page1.json") if payload is None else payload
    return parse_shopify_products(
        payload, base_url=kwargs.pop("base_url", BASE), currency="USD", **kwargs
    )


def _product(**changes: Any) -> dict[str, Any]:
    product: dict[str, Any] = copy.deepcopy(json.loads(_raw("products_page1.json"))["products"][0])
    product.update(changes)
    return product


def _variant(**changes: Any) -> dict[str, Any]:
    product = _product()
    product["variants"][0].update(changes)
    for key, value in changes.items():
        if value is ...:
            del product["variants"][0][key]
    return product


# --- the good page ------------------------------------------------------------------------------


def test_every_variant_becomes_a_listing() -> None:
    page = _page()
    assert [listing.external_id for listing in page.listings] == [
        "7781234501:42110000001",
        "7781234502:42110000011",
        "7781234502:42110000012",
        "7781234503:42110000021",
        "7781234504:42110000031",
        "7781234505:42110000041",
    ]
    assert page.follow_up == ()


def test_default_title_variant_keeps_the_product_title() -> None:
    first = _page().listings[0]
    assert first.title == "1999 Pokemon Base Set Charizard #4/102 Holo PSA 9 MINT"
    assert first.variant_title is None
    assert (
        first.url
        == f"{BASE}/products/1999-pokemon-base-set-charizard-4-102-holo-psa-9?variant=42110000001"
    )


def test_named_variant_joins_the_title_and_lifts_the_condition() -> None:
    nm, lp = _page().listings[1:3]
    assert nm.title == "1989 Upper Deck Ken Griffey Jr. #1 Rookie Card - Near Mint"
    assert (nm.variant_title, nm.condition, nm.grading) == ("Near Mint", "NM", None)
    assert (lp.variant_title, lp.condition) == ("Lightly Played", "LP")
    assert lp.available is False and nm.available is True


def test_prices_are_exact_money_in_the_store_currency() -> None:
    charizard, _, lp, _, coin, lot = _page().listings
    assert charizard.price == Money(amount="1850.00", currency="USD")
    assert charizard.compare_at_price == Money(amount="2100.00", currency="USD")
    assert lp.compare_at_price == Money(amount="99.00", currency="USD")
    assert coin.compare_at_price is None  # "0.00" means no compare-at price
    assert lot.price == Money(amount="45", currency="USD")
    assert str(lot.price.amount) == "45.00"


def test_grades_come_from_titles() -> None:
    gradings = [listing.grading for listing in _page().listings]
    assert [(g.grader, g.grade) if g else None for g in gradings] == [
        ("PSA", "9"),
        None,
        None,
        ("CGC", "9.8"),
        ("PCGS", "MS65"),
        None,
    ]


def test_categories_from_product_type_then_tags() -> None:
    categories = [listing.category for listing in _page().listings]
    # Pokemon type; Baseball tag (empty type); Comics type; Coins type; "Baseball Cards" type.
    assert categories == ["tcg_card", "sports_card", "sports_card", "comic", "coin", "sports_card"]


def test_product_type_wins_over_tags_and_the_default_is_last() -> None:
    coin_with_card_tags = _product(product_type="Coins", tags=["Baseball"])
    unmapped = _product(product_type="Misc", tags=["Sale"])
    page = _page({"products": [coin_with_card_tags, unmapped]}, category="toy")
    assert [listing.category for listing in page.listings] == ["coin", "toy"]


def test_conflicting_tags_map_to_nothing() -> None:
    product = _product(product_type="", tags="Pokemon, Baseball")  # a comma string, old themes
    assert _page({"products": [product]}).listings[0].category is None


def test_images_https_featured_first_deduplicated() -> None:
    listings = _page().listings
    assert listings[0].image_urls[0].startswith("https://cdn.shopify.com/")
    assert listings[1].image_urls == (
        "https://cdn.shopify.com/s/files/1/0550/files/griffey-nm.jpg",
        "https://cdn.shopify.com/s/files/1/0550/files/griffey-front.jpg",
        "https://cdn.shopify.com/s/files/1/0550/files/griffey-lp.jpg",
    )
    assert listings[2].image_urls[0].endswith("griffey-lp.jpg")  # its variant_ids image first


def test_listed_at_is_aware_published_at_and_vendor_is_seller() -> None:
    first = _page().listings[0]
    assert first.listed_at == datetime(2025, 3, 2, 15, 15, tzinfo=UTC)
    assert first.seller == "Kanto Vault"


def test_identifiers_and_notes() -> None:
    page = _page()
    griffey_nm, griffey_lp, comic, lot = (page.listings[i] for i in (1, 2, 3, 5))
    assert griffey_nm.identifiers.jan == "4521329239590"
    assert griffey_nm.identifiers.sku == "UD89-1-NM"
    assert comic.identifiers.upc == "07119601254200111"  # UPC-A + the 5-digit issue add-on
    assert lot.identifiers.ean == "4006381333931"
    assert griffey_lp.identifiers.upc is None  # bad check digit: left out...
    notes = {(n.external_id, n.code, n.field, n.value) for n in page.notes}
    assert notes == {  # ...and reported
        (
            "7781234502:42110000012",
            NoteCode.INVALID_CHECK_DIGIT,
            "products[1].variants[1].barcode",
            "012345678900",
        ),
        ("7781234505:42110000041", NoteCode.TITLE_FLAG, "products[4].variants[0].title", "lot"),
    }


def test_bytes_and_decoded_payloads_agree() -> None:
    assert _page(_raw("products_page1.json")) == _page(json.loads(_raw("products_page1.json")))


def test_base_url_trailing_slash() -> None:
    listing = _page(base_url="https://kanto.example/").listings[0]
    assert listing.url is not None and "example/products/" in listing.url
    assert "//products" not in listing.url


def test_empty_page_is_no_listings() -> None:
    assert _page(_raw("products_page2_empty.json")) == FeedPage(listings=())


def test_admin_style_variant_uses_stock() -> None:
    in_stock = _variant(available=..., inventory_quantity=3)
    oversold = _variant(available=..., inventory_quantity=-2)
    page = _page({"products": [in_stock, oversold]})
    assert [(x.available, x.quantity) for x in page.listings] == [(True, 3), (False, 0)]


def test_zero_decimal_store() -> None:
    product = _variant(price="1500", compare_at_price=None)
    page = parse_shopify_products({"products": [product]}, base_url=BASE, currency="JPY")
    assert page.listings[0].price == Money(amount=1500, currency="JPY")
    with pytest.raises(ParseError) as info:
        parse_shopify_products(
            {"products": [_variant(price="1500.50")]}, base_url=BASE, currency="JPY"
        )
    assert info.value.reason is ParseReason.AMOUNT_PRECISION


def test_unknown_store_currency_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="ISO-4217"):
        parse_shopify_products({"products": []}, base_url=BASE, currency="usdollars")


# --- broken pages fail closed -------------------------------------------------------------------

BROKEN = [
    ("broken_truncated.json", ParseReason.TRUNCATED, None),
    ("broken_not_an_object.json", ParseReason.UNEXPECTED_SHAPE, None),
    ("broken_no_products_key.json", ParseReason.MISSING_FIELD, "products"),
    ("broken_product_not_object.json", ParseReason.UNEXPECTED_SHAPE, "products[1]"),
    ("broken_no_variants.json", ParseReason.MISSING_FIELD, "products[1].variants"),
    ("broken_empty_variants.json", ParseReason.INVALID_VALUE, "products[1].variants"),
    ("broken_price_not_numeric.json", ParseReason.INVALID_VALUE, "products[1].variants[0].price"),
    ("broken_price_float.json", ParseReason.FLOAT_MONEY, "products[1].variants[0].price"),
    ("broken_naive_published_at.json", ParseReason.NAIVE_DATETIME, "products[1].published_at"),
    ("broken_variant_id_wrong_type.json", ParseReason.INVALID_TYPE, "products[1].variants[0].id"),
    (
        "broken_available_wrong_type.json",
        ParseReason.INVALID_TYPE,
        "products[1].variants[0].available",
    ),
]


@pytest.mark.parametrize(("name", "reason", "field"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_page_raises(name: str, reason: ParseReason, field: str | None) -> None:
    # Every broken fixture has a good product first: the page still fails as a whole.
    with pytest.raises(ParseError) as info:
        _page(_raw(name))
    assert info.value.reason is reason
    assert info.value.field == field


def test_every_broken_fixture_is_tested() -> None:
    on_disk = {p.name for p in FIXTURES.glob("broken_*.json")}
    assert on_disk == {name for name, *_ in BROKEN}


@pytest.mark.parametrize(
    ("product", "reason", "field"),
    [
        (_variant(price=...), ParseReason.MISSING_FIELD, "products[0].variants[0].price"),
        (_variant(available=...), ParseReason.MISSING_FIELD, "products[0].variants[0].available"),
        (_variant(id=True), ParseReason.INVALID_TYPE, "products[0].variants[0].id"),
        (
            _variant(compare_at_price="n/a"),
            ParseReason.INVALID_VALUE,
            "products[0].variants[0].compare_at_price",
        ),
        (_variant(price="-5.00"), ParseReason.INVALID_VALUE, "products[0].variants[0].price"),
        (_product(title="  "), ParseReason.MISSING_FIELD, "products[0].title"),
        (_product(handle=None), ParseReason.MISSING_FIELD, "products[0].handle"),
        (_product(images="front.jpg"), ParseReason.INVALID_TYPE, "products[0].images"),
        (
            _product(published_at="last tuesday"),
            ParseReason.INVALID_VALUE,
            "products[0].published_at",
        ),
    ],
)
def test_bad_field_raises_with_its_path(
    product: dict[str, Any], reason: ParseReason, field: str
) -> None:
    with pytest.raises(ParseError) as info:
        _page({"products": [product]})
    assert (info.value.reason, info.value.field) == (reason, field)


def test_products_list_of_wrong_type() -> None:
    with pytest.raises(ParseError) as info:
        _page({"products": {"0": {}}})
    assert (info.value.reason, info.value.field) == (ParseReason.INVALID_TYPE, "products")


# --- URLs and paging ----------------------------------------------------------------------------


def test_products_url() -> None:
    assert shopify_products_url(BASE) == f"{BASE}/products.json?limit=250&page=1"
    assert shopify_products_url(BASE + "/", 3, limit=50) == f"{BASE}/products.json?limit=50&page=3"
    assert shopify_products_url(BASE, 2, collection="psa 10") == (
        f"{BASE}/collections/psa%2010/products.json?limit=250&page=2"
    )


@pytest.mark.parametrize(("page", "limit"), [(0, 250), (1, 0), (1, 251)])
def test_products_url_bounds(page: int, limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        shopify_products_url(BASE, page, limit=limit)


def test_paginates_until_the_empty_page() -> None:
    bodies = {1: _raw("products_page1.json"), 2: _raw("products_page2_empty.json")}
    asked: list[int] = []

    async def fetch(request: PageRequest) -> FetchResult:
        number = int(request.params["page"])
        asked.append(number)
        return FetchResult(url=request.url, status=200, content=bodies[number], engine="api")

    async def run() -> list[int]:
        pages = paginate(
            fetch,
            start=PageRequest(f"{BASE}/products.json", {"limit": 250}),
            strategy=PageNumber(),
            extract=extract_shopify_page,
            max_pages=50,
        )
        return [len(page.items) async for page in pages]

    with capture_logs() as logs:
        assert asyncio.run(run()) == [5]
    assert asked == [1, 2]
    assert [(e["event"], e["reason"]) for e in logs] == [("pagination.stopped", "empty_page")]


def test_a_compare_at_price_not_higher_than_the_price_is_dropped() -> None:
    # Store admins leave compare-at prices equal to (or, after a price rise, below) the price on
    # variants that are not on sale: neither is a "was" price.
    equal, lower, higher = _page(_raw("compare_at_not_higher.json")).listings
    assert equal.price == Money(amount="54.99", currency="USD")
    assert equal.compare_at_price is None
    assert lower.price == Money(amount="529.00", currency="USD")
    assert lower.compare_at_price is None
    assert higher.compare_at_price == Money(amount="54.99", currency="USD")

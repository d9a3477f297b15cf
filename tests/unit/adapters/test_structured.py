"""Structured data: JSON-LD (repaired when broken), microdata only when needed, Open Graph last,
and products to Listings without floats."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from rareindex_adapters.embedded import MAX_HTML_BYTES
from rareindex_adapters.structured import (
    PriceRange,
    extract_structured,
    listings_from_products,
    read_products,
)
from rareindex_connectors._money import Money
from rareindex_connectors.errors import ParseError, ParseReason

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "adapters" / "structured"
PAGE = "https://shop.example/p"


def _page(name: str) -> str:
    return (FIXTURES / name).read_text()


def _listings(name: str, **kwargs: Any) -> list[Any]:
    data = extract_structured(_page(name))
    return listings_from_products(data.products, url=PAGE, **kwargs)


@pytest.fixture
def no_extruct(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fails the test if the slow microdata parser runs (the adapter catches its errors, so a
    raising stub alone would go unnoticed)."""
    import extruct  # the adapter imports it where it needs it: the same module object

    calls: list[object] = []
    monkeypatch.setattr(extruct, "extract", lambda *a, **k: calls.append(a))
    yield
    assert calls == [], "extruct ran on a page that did not need it"


@pytest.mark.usefixtures("no_extruct")
def test_jsonld_product_to_listing() -> None:
    data = extract_structured(_page("product_jsonld.html"))

    assert data.source == "json-ld"
    assert [p["sku"] for p in data.products] == ["CV-FLEER57-PSA8"]  # isRelatedTo not a product
    assert [n["@type"] for n in data.jsonld] == ["BreadcrumbList", "Product"]
    assert data.products[0]["offers"]["price"] == Decimal("8750.00")  # never a float
    (listing,) = listings_from_products(data.products, url=PAGE)
    assert listing.external_id == "CV-FLEER57-PSA8"
    assert listing.title == "1986 Fleer Michael Jordan #57 PSA 8 & Sticker"
    assert listing.price == Money(amount="8750.00", currency="USD")
    assert listing.url == "https://cardvault.example/products/fleer-57-psa-8"
    assert (listing.available, listing.condition, listing.seller) == (True, "used", "CardVault")
    assert listing.identifiers.sku == "CV-FLEER57-PSA8"
    assert listing.identifiers.ean == "0012345678905"
    assert listing.image_urls == (
        "https://shop.example/img/fleer-57-front.jpg",
        "https://cdn.cardvault.example/fleer-57-back.jpg",
    )


@pytest.mark.usefixtures("no_extruct")
def test_microdata_is_not_parsed_when_jsonld_has_the_product() -> None:
    data = extract_structured(_page("jsonld_and_microdata.html"))

    assert data.source == "json-ld"
    assert [p["sku"] for p in data.products] == ["ASM300-98"]


def test_open_graph_is_kept_but_does_not_add_a_second_product() -> None:
    data = extract_structured(_page("product_jsonld.html"))

    assert data.opengraph["product:price:amount"] == "9999.00"
    assert len(listings_from_products(data.products, url=PAGE)) == 1


@pytest.mark.usefixtures("no_extruct")
def test_aggregate_offer_with_offers_gives_one_listing_each() -> None:
    listings = _listings("aggregate_offer.html")

    assert [(x.external_id, str(x.price), x.available, x.variant_title) for x in listings] == [
        ("D280-PSA10", "USD 1250.00", True, "PSA 10"),
        ("D280-PSA9", "USD 310.00", False, "PSA 9"),
        ("#raw-offer", "USD 95.00", True, "Raw"),  # an @id reference, resolved in the @graph
    ]
    assert listings[0].url == "https://shop.example/p/doncic-280?grade=psa10"
    assert listings[1].url == "https://shop.example/p/doncic-280"
    assert {x.title for x in listings} == {"2018 Panini Prizm Luka Doncic #280"}


def test_aggregate_offer_alone_is_a_price_range_never_a_listing() -> None:
    data = extract_structured(_page("aggregate_offer_low_price_only.html"))

    found = read_products(data.products, url=PAGE)

    assert (found.listings, found.rejected) == ((), ())
    assert found.ranges == (
        PriceRange(
            external_id=PAGE,  # nothing else identifies it
            title="Morgan Silver Dollar 1881-S MS65",
            url=PAGE,
            low=Money(amount="189.50", currency="USD"),
            high=Money(amount="260.00", currency="USD"),
            offer_count=7,
        ),
    )
    with pytest.raises(ParseError) as caught:  # the strict form has no price to give
        listings_from_products(data.products, url=PAGE)
    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE
    assert "price range" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "microdata_offers_and_aggregate.html",
            [
                ("KC-BS-004-PSA8", "USD 1850.00", "PSA 8"),
                ("KC-BS-004-RAW", "USD 420.00", "Raw, LP"),
            ],
        ),
        (
            "jsonld_offers_and_aggregate.html",
            [
                ("HV-86F-57-BGS85", "USD 7995.00", "BGS 8.5"),
                ("HV-86F-57-PSA7", "USD 4250.00", "PSA 7"),
            ],
        ),
    ],
)
def test_an_aggregate_offer_beside_offers_is_their_summary_not_a_listing(
    name: str, expected: list[tuple[str, str, str]]
) -> None:
    data = extract_structured(_page(name), base_url=PAGE)

    found = read_products(data.products, url=PAGE)

    assert [(x.external_id, str(x.price), x.variant_title) for x in found.listings] == expected
    assert (found.ranges, found.rejected) == ((), ())
    assert listings_from_products(data.products, url=PAGE) == list(found.listings)


def test_microdata_summary_beside_offers_keeps_the_offers_fields() -> None:
    data = extract_structured(_page("microdata_offers_and_aggregate.html"), base_url=PAGE)
    psa8, raw = read_products(data.products, url=PAGE).listings

    assert data.source == "microdata"
    assert psa8.url == "https://shop.example/products/bs-004?variant=psa8"
    assert (psa8.condition, psa8.identifiers.ean) == ("used", "0820650101230")
    assert raw.available is True  # LimitedAvailability is for sale


def test_an_offer_without_a_price_is_rejected_alone_and_the_page_still_reads() -> None:
    data = extract_structured(_page("offer_without_price.html"))

    found = read_products(data.products, url=PAGE)

    assert [(x.external_id, str(x.price)) for x in found.listings] == [
        ("PV-ASM300-98", "USD 4999.00"),
        ("PV-ASM300-94", "USD 1150.00"),
        ("PV-ASM301", "USD 189.00"),
    ]
    assert [(r.reason, r.where, r.field, r.snippet) for r in found.rejected] == [
        (
            ParseReason.MISSING_FIELD,
            "products[0]",
            "products[0].offers[1].price",
            "Amazing Spider-Man #300 (1988)",
        ),
        (
            ParseReason.MISSING_FIELD,
            "products[1]",
            "products[1].offers[0].price",
            "Amazing Spider-Man #300 Newsstand (1988)",
        ),
    ]
    with pytest.raises(ParseError) as caught:  # the strict form still fails closed
        listings_from_products(data.products, url=PAGE)
    assert caught.value.field == "products[0].offers[1].price"


@pytest.mark.parametrize(
    ("offer", "reason", "field"),
    [
        ({"highPrice": "9.00", "priceCurrency": "USD"}, ParseReason.MISSING_FIELD, "lowPrice"),
        (
            {"lowPrice": "9.00", "highPrice": "5.00", "priceCurrency": "USD"},
            ParseReason.INVALID_VALUE,
            "highPrice",
        ),
        ({"lowPrice": "9.00"}, ParseReason.UNKNOWN_CURRENCY, "lowPrice"),
    ],
)
def test_an_unusable_price_range_is_rejected(
    offer: dict[str, Any], reason: ParseReason, field: str
) -> None:
    product = {"@type": "Product", "name": "Card", "offers": {"@type": "AggregateOffer", **offer}}

    found = read_products([product], url=PAGE)

    assert (found.listings, found.ranges) == ((), ())
    assert [(r.reason, r.field) for r in found.rejected] == [
        (reason, f"products[0].offers[0].{field}")
    ]


def test_a_product_without_name_or_offers_is_rejected_and_the_next_reads() -> None:
    products = [
        {"@type": "Product", "offers": {"price": "1.00", "priceCurrency": "USD"}},
        {"@type": "Product", "name": "No offers"},
        {"@type": "Product", "name": "Fine", "offers": {"price": "2.00", "priceCurrency": "USD"}},
    ]

    found = read_products(products, url=PAGE)

    assert [x.title for x in found.listings] == ["Fine"]
    assert [r.field for r in found.rejected] == ["products[0].name", "products[1].offers"]


def test_a_product_stated_twice_under_one_id_is_one_product() -> None:
    page = """
    <script type="Application/LD+JSON">
      {"@type": "Product", "@id": "#p", "name": "Card", "offers": {"price": "1.00"}}
    </script>
    <script type="application/ld+json">
      {"@type": "ItemPage", "mainEntity":
        {"@type": "Product", "@id": "#p", "name": "Card", "offers": {"price": "1.00"}}}
    </script>
    <script type="application/ld+json">
      [{"@type": "Product", "name": "No id A", "offers": {"price": "2.00"}},
       {"@type": "Product", "name": "No id B", "offers": {"price": "3.00"}}]
    </script>"""

    data = extract_structured(page)

    assert [p["name"] for p in data.products] == ["Card", "No id A", "No id B"]


def test_product_group_variants_are_products() -> None:
    listings = _listings("product_group.html")

    assert [(x.external_id, str(x.price)) for x in listings] == [
        ("BB-CHAR", "USD 650.00"),
        ("BB-BLAS", "USD 590.00"),
    ]


@pytest.mark.usefixtures("no_extruct")
def test_trailing_commas_and_comments_are_repaired() -> None:
    data = extract_structured(_page("broken_trailing_commas_and_comments.html"))
    (listing,) = listings_from_products(data.products, url=PAGE)

    assert data.rejected == []
    assert listing.price == Money(amount="4200.00", currency="EUR")
    # "//" inside a string is not a comment.
    assert listing.url == "https://tcg.example/p/charizard-4?ref=//home"
    assert listing.title == "Pokémon Base Set Charizard #4 CGC 9"


def test_json_escaped_as_html_entities_is_unescaped() -> None:
    (listing,) = _listings("broken_html_entities.html")

    assert (listing.external_id, str(listing.price)) == ("SPAWN-1", "USD 129.99")


def test_several_objects_wrappers_raw_newlines_and_printed_prices() -> None:
    data = extract_structured(_page("broken_several_objects.html"))
    listings = listings_from_products(data.products, url=PAGE)

    assert [n["@type"] for n in data.jsonld] == ["Organization", "Product", "Product"]
    assert data.products[0]["description"] == ("Line one\nline two, a raw newline inside a string")
    assert [(x.external_id, x.price) for x in listings] == [
        ("LC-1909SVDB", Money(amount="2450.00", currency="EUR")),  # "2.450,00 €"
        ("MD-1916D", Money(amount="1250.00", currency="CHF")),  # "CHF 1'250.00"
    ]


def test_an_unrepairable_block_is_rejected_and_the_others_still_read() -> None:
    data = extract_structured(_page("broken_unrepairable.html"))

    assert [p["name"] for p in data.products] == ["Fine card"]
    (rejected,) = data.rejected
    assert rejected.reason is ParseReason.INVALID_JSON
    assert rejected.where == "ld+json script 1"
    assert rejected.snippet is not None and "Truncated card" in rejected.snippet


def test_microdata_is_read_when_there_is_no_jsonld() -> None:
    data = extract_structured(_page("microdata.html"), base_url=PAGE)
    (listing,) = listings_from_products(data.products, url=PAGE)

    assert data.source == "microdata"
    assert listing.title == "Swiss Vreneli 20 Francs 1935 L-B MS64"
    assert listing.price == Money(amount="1250.00", currency="CHF")
    assert (listing.external_id, listing.condition) == ("VR-1935-LB", "new")
    assert listing.image_urls == ("https://shop.example/img/vreneli-1935.jpg",)


def test_open_graph_is_the_last_resort() -> None:
    data = extract_structured(_page("opengraph_only.html"))
    (listing,) = listings_from_products(data.products, url=PAGE)

    assert data.source == "opengraph"
    assert listing.external_id == "HW-BB-1969"
    assert listing.price == Money(amount="175000.00", currency="USD")
    assert listing.available is False  # "out of stock"
    assert listing.url == "https://toys.example/products/beach-bomb"


@pytest.mark.usefixtures("no_extruct")
def test_a_page_without_structured_data() -> None:
    data = extract_structured(_page("no_structured_data.html"))

    assert (data.products, data.source, data.rejected) == ([], None, [])
    assert data.opengraph == {"og:title": "About us"}
    assert listings_from_products(data.products, url=PAGE) == []


def _product(**offer: Any) -> dict[str, Any]:
    return {"@type": "Product", "name": "Card", "offers": {"@type": "Offer", **offer}}


@pytest.mark.parametrize(
    ("offer", "default", "expected"),
    [
        ({"price": Decimal("19.99"), "priceCurrency": "usd"}, None, "USD 19.99"),
        ({"price": 20, "priceCurrency": "JPY"}, None, "JPY 20"),
        ({"price": "1.250", "priceCurrency": "USD"}, None, "USD 1.25"),  # schema.org's "."
        ({"price": "$5.00"}, "CAD", "CAD 5.00"),
        ({"price": "€5,00"}, "USD", "EUR 5.00"),  # the symbol beats the default
        ({"price": "7.00"}, "GBP", "GBP 7.00"),
        ({"priceSpecification": [{"price": "3.50", "priceCurrency": "EUR"}]}, None, "EUR 3.50"),
    ],
)
def test_price_forms(offer: dict[str, Any], default: str | None, expected: str) -> None:
    (listing,) = listings_from_products([_product(**offer)], url=PAGE, default_currency=default)

    assert str(listing.price) == expected


@pytest.mark.parametrize(
    ("product", "reason", "field"),
    [
        ({"@type": "Product", "offers": {"price": "1"}}, ParseReason.MISSING_FIELD, "name"),
        ({"@type": "Product", "name": "Card"}, ParseReason.MISSING_FIELD, "offers"),
        (_product(priceCurrency="USD"), ParseReason.MISSING_FIELD, "offers[0].price"),
        (_product(price="5.00"), ParseReason.UNKNOWN_CURRENCY, "offers[0].price"),
        (_product(price="$5.00"), ParseReason.UNKNOWN_CURRENCY, "offers[0].price"),
        (_product(price=5.5, priceCurrency="USD"), ParseReason.FLOAT_MONEY, "offers[0].price"),
        (
            _product(price="£5", priceCurrency="USD"),
            ParseReason.CURRENCY_MISMATCH,
            "offers[0].price",
        ),
        (
            _product(price="1.999", priceCurrency="JPY"),
            ParseReason.AMOUNT_PRECISION,
            "offers[0].price",
        ),
        (_product(price="free", priceCurrency="USD"), ParseReason.INVALID_VALUE, "offers[0].price"),
        (_product(price="5", priceCurrency="XYZ"), ParseReason.UNKNOWN_CURRENCY, "offers[0].price"),
    ],
)
def test_unusable_offers_fail_closed_naming_the_field(
    product: dict[str, Any], reason: ParseReason, field: str
) -> None:
    with pytest.raises(ParseError) as caught:
        listings_from_products([product], url=PAGE)

    assert caught.value.reason is reason
    assert caught.value.field == f"products[0].{field}"


def test_several_offers_without_ids_get_numbered_ids() -> None:
    product = {
        "@type": "Product",
        "name": "Card",
        "sku": "C-1",
        "offers": [
            {"price": "1.00", "priceCurrency": "USD"},
            {"price": "2.00", "priceCurrency": "USD"},
        ],
    }

    listings = listings_from_products([product], url=PAGE)

    assert [x.external_id for x in listings] == ["C-1#offer-1", "C-1#offer-2"]


def test_oversized_pages_are_refused() -> None:
    with pytest.raises(ParseError) as caught:
        extract_structured("<html>" + " " * MAX_HTML_BYTES)

    assert caught.value.reason is ParseReason.TOO_LARGE

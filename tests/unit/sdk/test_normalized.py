"""Normalized records: the seven kinds, parse_normalized's closed-vocabulary errors, invariants."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import (
    AuctionLot,
    CatalogItem,
    Grading,
    Identifiers,
    Listing,
    Money,
    NewsItem,
    PopulationReport,
    PriceObservation,
    Sale,
    parse_normalized,
)

# One realistic record of each kind (docs/domain.md: grade scales, observations).
SALE: dict[str, Any] = {
    "kind": "sale",
    "external_id": "ebay-325871234567",
    "title": "2018 Panini Prizm Luka Doncic #280 RC PSA 10 GEM MINT",
    "url": "https://www.ebay.com/itm/325871234567",
    "category": "sports_card",
    "identifiers": {"cert_number": "48123456", "collector_number": "280"},
    "grading": {"grader": "PSA", "grade": "10", "label_type": "standard"},
    "image_urls": ["https://i.ebayimg.com/images/g/abc/s-l1600.jpg"],
    "price": {"amount": "1250.00", "currency": "USD"},
    "shipping": {"amount": "5.99", "currency": "usd"},
    "sale_type": "auction",
    "price_basis": "sold_price",
    "price_visibility": "exact",
    "sold_at": "2026-11-01T18:00:00Z",
    "is_lot": False,
    "flags": ["rookie"],
}
LISTING: dict[str, Any] = {
    "kind": "listing",
    "external_id": "shopify-8123456789-44012345",
    "title": "Pokemon Japanese Base Set Charizard No. 006 Holo",
    "url": "https://cardshop.example.jp/products/charizard-006",
    "category": "tcg_card",
    "identifiers": {"sku": "PKM-JP-BASE-006", "set_code": "BASE", "collector_number": "006"},
    "condition": "NM",
    "price": {"amount": "158000", "currency": "JPY"},
    "compare_at_price": {"amount": 180000, "currency": "JPY"},
    "available": True,
    "quantity": 1,
    "listed_at": "2026-10-28T09:00:00+09:00",
    "seller": "cardshop.example.jp",
    "variant_title": "NM",
}
AUCTION_LOT: dict[str, Any] = {
    "kind": "auction_lot",
    "external_id": "ha-1363-3012",
    "title": "1884 Morgan Dollar MS65 PCGS",
    "category": "coin",
    "identifiers": {"pcgs_number": "7585", "cert_number": "05893056"},
    "grading": {"grader": "PCGS", "grade": "MS65"},
    "auction_id": "1363",
    "auction_title": "Long Beach Expo US Coins Signature Auction",
    "lot_number": "3012",
    "status": "sold",
    "hammer_price": {"amount": "10000", "currency": "USD"},
    "buyer_premium_rate": "0.20",
    "price_realised": {"amount": "12000.00", "currency": "USD"},
    "estimate_low": {"amount": "8000", "currency": "USD"},
    "estimate_high": {"amount": "11000", "currency": "USD"},
    "closes_at": datetime(2026, 9, 5, 22, 0, tzinfo=UTC),
}
PRICE_OBSERVATION: dict[str, Any] = {
    "kind": "price_observation",
    "external_id": "pc-amazing-spider-man-300-cgc-9.8",
    "title": "Amazing Spider-Man #300 CGC 9.8",
    "category": "comic",
    "identifiers": {"upc": "75960608936800111"},
    "grading": {"grader": "CGC", "grade": "9.8", "label_type": "Universal"},
    "price": {"amount": "4350.00", "currency": "USD"},
    "basis": "guide",
    "observed_at": "2026-11-02T00:00:00+00:00",
}
CATALOG_ITEM: dict[str, Any] = {
    "kind": "catalog_item",
    "external_id": "tcdb-1986-fleer-57",
    "title": "1986-87 Fleer Michael Jordan #57",
    "category": "sports_card",
    "year": 1986,
    "brand": "Fleer",
    "set_name": "1986-87 Fleer Basketball",
    "number": "57",
    "subject": "Michael Jordan",
    "language": "en",
}
POPULATION_REPORT: dict[str, Any] = {
    "kind": "population_report",
    "external_id": "psa-spec-1158012",
    "grader": "PSA",
    "title": "1986 Fleer Michael Jordan #57",
    "category": "sports_card",
    "counts": {"10": 325, "9": 2210, "8.5": 120, "8": 4410, "AUTH": 85},
    "total": 7150,
    "as_of": "2026-11-01T00:00:00Z",
    "url": "https://www.psacard.com/pop/basketball-cards/1986/fleer/57",
}
NEWS_ITEM: dict[str, Any] = {
    "kind": "news_item",
    "external_id": "https://news.example/psa-grading-fees-2026",
    "title": "PSA adjusts grading fees for the 2026 season",
    "url": "https://news.example/psa-grading-fees-2026",
    "published_at": "2026-10-15T14:30:00-04:00",
    "summary": "Value tier turnaround changes announced.",
    "author": "Staff",
    "categories": ["grading", "psa"],
}

RECORDS: dict[str, tuple[dict[str, Any], type]] = {
    "sale": (SALE, Sale),
    "listing": (LISTING, Listing),
    "auction_lot": (AUCTION_LOT, AuctionLot),
    "price_observation": (PRICE_OBSERVATION, PriceObservation),
    "catalog_item": (CATALOG_ITEM, CatalogItem),
    "population_report": (POPULATION_REPORT, PopulationReport),
    "news_item": (NEWS_ITEM, NewsItem),
}
KINDS = sorted(RECORDS)


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(base)
    data.update(changes)
    return data


def _without(base: dict[str, Any], key: str) -> dict[str, Any]:
    data = copy.deepcopy(base)
    del data[key]
    return data


def _parse_error(data: Any) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_normalized(data)
    return info.value


# --- the seven kinds --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_parses_to_its_model(kind: str) -> None:
    data, model = RECORDS[kind]
    record = parse_normalized(copy.deepcopy(data))
    assert type(record) is model
    assert record.kind == kind
    assert record.external_id == data["external_id"]


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_through_model_dump(kind: str) -> None:
    record = parse_normalized(copy.deepcopy(RECORDS[kind][0]))
    assert parse_normalized(record.model_dump()) == record


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_through_json(kind: str) -> None:
    # What the index stores is JSON: Decimal amounts must survive as exact strings.
    record = parse_normalized(copy.deepcopy(RECORDS[kind][0]))
    assert parse_normalized(json.loads(record.model_dump_json())) == record


@pytest.mark.parametrize("kind", KINDS)
def test_a_model_instance_is_accepted(kind: str) -> None:
    record = parse_normalized(copy.deepcopy(RECORDS[kind][0]))
    assert parse_normalized(record) == record


def test_sale_values_are_exact_and_normalized() -> None:
    sale = parse_normalized(copy.deepcopy(SALE))
    assert isinstance(sale, Sale)
    assert sale.price == Money(amount=Decimal("1250.00"), currency="USD")
    assert sale.shipping == Money(amount="5.99", currency="USD")
    assert sale.sold_at == datetime(2026, 11, 1, 18, 0, tzinfo=UTC)
    assert sale.grading == Grading(grader="PSA", grade="10", label_type="standard")
    assert sale.flags == ("rookie",)


def test_sale_defaults() -> None:
    minimal = {
        "kind": "sale",
        "external_id": "ebay-1",
        "title": "2018 Prizm Luka Doncic #280 PSA 10",
        "price": {"amount": "1250", "currency": "USD"},
        "sale_type": "best_offer",
        "sold_at": "2026-11-01T18:00:00Z",
    }
    sale = parse_normalized(minimal)
    assert isinstance(sale, Sale)
    assert sale.price_basis == "sold_price"
    assert sale.price_visibility == "exact"
    assert sale.is_lot is False
    assert sale.shipping is None
    assert sale.identifiers == Identifiers()


def test_listing_keeps_the_offset_of_an_aware_datetime() -> None:
    listing = parse_normalized(copy.deepcopy(LISTING))
    assert isinstance(listing, Listing)
    assert listing.listed_at is not None
    assert listing.listed_at.utcoffset() == timedelta(hours=9)
    assert listing.listed_at == datetime(2026, 10, 28, 0, 0, tzinfo=UTC)
    assert str(listing.price.amount) == "158000"


def test_auction_lot_keeps_hammer_rate_and_realised_apart() -> None:
    lot = parse_normalized(copy.deepcopy(AUCTION_LOT))
    assert isinstance(lot, AuctionLot)
    assert lot.hammer_price == Money(amount="10000", currency="USD")
    assert lot.buyer_premium_rate == Decimal("0.20")
    assert lot.price_realised == Money(amount="12000", currency="USD")


@pytest.mark.parametrize("status", ["upcoming", "open", "passed", "withdrawn"])
def test_unsold_lot_needs_no_price(status: str) -> None:
    data = _with(AUCTION_LOT, status=status)
    for key in ("hammer_price", "price_realised", "buyer_premium_rate"):
        del data[key]
    assert parse_normalized(data).status == status


@pytest.mark.parametrize("keep", ["hammer_price", "price_realised"])
def test_sold_lot_with_one_price_is_enough(keep: str) -> None:
    drop = "price_realised" if keep == "hammer_price" else "hammer_price"
    lot = parse_normalized(_without(AUCTION_LOT, drop))
    assert getattr(lot, keep) is not None
    assert getattr(lot, drop) is None


def test_records_are_frozen() -> None:
    sale = parse_normalized(copy.deepcopy(SALE))
    with pytest.raises(ValueError, match="frozen"):
        sale.title = "changed"  # type: ignore[misc]


# --- the rejection matrix ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason", "field"),
    [
        pytest.param(
            _with(SALE, price={"amount": 1250.0, "currency": "USD"}),
            ParseReason.FLOAT_MONEY,
            "price.amount",
            id="float-price",
        ),
        pytest.param(
            _with(SALE, shipping={"amount": 5.99, "currency": "USD"}),
            ParseReason.FLOAT_MONEY,
            "shipping.amount",
            id="float-shipping",
        ),
        pytest.param(
            _with(SALE, sold_at="2026-11-01T18:00:00"),
            ParseReason.NAIVE_DATETIME,
            "sold_at",
            id="naive-datetime-string",
        ),
        pytest.param(
            _with(SALE, sold_at=datetime(2026, 11, 1, 18, 0)),  # naive on purpose
            ParseReason.NAIVE_DATETIME,
            "sold_at",
            id="naive-datetime-object",
        ),
        pytest.param(
            _with(SALE, price={"amount": "1250", "currency": "XYZ"}),
            ParseReason.UNKNOWN_CURRENCY,
            "price.currency",
            id="unknown-currency",
        ),
        pytest.param(
            _with(SALE, kind="trade"),
            ParseReason.UNKNOWN_KIND,
            "kind",
            id="unknown-kind",
        ),
        pytest.param(
            _without(SALE, "kind"),
            ParseReason.MISSING_FIELD,
            "kind",
            id="missing-kind",
        ),
        pytest.param(
            _with(SALE, seller="cardhoarder99"),
            ParseReason.UNEXPECTED_FIELD,
            "seller",
            id="unexpected-field",
        ),
        pytest.param(
            _with(SALE, grading={"grader": "PSA", "grade": "10", "subgrades": [10, 10]}),
            ParseReason.UNEXPECTED_FIELD,
            "grading.subgrades",
            id="unexpected-nested-field",
        ),
        pytest.param(
            _without(SALE, "sold_at"),
            ParseReason.MISSING_FIELD,
            "sold_at",
            id="missing-field",
        ),
        pytest.param(
            _with(SALE, price={"amount": "12.50", "currency": "USD", "fx": "1"}),
            ParseReason.UNEXPECTED_FIELD,
            "price.fx",
            id="unexpected-money-field",
        ),
        pytest.param(
            _with(SALE, sale_type="raffle"),
            ParseReason.INVALID_VALUE,
            "sale_type",
            id="unknown-sale-type",
        ),
        pytest.param(
            _with(SALE, grading={"grader": "XYZ", "grade": "10"}),
            ParseReason.INVALID_VALUE,
            "grading.grader",
            id="unknown-grader",
        ),
        pytest.param(
            _with(SALE, price="1250.00"),
            ParseReason.UNEXPECTED_SHAPE,
            "price",
            id="price-not-an-object",
        ),
        pytest.param(
            _with(SALE, sold_at="last tuesday"),
            ParseReason.INVALID_TYPE,
            "sold_at",
            id="unparseable-datetime",
        ),
        pytest.param(
            _with(LISTING, listed_at="2026-10-28T09:00:00"),
            ParseReason.NAIVE_DATETIME,
            "listed_at",
            id="listing-naive-listed-at",
        ),
        pytest.param(
            _with(LISTING, quantity=-1),
            ParseReason.INVALID_VALUE,
            "quantity",
            id="negative-quantity",
        ),
        pytest.param(
            _with(AUCTION_LOT, buyer_premium_rate=0.2),
            ParseReason.FLOAT_MONEY,
            "buyer_premium_rate",
            id="float-premium-rate",
        ),
        pytest.param(
            _with(AUCTION_LOT, buyer_premium_rate="1.5"),
            ParseReason.INVALID_VALUE,
            "buyer_premium_rate",
            id="premium-rate-over-one",
        ),
        pytest.param(
            _with(PRICE_OBSERVATION, observed_at=datetime(2026, 11, 2)),  # naive on purpose
            ParseReason.NAIVE_DATETIME,
            "observed_at",
            id="observation-naive",
        ),
        pytest.param(
            _with(CATALOG_ITEM, year=1700),
            ParseReason.INVALID_VALUE,
            "year",
            id="catalog-year-out-of-range",
        ),
        pytest.param(
            _with(POPULATION_REPORT, as_of="2026-11-01"),
            ParseReason.NAIVE_DATETIME,
            "as_of",
            id="population-date-only",
        ),
        pytest.param(
            _with(NEWS_ITEM, published_at="2026-10-15T14:30:00"),
            ParseReason.NAIVE_DATETIME,
            "published_at",
            id="news-naive",
        ),
        pytest.param(
            _without(NEWS_ITEM, "url"),
            ParseReason.MISSING_FIELD,
            "url",
            id="news-without-url",
        ),
    ],
)
def test_rejection_names_reason_and_field(data: Any, reason: ParseReason, field: str) -> None:
    error = _parse_error(data)
    assert error.reason is reason
    assert error.field == field
    assert str(error).startswith(f"{reason.value} at {field}: ")


def test_huge_amount_is_a_parse_error() -> None:
    error = _parse_error(_with(SALE, price={"amount": "1e30", "currency": "USD"}))
    assert error.field is not None
    assert error.field.startswith("price")


@pytest.mark.parametrize("data", [None, "sale", 42, ["kind", "sale"]])
def test_not_a_mapping_is_unexpected_shape(data: Any) -> None:
    error = _parse_error(data)
    assert error.reason is ParseReason.UNEXPECTED_SHAPE
    assert error.field is None


def test_unknown_kind_message_lists_the_kinds() -> None:
    error = _parse_error(_with(SALE, kind="trade"))
    for kind in KINDS:
        assert f"'{kind}'" in str(error)


@pytest.mark.parametrize(
    ("base", "changes"),
    [
        pytest.param(SALE, {"shipping": {"amount": "5.99", "currency": "EUR"}}, id="sale-shipping"),
        pytest.param(
            SALE, {"buyer_premium": {"amount": "250", "currency": "GBP"}}, id="sale-premium"
        ),
        pytest.param(
            LISTING,
            {"compare_at_price": {"amount": "1200", "currency": "USD"}},
            id="listing-compare-at",
        ),
        pytest.param(
            AUCTION_LOT,
            {"estimate_high": {"amount": "11000", "currency": "EUR"}},
            id="lot-estimate",
        ),
        pytest.param(
            AUCTION_LOT,
            {"price_realised": {"amount": "12000", "currency": "CAD"}},
            id="lot-realised",
        ),
    ],
)
def test_currency_mismatch_within_a_record(base: dict[str, Any], changes: dict[str, Any]) -> None:
    error = _parse_error(_with(base, **changes))
    assert error.reason is ParseReason.CURRENCY_MISMATCH


def test_sold_lot_without_prices_is_missing_field() -> None:
    data = _without(_without(AUCTION_LOT, "hammer_price"), "price_realised")
    error = _parse_error(data)
    assert error.reason is ParseReason.MISSING_FIELD
    assert "sold lot" in str(error)


@pytest.mark.parametrize(
    ("counts", "total"),
    [
        pytest.param({"10": 325, "9": 2210}, 2534, id="one-over"),
        pytest.param({"10": 1}, 0, id="zero-total"),
        pytest.param({"10": 5, "9": -1}, 10, id="negative-count"),
    ],
)
def test_population_counts_must_fit_total(counts: dict[str, int], total: int) -> None:
    error = _parse_error(_with(POPULATION_REPORT, counts=counts, total=total))
    assert error.reason is ParseReason.INVALID_VALUE


def test_population_counts_may_equal_total() -> None:
    report = parse_normalized(_with(POPULATION_REPORT, counts={"10": 325, "9": 2210}, total=2535))
    assert isinstance(report, PopulationReport)
    assert sum(report.counts.values()) == report.total


# --- identifiers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("upc", "012345678905"),  # UPC-A, 12 digits
        ("upc", "75960608936800111"),  # comic UPC + 5-digit add-on (issue, cover, printing)
        ("ean", "4006381333931"),
        ("jan", "4901234567894"),
        ("jan", "4512345678901"),
        ("isbn", "080442957X"),
        ("isbn", "9780306406157"),
    ],
)
def test_identifier_patterns_accept(field: str, value: str) -> None:
    assert getattr(Identifiers(**{field: value}), field) == value


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("upc", "01234567890"),  # 11 digits
        ("upc", "0123456789012"),  # 13 digits: an EAN, not a UPC
        ("upc", "01234567890A"),
        ("upc", "012345678905\n"),
        ("ean", "400638133393"),
        ("jan", "4006381333931"),  # an EAN that is not a Japanese 45/49 prefix
        ("isbn", "03064061X5"),
    ],
)
def test_identifier_patterns_refuse(field: str, value: str) -> None:
    error = _parse_error(_with(SALE, identifiers={field: value}))
    assert error.reason is ParseReason.INVALID_VALUE
    assert error.field == f"identifiers.{field}"


@pytest.mark.parametrize(
    ("field", "value"),
    [("ean", "４５０１２３４５６７８９０"), ("upc", "٠١٢٣٤٥٦٧٨٩٠٥")],
)
def test_identifier_patterns_refuse_non_ascii_digits(field: str, value: str) -> None:
    error = _parse_error(_with(SALE, identifiers={field: value}))
    assert error.field == f"identifiers.{field}"


# --- snippet ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(_with(SALE, title="PSA 10 " * 400), id="long-title"),
        pytest.param(_with(SALE, kind="trade", flags=["x" * 50] * 20), id="whole-record-snippet"),
        pytest.param(_with(SALE, notes="L@@K " * 100), id="long-extra-field"),
    ],
)
def test_snippet_is_at_most_200_chars(data: dict[str, Any]) -> None:
    error = _parse_error(data)
    assert error.snippet is not None
    assert 0 < len(error.snippet) <= 200


def test_snippet_shows_the_offending_value() -> None:
    error = _parse_error(_with(SALE, price={"amount": "1250", "currency": "XYZ"}))
    assert error.snippet is not None
    assert "XYZ" in error.snippet


# --- timezone handling ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sold_at",
    [
        "2026-11-01T18:00:00Z",
        "2026-11-01T13:00:00-05:00",
        datetime(2026, 11, 2, 3, 0, tzinfo=timezone(timedelta(hours=9))),
    ],
)
def test_aware_datetimes_compare_as_instants(sold_at: str | datetime) -> None:
    sale = parse_normalized(_with(SALE, sold_at=sold_at))
    assert isinstance(sale, Sale)
    assert sale.sold_at == datetime(2026, 11, 1, 18, 0, tzinfo=UTC)

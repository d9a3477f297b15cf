"""Rules before statistics: a record's fields and title flag lots, reprints, customs, redemptions,
sealed product, doubtful grades and hidden prices; only some of them keep it out of the index."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from rareindex.quality import EXCLUDING_FLAGS, QualityFlag, excluded_from_index, rule_flags
from rareindex_adapters import TitleFlag
from rareindex_connectors.records import (
    AuctionLot,
    CatalogItem,
    Listing,
    Money,
    NewsItem,
    PriceObservation,
    Sale,
)

T0 = datetime(2026, 11, 1, 18, 0, tzinfo=UTC)
CLEAN = "2018 Prizm Luka Doncic #280 PSA 10"


def _sale(title: str = CLEAN, **fields: Any) -> Sale:
    values: dict[str, Any] = {
        "external_id": "ebay-1",
        "title": title,
        "price": Money(amount="1250.00", currency="USD"),
        "sale_type": "auction",
        "sold_at": T0,
    }
    return Sale(**(values | fields))


def test_a_clean_graded_sale_has_no_flags() -> None:
    assert rule_flags(_sale()) == ()
    assert not excluded_from_index(rule_flags(_sale()))


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Lot of 3 Luka Doncic Prizm RC", ("lot",)),
        ("1986 Fleer Jordan #57 REPRINT RP", ("reprint",)),
        ("Custom ACEO Shohei Ohtani art card", ("custom",)),
        ("2021 Topps Chrome Wander Franco Auto Redemption", ("redemption",)),
        ("2023 Bowman Chrome Hobby Box Factory Sealed", ("sealed",)),
        ("NOT PSA 10 Charizard raw NM", ("negated_grade",)),
        ("Charizard Base Set 4/102 PSA 10 candidate NM", ("speculative_grade",)),
        ("PSA 10 and BGS 9.5 Jordan two cards", ("multiple_grades",)),
        # Title flags that are no quality flags: an offer-friendly ask is not a hidden sale price.
        ("2018 Prizm Luka Doncic #280 PSA 10 OBO", ()),
        # An auction lot number is not a lot of several items.
        ("Lot #245: 2018 Prizm Luka Doncic #280 PSA 10", ()),
    ],
)
def test_title_flags_map_onto_the_quality_vocabulary(title: str, expected: tuple[str, ...]) -> None:
    assert rule_flags(_sale(title)) == expected


def test_flags_come_in_enum_order_without_repeats() -> None:
    sale = _sale("Lot of 3 PSA 10? Booster Box sealed custom", is_lot=True, flags=("lot",))
    assert rule_flags(sale) == ("lot", "custom", "sealed", "speculative_grade")


def test_is_lot_and_connector_flags_count_even_when_the_title_is_clean() -> None:
    assert rule_flags(_sale(is_lot=True)) == ("lot",)
    stated = _sale(flags=("reprint", "not_a_quality_flag", "invalid_grade"))
    assert rule_flags(stated) == ("reprint",)


@pytest.mark.parametrize(
    "fields",
    [{"price_visibility": "hidden"}, {"sale_type": "best_offer"}],
    ids=["hidden", "best_offer"],
)
def test_a_sale_without_a_known_price_is_hidden_and_excluded(fields: dict[str, Any]) -> None:
    flags = rule_flags(_sale(**fields))
    assert flags == ("hidden_price",)
    assert excluded_from_index(flags)


def test_other_priced_records_are_read_by_title() -> None:
    money = Money(amount="10", currency="USD")
    listing = Listing(external_id="l1", title="Booster Bundle Pokemon 151", price=money)
    lot = AuctionLot(
        external_id="h1",
        title="Lot of 2 1986 Fleer Jordan REPRINT",
        auction_id="a1",
        lot_number="245",
        status="sold",
        hammer_price=money,
    )
    guide = PriceObservation(external_id="g1", title=CLEAN, price=money, observed_at=T0)
    assert rule_flags(listing) == ("sealed",)
    assert rule_flags(lot) == ("lot", "reprint")
    assert rule_flags(guide) == ()


def test_records_without_a_price_get_no_flags() -> None:
    catalog = CatalogItem(external_id="c1", title="Booster Box sealed reprint", category="tcg_card")
    news = NewsItem(
        external_id="n1", title="Lot of reprints", url="https://x.test/", published_at=T0
    )
    assert rule_flags(catalog) == ()
    assert rule_flags(news) == ()


def test_exclusion_covers_exactly_the_price_breaking_flags() -> None:
    assert {str(f) for f in EXCLUDING_FLAGS} == {
        "lot",
        "reprint",
        "custom",
        "redemption",
        "sealed",
        "hidden_price",
    }
    for flag in QualityFlag:
        assert excluded_from_index([flag.value]) is (flag in EXCLUDING_FLAGS)
    assert not excluded_from_index(["negated_grade", "speculative_grade", "multiple_grades"])
    assert not excluded_from_index([])


def test_every_quality_flag_read_from_titles_is_a_title_flag() -> None:
    # The vocabulary shares its names with the SDK's title reader; a rename there must show here.
    title_values = {flag.value for flag in TitleFlag}
    assert {flag.value for flag in QualityFlag} - title_values == {"hidden_price"}

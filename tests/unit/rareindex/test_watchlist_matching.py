"""matching_watchlists: every subject kind (asset, variant, category, title query) and every
price condition (below, above, a band, a move), events without the values a condition needs, and
the checks a new watchlist passes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from rareindex.errors import InvalidWatchlist
from rareindex.watchlists import Watchlist, event_move_pct, matching_watchlists


def wl(id_: str, **kwargs: Any) -> Watchlist:
    return Watchlist(id=id_, principal="token:alice", name=id_, **kwargs)


def event(**payload: Any) -> dict[str, Any]:
    return {
        "cursor": 7,
        "type": "sale.recorded",
        "stream": "asset:ast_1",
        "category": "tcg_card",
        "asset_id": "ast_1",
        "variant_id": "var_1",
        "connector_id": "card-market",
        "payload": {"title": "1999 Pokémon Base Set CHARIZARD 4/102 Holo PSA 9", **payload},
        "created_at": "2026-12-01T12:00:00+00:00",
    }


def test_each_subject_kind_matches_and_a_miss_does_not() -> None:
    lists = [
        wl("by_asset", asset_ids=("ast_1",)),
        wl("by_variant", variant_ids=("var_1",)),
        wl("by_category", categories=("tcg_card",)),
        wl("by_title", title_query="charizard base"),
        wl("by_accents", title_query="pokemon"),
        wl("other_asset", asset_ids=("ast_2",)),
        wl("other_variant", variant_ids=("var_2",)),
        wl("other_category", categories=("coin",)),
        wl("title_missing_a_word", title_query="charizard shadowless"),
    ]
    assert matching_watchlists(event(), lists) == [
        "by_asset",
        "by_variant",
        "by_category",
        "by_title",
        "by_accents",
    ]


def test_any_named_subject_is_enough() -> None:
    both = wl("w", asset_ids=("ast_9",), categories=("tcg_card",))
    assert matching_watchlists(event(), [both]) == ["w"]


def test_below_and_above_compare_in_the_watchlist_currency() -> None:
    cheap = wl("cheap", asset_ids=("ast_1",), below=Decimal("100"), currency="USD")
    dear = wl("dear", asset_ids=("ast_1",), above=Decimal("100"), currency="USD")
    band = wl(
        "band", asset_ids=("ast_1",), above=Decimal("50"), below=Decimal("150"), currency="USD"
    )
    lists = [cheap, dear, band]
    assert matching_watchlists(event(price="99.99", currency="USD"), lists) == ["cheap", "band"]
    assert matching_watchlists(event(price=250, currency="USD"), lists) == ["dear"]
    assert matching_watchlists(event(price="100", currency="USD"), lists) == ["band"]  # strict
    assert matching_watchlists(event(price="10", currency="usd"), lists) == ["cheap"]
    assert matching_watchlists(event(price="10", currency="EUR"), lists) == []  # other currency
    assert matching_watchlists(event(), lists) == []  # no price: no price condition holds
    assert matching_watchlists(event(price="n/a", currency="USD"), lists) == []


def test_a_listing_price_change_is_priced_at_its_new_price() -> None:
    cheap = wl("cheap", categories=("tcg_card",), below=Decimal("80"), currency="USD")
    changed = event(old="100", new="70", ratio="0.7", currency="USD")
    assert matching_watchlists(changed, [cheap]) == ["cheap"]


def test_a_move_of_more_than_x_percent_either_way() -> None:
    moved = wl("moved", categories=("tcg_card",), move_pct=Decimal("20"))
    assert matching_watchlists(event(old="100", new="70", currency="USD"), [moved]) == ["moved"]
    assert matching_watchlists(event(old="100", new="125", currency="USD"), [moved]) == ["moved"]
    assert matching_watchlists(event(ratio="1.5"), [moved]) == ["moved"]  # ratio wins
    assert matching_watchlists(event(old="100", new="120"), [moved]) == []  # exactly 20 %: no
    assert matching_watchlists(event(old="100", new="110"), [moved]) == []
    assert matching_watchlists(event(price="70", currency="USD"), [moved]) == []  # not a move
    assert matching_watchlists(event(old="0", new="10"), [moved]) == []  # no old price
    assert event_move_pct(event(old="80", new="100")) == Decimal("25")


def test_price_conditions_and_a_move_together() -> None:
    both = wl(
        "drop_below_80",
        asset_ids=("ast_1",),
        below=Decimal("80"),
        currency="USD",
        move_pct=Decimal("10"),
    )
    assert matching_watchlists(event(old="100", new="70", currency="USD"), [both]) == [
        "drop_below_80"
    ]
    assert matching_watchlists(event(old="75", new="79", currency="USD"), [both]) == []
    assert matching_watchlists(event(old="100", new="85", currency="USD"), [both]) == []


def test_an_event_without_a_payload_or_ids_matches_only_what_it_names() -> None:
    bare = {"cursor": 1, "type": "connector.health_changed", "connector_id": "x", "payload": None}
    lists = [wl("a", asset_ids=("ast_1",)), wl("t", title_query="charizard")]
    assert matching_watchlists(bare, lists) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "at least one"),
        ({"categories": ["coin"], "below": Decimal("-1")}, "positive"),
        ({"categories": ["coin"], "move_pct": Decimal("NaN")}, "positive"),
        ({"categories": ["coin"], "above": Decimal(5), "below": Decimal(5)}, "band"),
        ({"categories": ["coin"], "below": Decimal(5), "currency": "DOLLAR"}, "3-letter"),
        ({"asset_ids": [f"ast_{i}" for i in range(501)]}, "at most 500"),
    ],
)
def test_a_watchlist_that_cannot_work_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidWatchlist, match=message):
        Watchlist.create("token:alice", "w", **kwargs)


def test_a_value_without_a_currency_is_in_dollars() -> None:
    w = Watchlist.create("token:alice", "w", categories=["coin"], below=Decimal("5"))
    assert (w.currency, w.below) == ("USD", Decimal("5"))
    assert Watchlist.create("token:a", "w", categories=["coin"]).currency is None


def test_an_auction_result_is_priced_at_its_price_realised_else_its_hammer() -> None:
    cheap = wl("cheap", categories=("tcg_card",), below=Decimal("500"), currency="USD")
    realised = event(price_realised="550.00", hammer_price="480.00", currency="USD")
    assert matching_watchlists(realised, [cheap]) == []  # 550 realised, though hammered at 480
    assert matching_watchlists(event(hammer_price="480.00", currency="USD"), [cheap]) == ["cheap"]

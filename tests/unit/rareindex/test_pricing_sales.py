"""Which sales enter the index: flagged and anomalous ones never do, auctions at realised."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from rareindex.pricing import SaleRecord, priced_sales
from rareindex.pricing.sales import exclusion_reason

WHEN = datetime(2026, 3, 2, tzinfo=UTC)


def record(**changes: object) -> SaleRecord:
    base: dict[str, object] = {
        "sale_id": "sal_1",
        "variant_id": "var_1",
        "asset_id": "ast_1",
        "category": "sports",
        "sold_at": WHEN,
        "sale_type": "fixed",
        "price_basis": "sold_price",
        "price": Decimal("100.00"),
        "currency": "USD",
        "price_usd": Decimal("100.00"),
    }
    base.update(changes)
    return SaleRecord(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"variant_id": None}, "unresolved"),
        ({"is_lot": True}, "lot"),
        ({"flags": ("lot",)}, "lot"),
        ({"price_visibility": "hidden", "sale_type": "best_offer"}, "hidden_price"),
        ({"flags": ("reprint",)}, "flagged"),
        ({"anomaly_reason": "modified_z"}, "anomaly"),
        ({"price_basis": "hammer", "sale_type": "auction_house"}, "hammer_without_premium"),
        ({"currency": "GBP", "price_usd": None}, "no_fx_rate"),
        ({}, None),
    ],
)
def test_each_exclusion_has_its_reason(changes: dict[str, object], reason: str | None) -> None:
    assert exclusion_reason(record(**changes)) == reason


def test_flagged_and_anomalous_sales_are_counted_out_never_priced() -> None:
    kept, dropped = priced_sales(
        [
            record(sale_id="sal_ok"),
            record(sale_id="sal_outlier", anomaly_reason="tukey", price=Decimal("9000")),
            record(sale_id="sal_reprint", flags=("reprint",), price=Decimal("5")),
        ]
    )
    assert [s.sale_id for s in kept] == ["sal_ok"]
    assert dropped == {"anomaly": 1, "flagged": 1}


def test_an_auction_enters_at_hammer_plus_buyers_premium_like_a_fixed_price_sale() -> None:
    kept, _ = priced_sales(
        [
            record(
                sale_id="sal_rate",
                price_basis="hammer",
                sale_type="auction_house",
                price=Decimal("1000"),
                price_usd=Decimal("1000"),
                premium_rate=Decimal("0.20"),
            ),
            record(
                sale_id="sal_premium",
                price_basis="hammer",
                sale_type="auction_house",
                price=Decimal("1000"),
                price_usd=Decimal("1000"),
                buyer_premium=Decimal("195"),
            ),
            record(sale_id="sal_realised", price_basis="realized_incl_bp", price=Decimal("1200")),
        ]
    )
    by_id = {s.sale_id: s for s in kept}
    assert by_id["sal_rate"].price_usd == pytest.approx(1200)
    assert by_id["sal_premium"].price == Decimal("1195")
    assert by_id["sal_realised"].price_usd == pytest.approx(1200)


def test_a_foreign_sale_is_priced_in_usd_at_the_views_rate_and_keeps_its_own_currency() -> None:
    (kept,), _ = priced_sales(
        [record(currency="GBP", price=Decimal("79.00"), price_usd=Decimal("100.00"))]
    )
    assert kept.currency == "GBP" and kept.price == Decimal("79.00")
    assert kept.price_usd == pytest.approx(100.0)

"""The per-variant estimate: a time-decayed weighted median with a prediction interval."""

from __future__ import annotations

import math
import random
from datetime import timedelta

import pytest

from rareindex.pricing import EstimateParams, estimate_variant
from rareindex.pricing.estimates import confidence_label, weighted_median
from tests.pricing_helpers import MONDAY, sale


def test_weighted_median_follows_the_weights() -> None:
    assert weighted_median([1.0, 2.0, 3.0], [1, 1, 1]) == 2.0
    assert weighted_median([1.0, 2.0, 3.0], [0.1, 0.1, 5]) == 3.0
    assert weighted_median([1.0, 2.0], [1, 1]) == 1.5


def test_one_wild_sale_does_not_move_the_estimate() -> None:
    sales = [sale("v", MONDAY + timedelta(days=d), 100.0, n=d) for d in range(9)]
    sales.append(sale("v", MONDAY + timedelta(days=9), 10_000.0, n=9))
    est = estimate_variant(sales, as_of=MONDAY + timedelta(days=10))
    assert est is not None
    assert est.value_usd == pytest.approx(100.0)
    assert est.n_sales == 10
    assert (est.first_sale, est.last_sale) == (MONDAY.date(), (MONDAY + timedelta(days=9)).date())


def test_recent_sales_weigh_more_than_old_ones() -> None:
    old = [sale("v", MONDAY + timedelta(days=d), 100.0, n=d) for d in range(5)]
    new = [sale("v", MONDAY + timedelta(days=360 + d), 200.0, n=d) for d in range(3)]
    est = estimate_variant(old + new, as_of=MONDAY + timedelta(days=365))
    assert est is not None and est.value_usd == pytest.approx(200.0)


def test_sales_are_projected_along_the_category_index() -> None:
    # the category doubled since the sales: ln I(as_of) - ln I(t) = ln 2
    sales = [sale("v", MONDAY + timedelta(days=d), 100.0, n=d) for d in range(5)]
    as_of = MONDAY + timedelta(days=30)
    est = estimate_variant(
        sales, as_of=as_of, drift=lambda when: math.log(2) if when >= as_of else 0.0
    )
    assert est is not None and est.value_usd == pytest.approx(200.0)


def test_the_interval_covers_about_its_nominal_share_of_later_sales() -> None:
    rng = random.Random(3)
    hits = total = 0
    for v in range(300):
        history = [
            sale(f"v{v}", MONDAY + timedelta(days=d), 100 * math.exp(rng.gauss(0, 0.2)), n=d)
            for d in range(8)
        ]
        est = estimate_variant(history, as_of=MONDAY + timedelta(days=8))
        assert est is not None
        for _ in range(5):
            later = 100 * math.exp(rng.gauss(0, 0.2))
            hits += est.low_usd <= later <= est.high_usd
            total += 1
    assert 0.74 <= hits / total <= 0.88  # nominal 0.80


def test_the_sale_currency_value_uses_the_newest_rate_of_that_currency() -> None:
    sales = [
        sale("v", MONDAY, 100.0, currency="GBP", local=80.0),
        sale("v", MONDAY + timedelta(days=1), 100.0, currency="GBP", local=79.0, n=1),
        sale("v", MONDAY + timedelta(days=2), 100.0, n=2),
    ]
    est = estimate_variant(sales, as_of=MONDAY + timedelta(days=3))
    assert est is not None
    assert est.currency == "GBP"
    assert float(est.value) == pytest.approx(79.0)


def test_no_sale_on_or_before_the_date_is_no_estimate() -> None:
    assert estimate_variant([sale("v", MONDAY, 1.0)], as_of=MONDAY - timedelta(days=1)) is None


@pytest.mark.parametrize(
    ("n", "days", "sd", "label"),
    [(8, 30, 0.2, "high"), (8, 31, 0.2, "medium"), (3, 90, 0.4, "medium"), (2, 1, 0.1, "low")],
)
def test_confidence_comes_from_count_recency_and_dispersion(
    n: int, days: int, sd: float, label: str
) -> None:
    assert confidence_label(n, days, sd) == label


def test_few_sales_get_a_wider_interval_than_many() -> None:
    params = EstimateParams()
    few = [sale("v", MONDAY + timedelta(days=d), 100.0 + d, n=d) for d in range(2)]
    many = [sale("v", MONDAY + timedelta(days=d), 100.0 + d % 2, n=d) for d in range(20)]
    a = estimate_variant(few, as_of=MONDAY + timedelta(days=20), params=params)
    b = estimate_variant(many, as_of=MONDAY + timedelta(days=20), params=params)
    assert a is not None and b is not None
    assert a.high_usd / a.low_usd > b.high_usd / b.low_usd
    assert a.confidence == "low"

"""The quarantine rule, pure: a price beyond its category's factor against the reference (the
estimate in the observation's currency or USD, else the median of recent sales), exactly at the
limit within it; the limits per category and their default."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rareindex.review import Reference, judge, limit_for, median_reference, reference_for
from rareindex.review.limits import DEFAULT_FACTOR, MIN_RECENT_SALES, RECENT_SALES
from rareindex.storage.review_store import VariantFacts

D = Decimal
REF = Reference("estimate", D(100))


@pytest.mark.parametrize(
    ("price", "reason", "ratio"),
    [
        ("301", "above_limit", "3.01"),
        ("300", None, None),  # exactly 3x: within
        ("100", None, None),
        ("33.34", None, None),
        ("33.333333", "below_limit", "0.333333"),
        ("20", "below_limit", "0.2"),
    ],
)
def test_judge_against_the_default_factor(
    price: str, reason: str | None, ratio: str | None
) -> None:
    verdict = judge(D(price), REF, DEFAULT_FACTOR)
    if reason is None:
        assert verdict is None
    else:
        assert verdict is not None and (verdict.reason, verdict.ratio) == (reason, D(ratio))


def test_nothing_to_judge_without_a_reference_or_a_price() -> None:
    assert judge(D(1000), None, DEFAULT_FACTOR) is None
    assert judge(D(0), REF, DEFAULT_FACTOR) is None
    assert judge(D(1000), Reference("median", D(0)), DEFAULT_FACTOR) is None


def test_limits_per_category_then_the_star_then_three() -> None:
    limits = {"coin": D("2.5"), "*": D(4)}
    assert limit_for("coin", limits) == D("2.5")
    assert limit_for("comic", limits) == D(4)
    assert limit_for(None, limits) == D(4)
    assert limit_for("comic", {}) == D(3)
    assert judge(D(260), REF, limit_for("coin", limits)) is not None
    assert judge(D(260), REF, limit_for("comic", limits)) is None


def test_the_median_of_recent_sales_needs_three() -> None:
    assert median_reference([D(100), D(90)]) is None
    assert MIN_RECENT_SALES == 3
    assert median_reference([D(100), D(90), D(300)]) == Reference("median", D(100))
    newest = [D(100)] * RECENT_SALES + [D(1)] * 50  # only the newest ten count
    assert median_reference(newest) == Reference("median", D(100))


def test_the_estimate_is_the_reference_in_its_currency_or_in_usd() -> None:
    facts = VariantFacts("tcg_card", "EUR", D(90), D(100))
    recent = [D(10), D(11), D(12)]
    assert reference_for(facts, "EUR", recent) == Reference("estimate", D(90))
    assert reference_for(facts, "USD", recent) == Reference("estimate", D(100))
    assert reference_for(facts, "JPY", recent) == Reference("median", D(11))  # no JPY estimate
    assert reference_for(VariantFacts("tcg_card"), "USD", recent) == Reference("median", D(11))
    assert reference_for(None, "USD", []) is None

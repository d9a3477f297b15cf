"""Grade curves by median polish, and derived estimates through them."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from rareindex.pricing import VariantRef, build_pricing, fit_grade_curve
from tests.pricing_helpers import MONDAY, sale

RATIOS = {"raw": 1.0, "PSA 9": 2.5, "PSA 10": 7.0}


def test_the_curve_recovers_known_grade_ratios_and_ignores_single_grade_assets() -> None:
    points = []
    for a in range(10):
        base = math.log(50 + 40 * a)
        for g, ratio in RATIOS.items():
            points.append((f"ast_{a}", g, base + math.log(ratio) + (0.05 if a % 3 == 0 else 0)))
    points.append(("ast_only_ten", "PSA 10", math.log(1e6)))  # no pair: says nothing
    curve = fit_grade_curve("sports", points)
    assert curve is not None
    assert curve.ratio("PSA 10", "PSA 9") == pytest.approx(7.0 / 2.5, rel=1e-6)
    assert curve.ratio("PSA 9", "raw") == pytest.approx(2.5, rel=1e-6)
    assert curve.steps["PSA 10"].assets == 10


def test_one_odd_asset_does_not_bend_the_curve() -> None:
    points = [
        (f"ast_{a}", g, math.log(100 * ratio)) for a in range(9) for g, ratio in RATIOS.items()
    ]
    points += [("ast_odd", "raw", math.log(100)), ("ast_odd", "PSA 10", math.log(100 * 70))]
    curve = fit_grade_curve("sports", points)
    assert curve is not None and curve.ratio("PSA 10", "raw") == pytest.approx(7.0, rel=1e-6)


def test_no_asset_in_two_grades_is_no_curve() -> None:
    assert fit_grade_curve("sports", [("a", "PSA 10", 1.0), ("b", "PSA 9", 1.0)]) is None


def test_a_variant_without_sales_gets_a_derived_estimate_marked_and_wider() -> None:
    sales, variants = [], []
    for a in range(6):
        for g, ratio in RATIOS.items():
            vid = f"var_{a}_{g}"
            variants.append(VariantRef(vid, f"ast_{a}", "sports", g))
            if a == 0 and g == "PSA 10":
                continue  # never sold: must be derived from ast_0's other grades
            for d in range(6):
                when = MONDAY + timedelta(days=d)
                sales.append(
                    sale(vid, when, 100 * (a + 1) * ratio * (1 + 0.01 * d), n=d, asset=f"ast_{a}")
                )
    result = build_pricing(sales, variants)
    derived = result.estimates["var_0_PSA 10"]
    source = result.estimates[derived.derived_from or ""]
    assert derived.basis == "derived" and derived.confidence == "low"
    assert source.basis == "direct" and source.asset_id == "ast_0"
    assert derived.value_usd == pytest.approx(700 * 1.025, rel=0.05)
    assert derived.high_usd / derived.low_usd > source.high_usd / source.low_usd
    assert derived.n_sales == source.n_sales  # it says what it rests on


def test_a_set_with_its_own_ratio_derives_through_its_own_curve() -> None:
    # two sets of one category: PSA 10 is 7x raw in set A, 3x in set B
    sales, variants = [], []
    for set_id, ten in (("A", 7.0), ("B", 3.0)):
        for a in range(6):
            asset = f"ast_{set_id}{a}"
            for g, ratio in (("raw", 1.0), ("PSA 10", ten)):
                vid = f"var_{set_id}{a}_{g}"
                variants.append(VariantRef(vid, asset, "sports", g, set_id))
                if (set_id, a, g) == ("A", 0, "PSA 10"):
                    continue
                for d in range(4):
                    when = MONDAY + timedelta(days=d)
                    sales.append(sale(vid, when, 100.0 * ratio, n=d, asset=asset))
    result = build_pricing(sales, variants)
    assert {"sports", "set:A", "set:B"} <= set(result.curves)
    assert result.curves["set:A"].ratio("PSA 10", "raw") == pytest.approx(7.0)
    assert result.estimates["var_A0_PSA 10"].value_usd == pytest.approx(700.0)

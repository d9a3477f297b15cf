"""Price outliers on a log scale: modified z first, Tukey fences when MAD is 0, a factor-of-two rule
when the IQR is 0 too; too few points flags nothing; flags only, nothing dropped."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from rareindex.quality import AnomalyFlag, AnomalyReason, flag_price_anomalies


def _window(*prices: str | float) -> list[tuple[str, Decimal | float]]:
    return [
        (f"s{i}", Decimal(p) if isinstance(p, str) else p) for i, p in enumerate(prices, start=1)
    ]


def test_a_clear_outlier_is_flagged_by_robust_z() -> None:
    window = _window("100", "105", "98", "110", "95", "102", "2500")
    flags = flag_price_anomalies(window)
    assert list(flags) == ["s7"]
    assert flags["s7"].reason == AnomalyReason.ROBUST_Z
    assert flags["s7"].score > 3.5


def test_a_low_outlier_has_a_negative_score() -> None:
    flags = flag_price_anomalies(_window("100", "105", "98", "110", "95", "102", "3"))
    assert list(flags) == ["s7"]
    assert flags["s7"].reason == "robust_z" and flags["s7"].score < -3.5


def test_the_modified_z_is_computed_on_log_prices() -> None:
    # logs: 0, ln2, ln4, ln8, ln16 -> median ln4, MAD ln2; M(16) = 0.6745 * 2 = 1.349.
    window = _window("1", "2", "4", "8", "16")
    assert flag_price_anomalies(window) == {}
    assert flag_price_anomalies(window, z_threshold=1.3) == {
        "s1": AnomalyFlag(AnomalyReason.ROBUST_Z, pytest.approx(-1.349)),  # type: ignore[arg-type]
        "s5": AnomalyFlag(AnomalyReason.ROBUST_Z, pytest.approx(1.349)),  # type: ignore[arg-type]
    }


def test_a_legitimate_spread_of_prices_flags_nothing() -> None:
    # Raw to gem-mint-ish spread of one variant over a month: wide, but no price stands apart.
    window = _window("80", "95", "100", "110", "120", "130", "150", "90", "105", "140", "70")
    assert flag_price_anomalies(window) == {}


def test_mad_zero_falls_back_to_tukey_fences() -> None:
    # Five identical sales make MAD 0. Q1 = 100 and Q3 = 200 put the upper fence at 200·2^1.5
    # (566): 300 is inside it, though beyond twice the median; 900 is outside.
    window = _window("100", "100", "100", "100", "100", "150", "200", "300", "900")
    flags = flag_price_anomalies(window)
    assert list(flags) == ["s9"]
    assert flags["s9"].reason == AnomalyReason.IQR_FENCE
    assert flags["s9"].score == pytest.approx(math.log2(9))


def test_a_hairline_iqr_does_not_flag_near_identical_prices() -> None:
    # Q1 = 100, Q3 = 100.5: literal fences would flag 99 and 199; the factor-of-two floor does not.
    window = _window("100", "100", "100", "100", "100", "100", "101", "99", "199", "500", "40")
    flags = flag_price_anomalies(window)
    assert list(flags) == ["s10", "s11"]
    assert {flag.reason for flag in flags.values()} == {AnomalyReason.IQR_FENCE}


def test_with_no_iqr_either_only_a_factor_of_two_from_the_median_is_flagged() -> None:
    window = _window(*["100"] * 9, "99", "101", "500", "40")
    flags = flag_price_anomalies(window)
    assert list(flags) == ["s12", "s13"]
    assert flags["s12"] == AnomalyFlag(AnomalyReason.IQR_FENCE, pytest.approx(math.log2(5)))  # type: ignore[arg-type]
    assert flags["s13"].score == pytest.approx(math.log2(0.4))


def test_exactly_double_the_median_is_not_beyond_the_factor_of_two() -> None:
    window = _window("100", "100", "100", "100", "100", "200", "50")
    assert flag_price_anomalies(window) == {}


def test_fewer_than_min_points_flags_nothing() -> None:
    window = _window("100", "105", "98", "2500")
    assert flag_price_anomalies(window) == {}
    assert list(flag_price_anomalies(window, min_points=4)) == ["s4"]


def test_non_positive_prices_are_flagged_and_kept_out_of_the_statistics() -> None:
    window = _window("100", "105", "0", "98", "-5", "110", "95", "102", "2500")
    flags = flag_price_anomalies(window)
    assert list(flags) == ["s3", "s5", "s9"]  # input order
    assert flags["s3"] == AnomalyFlag(AnomalyReason.NON_POSITIVE_PRICE, 0.0)
    assert flags["s5"].reason == "non_positive_price"
    assert flags["s9"].reason == "robust_z"


def test_non_positive_prices_are_flagged_even_in_a_small_window() -> None:
    assert list(flag_price_anomalies(_window("100", "0"))) == ["s2"]


def test_floats_and_non_finite_prices_are_handled() -> None:
    window = _window(100.0, 105.5, 98.0, 110.0, 95.0, 102.0, 2500.0, math.nan, "NaN", "Infinity")
    flags = flag_price_anomalies(window)
    assert list(flags) == ["s7", "s8", "s9", "s10"]
    assert flags["s7"].reason == "robust_z"
    assert {flags[k].reason for k in ("s8", "s9", "s10")} == {AnomalyReason.INVALID_PRICE}


def test_the_input_is_left_untouched() -> None:
    window = _window("100", "105", "98", "110", "95", "102", "2500")
    before = list(window)
    flag_price_anomalies(window)
    assert window == before

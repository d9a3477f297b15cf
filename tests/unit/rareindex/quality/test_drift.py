"""Schema drift: a field whose presence today falls far below its past week's signals; a wobble,
a rise, a thin day or a thin baseline does not."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from rareindex.quality import DriftSignal, detect_drift

TODAY = date(2026, 11, 30)
UPC = ("sale", "identifiers.upc")
GRADE = ("sale", "grading.grade")


def _history(
    past: dict[tuple[str, str], tuple[int, int]],
    today: dict[tuple[str, str], tuple[int, int]],
    days: int = 7,
) -> dict[date, dict[tuple[str, str], tuple[int, int]]]:
    history = {TODAY - timedelta(days=back): dict(past) for back in range(1, days + 1)}
    history[TODAY] = dict(today)
    return history


def test_a_fall_from_95_to_20_percent_signals() -> None:
    history = _history({UPC: (95, 100), GRADE: (60, 100)}, {UPC: (20, 100), GRADE: (58, 100)})
    signals = detect_drift(history, TODAY)
    assert signals == [DriftSignal("sale", "identifiers.upc", 0.95, 0.2)]
    assert signals[0].fall == pytest.approx(0.75)


def test_a_small_wobble_does_not_signal() -> None:
    assert detect_drift(_history({UPC: (95, 100)}, {UPC: (80, 100)}), TODAY) == []


def test_a_rise_does_not_signal() -> None:
    assert detect_drift(_history({UPC: (5, 100)}, {UPC: (100, 100)}), TODAY) == []


def test_a_fall_of_exactly_drop_does_not_signal_but_a_lower_drop_does() -> None:
    history = _history({UPC: (75, 100)}, {UPC: (25, 100)})
    assert detect_drift(history, TODAY) == []
    assert len(detect_drift(history, TODAY, drop=0.4)) == 1


def test_too_few_records_today_do_not_signal() -> None:
    history = _history({UPC: (95, 100)}, {UPC: (0, 19)})
    assert detect_drift(history, TODAY) == []
    assert len(detect_drift(history, TODAY, min_total=19)) == 1


def test_too_few_records_in_the_window_do_not_signal() -> None:
    history = _history({UPC: (2, 2)}, {UPC: (0, 100)}, days=7)  # 14 records over the week
    assert detect_drift(history, TODAY) == []
    assert len(detect_drift(history, TODAY, min_total=14)) == 1


def test_the_baseline_pools_only_the_trailing_window() -> None:
    history = _history({UPC: (0, 100)}, {UPC: (10, 100)}, days=3)
    # Full presence long ago and in the future lies outside the window and is ignored...
    history[TODAY - timedelta(days=8)] = {UPC: (1000, 1000)}
    history[TODAY + timedelta(days=1)] = {UPC: (1000, 1000)}
    assert detect_drift(history, TODAY) == []
    # ...until the window reaches back far enough to take it in.
    [signal] = detect_drift(history, TODAY, window_days=8)
    assert signal.baseline_ratio == pytest.approx(1000 / 1300)


def test_a_field_no_record_had_today_and_an_empty_today_give_nothing() -> None:
    assert detect_drift(_history({UPC: (95, 100)}, {}), TODAY) == []
    assert detect_drift({}, TODAY) == []


def test_signals_are_sorted_by_kind_and_field() -> None:
    past = {GRADE: (90, 100), UPC: (90, 100), ("listing", "seller"): (90, 100)}
    today = {key: (0, 100) for key in past}
    signals = detect_drift(_history(past, today), TODAY)
    assert [(s.record_kind, s.field) for s in signals] == [
        ("listing", "seller"),
        ("sale", "grading.grade"),
        ("sale", "identifiers.upc"),
    ]


def test_a_window_of_no_days_is_refused() -> None:
    with pytest.raises(ValueError, match="window_days"):
        detect_drift({}, TODAY, window_days=0)

"""Schema drift: a field that a connector used to fill in and, today, mostly does not.

For each ``(record kind, field)`` seen today, the *baseline* is its presence ratio pooled over the
``window_days`` days before today (Σ present / Σ total, so a busy day weighs more than a quiet
one). A signal is raised when today's ratio is more than ``drop`` (absolute) below the baseline,
e.g. ``identifiers.upc`` at 0.95 over the past week and 0.30 today. Both today and the baseline
need at least ``min_total`` records, so a handful of odd records on a quiet day is not drift.
A field whose presence *rises* is not drift either: a source adding data breaks nothing.

Example:
    >>> from datetime import date, timedelta
    >>> today = date(2026, 11, 30)
    >>> history = {today - timedelta(days=d): {("sale", "grading.grade"): (95, 100)}
    ...            for d in range(1, 8)}
    >>> history[today] = {("sale", "grading.grade"): (20, 100)}
    >>> [(s.field, s.baseline_ratio, s.today_ratio) for s in detect_drift(history, today)]
    [('grading.grade', 0.95, 0.2)]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = ["DriftSignal", "FieldHistory", "detect_drift"]

FieldHistory = Mapping[date, Mapping[tuple[str, str], tuple[int, int]]]
"""``day -> (record kind, field) -> (present, total)``, as the field-stats store loads it."""


@dataclass(frozen=True, slots=True)
class DriftSignal:
    """One field whose presence fell: its trailing-window ratio and today's."""

    record_kind: str
    field: str
    baseline_ratio: float
    today_ratio: float

    @property
    def fall(self) -> float:
        """How far the ratio fell (absolute, 0..1)."""
        return self.baseline_ratio - self.today_ratio


def detect_drift(
    history: FieldHistory,
    today: date,
    *,
    window_days: int = 7,
    min_total: int = 20,
    drop: float = 0.5,
) -> list[DriftSignal]:
    """Fields whose presence ratio today fell more than ``drop`` below the trailing window's.

    Days of ``history`` outside ``[today - window_days, today]`` are ignored; missing days count
    as no records. Signals are sorted by record kind and field.
    """
    if window_days < 1:
        raise ValueError(f"window_days must be at least 1, got {window_days}")
    current = history.get(today, {})
    window = [today - timedelta(days=back) for back in range(1, window_days + 1)]
    signals: list[DriftSignal] = []
    for key in sorted(current):
        today_present, today_total = current[key]
        if today_total < min_total:
            continue
        base_present = base_total = 0
        for day in window:
            present, total = history.get(day, {}).get(key, (0, 0))
            base_present += present
            base_total += total
        if base_total < min_total:
            continue
        baseline = base_present / base_total
        ratio = today_present / today_total
        if baseline - ratio > drop:
            signals.append(DriftSignal(key[0], key[1], baseline, ratio))
    return signals

"""Robust price outliers of one variant's window: flags with a reason code, never deletions.

docs/domain.md#anomalies: prices are compared on a log scale (a $10 card selling for $100 is as odd
as a $1,000 card selling for $10,000), one variant and one currency at a time.

* ``robust_z`` — the modified z-score ``M = 0.6745·(x - median) / MAD`` of the log price, where MAD
  is the median absolute deviation from the median; ``|M| > z_threshold`` (3.5, Iglewicz & Hoaglin)
  is flagged. The score is ``M`` (negative below the median).
* ``iqr_fence`` — only when MAD is 0 (more than half the prices are identical, so ``M`` would be
  infinite for every other price): Tukey fences ``[Q1 - 1.5·IQR, Q3 + 1.5·IQR]`` on the log price,
  quartiles by linear interpolation (``statistics.quantiles(method="inclusive")``, as numpy's
  default). With most prices identical the IQR is tiny or 0 and the fences hug the median: a sale
  at $99 among $100 ones would be flagged. So the fences are never narrower than a factor of two
  around the median (``median ± log 2``); with IQR = 0 that is the whole rule: a price is flagged
  only when it is more than twice or less than half the median. A factor of two is far outside
  what condition, shipping or a week's drift explain for one graded variant, and well inside
  what a mis-priced or mis-matched sale looks like. The score is ``log2(x / median)``, the number
  of doublings away from the median.
* ``non_positive_price`` — a price ≤ 0 has no logarithm; it is flagged and left out of the
  statistics. ``invalid_price`` — NaN or infinity, likewise.

Fewer than ``min_points`` positive prices is too little to call anything an outlier: nothing but
the two price rules is flagged then.

Example:
    >>> from decimal import Decimal
    >>> window = [("s1", Decimal("100")), ("s2", Decimal("105")), ("s3", Decimal("98")),
    ...           ("s4", Decimal("110")), ("s5", Decimal("95")), ("s6", Decimal("2500")),
    ...           ("s7", Decimal("0"))]
    >>> flags = flag_price_anomalies(window)
    >>> sorted(flags)
    ['s6', 's7']
    >>> str(flags["s6"].reason), round(flags["s6"].score, 1)
    ('robust_z', 37.3)
    >>> str(flags["s7"].reason)
    'non_positive_price'
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

__all__ = ["AnomalyFlag", "AnomalyReason", "flag_price_anomalies"]

_MODIFIED_Z = 0.6745  # the 0.75 normal quantile: scales MAD to a standard deviation
_TUKEY_K = 1.5
_MIN_FENCE = math.log(2.0)  # fences at least a factor of two from the median


class AnomalyReason(StrEnum):
    """Why a price was flagged: a closed vocabulary."""

    ROBUST_Z = "robust_z"
    IQR_FENCE = "iqr_fence"
    NON_POSITIVE_PRICE = "non_positive_price"
    INVALID_PRICE = "invalid_price"


@dataclass(frozen=True, slots=True)
class AnomalyFlag:
    """One flagged observation: the rule that flagged it and how far out it lies.

    ``score`` is signed (negative: below the median); its unit depends on ``reason`` (see the
    module docstring). It is ``0.0`` for the two price rules.
    """

    reason: AnomalyReason
    score: float


def flag_price_anomalies(
    prices: Sequence[tuple[str, Decimal | float | int]],
    *,
    z_threshold: float = 3.5,
    min_points: int = 5,
) -> dict[str, AnomalyFlag]:
    """Flag outliers among ``(observation id, price)`` pairs of one variant in one currency.

    Returns only the flagged ids (in input order), each with its :class:`AnomalyFlag`; the input
    is not changed and nothing is dropped. Ids are expected to be unique.
    """
    flags: dict[str, AnomalyFlag] = {}
    logs: list[tuple[str, float]] = []
    for obs_id, price in prices:
        try:  # compare as floats: Decimal('NaN') <= 0 raises, float('nan') <= 0 is False
            value = float(price)
        except ValueError:  # a signalling Decimal NaN
            value = math.nan
        if not math.isfinite(value):
            flags[obs_id] = AnomalyFlag(AnomalyReason.INVALID_PRICE, 0.0)
        elif value <= 0.0:
            flags[obs_id] = AnomalyFlag(AnomalyReason.NON_POSITIVE_PRICE, 0.0)
        else:
            logs.append((obs_id, math.log(value)))
    if len(logs) >= max(min_points, 2):
        flags.update(_outliers(logs, z_threshold))
    return {obs_id: flags[obs_id] for obs_id, _ in prices if obs_id in flags}


def _outliers(logs: list[tuple[str, float]], z_threshold: float) -> dict[str, AnomalyFlag]:
    """The statistical flags of ``(id, log price)`` pairs (at least two of them)."""
    flags: dict[str, AnomalyFlag] = {}
    values = [x for _, x in logs]
    median = statistics.median(values)
    mad = statistics.median(abs(x - median) for x in values)
    if mad > 0.0:
        for obs_id, x in logs:
            score = _MODIFIED_Z * (x - median) / mad
            if abs(score) > z_threshold:
                flags[obs_id] = AnomalyFlag(AnomalyReason.ROBUST_Z, score)
        return flags

    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    iqr = q3 - q1
    # Tukey's fences, widened to at least a factor of two either side of the median. The epsilon
    # keeps exactly 2x (whose log is log 2 up to rounding) inside: "more than twice".
    low = min(q1 - _TUKEY_K * iqr, median - _MIN_FENCE) - 1e-12
    high = max(q3 + _TUKEY_K * iqr, median + _MIN_FENCE) + 1e-12
    for obs_id, x in logs:
        if x < low or x > high:
            flags[obs_id] = AnomalyFlag(AnomalyReason.IQR_FENCE, (x - median) / _MIN_FENCE)
    return flags

"""Whether an observed price is beyond its change limit: pure rules, no database.

An observation's **reference** is its variant's estimate when one exists in the observation's
currency (the estimate's own currency, or USD), else the median of the variant's recent sales in
that currency (at least :data:`MIN_RECENT_SALES` of the newest :data:`RECENT_SALES`; sales held
for review or flagged as anomalies do not count). The **limit** is a factor per category
(:data:`DEFAULT_FACTOR` = 3 unless ``rareindex review limit`` sets one): a price more than
``factor`` x the reference is ``above_limit``, one below ``1 / factor`` of it ``below_limit``. A
price exactly at the limit is within it. Without a reference nothing is judged.

Example:
    >>> judge(Decimal("400"), Reference("estimate", Decimal("100")), Decimal(3))
    Verdict(reason='above_limit', ratio=Decimal('4'))
    >>> judge(Decimal("300"), Reference("median", Decimal("100")), Decimal(3)) is None
    True
    >>> median_reference([Decimal(90), Decimal(100), Decimal(130)])
    Reference(basis='median', value=Decimal('100'))
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

__all__ = [
    "DEFAULT_FACTOR",
    "MIN_RECENT_SALES",
    "RECENT_SALES",
    "Reference",
    "Verdict",
    "judge",
    "limit_for",
    "median_reference",
    "ratio_of",
]

DEFAULT_FACTOR = Decimal(3)
"""More than 3x the reference, or less than a third of it, unless the category says otherwise."""
RECENT_SALES = 10
"""The median reference is taken over at most this many of the variant's newest sales."""
MIN_RECENT_SALES = 3
"""…and needs at least this many: one or two sales are no reference."""
DEFAULT_CATEGORY = "*"
"""The ``review_limits`` row that sets the default of every category without its own."""


@dataclass(frozen=True, slots=True)
class Reference:
    """What an observation is compared with: ``estimate`` or ``median`` (of recent sales)."""

    basis: Literal["estimate", "median"]
    value: Decimal


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why an observation is quarantined, and how far out it is (price / reference)."""

    reason: Literal["above_limit", "below_limit"]
    ratio: Decimal


def limit_for(category: str | None, limits: Mapping[str, Decimal]) -> Decimal:
    """The factor of ``category``: its own row, else the ``*`` row, else :data:`DEFAULT_FACTOR`."""
    if category is not None and category in limits:
        return limits[category]
    return limits.get(DEFAULT_CATEGORY, DEFAULT_FACTOR)


def median_reference(recent: Sequence[Decimal]) -> Reference | None:
    """The median of recent sale prices (newest first; at most :data:`RECENT_SALES` are used),
    or None with fewer than :data:`MIN_RECENT_SALES`."""
    used = [p for p in recent[:RECENT_SALES] if p > 0]
    if len(used) < MIN_RECENT_SALES:
        return None
    return Reference("median", Decimal(statistics.median(used)))


def judge(price: Decimal, reference: Reference | None, factor: Decimal) -> Verdict | None:
    """The verdict on ``price`` against ``reference`` under ``factor`` (> 1); None: within it,
    or nothing to judge against."""
    if reference is None or reference.value <= 0 or factor <= 1 or price <= 0:
        return None
    ratio = price / reference.value
    if ratio > factor:
        return Verdict("above_limit", _rounded(ratio))
    if ratio * factor < 1:
        return Verdict("below_limit", _rounded(ratio))
    return None


def ratio_of(price: Decimal, reference: Reference | None) -> Decimal | None:
    """``price / reference`` at six places (None without a usable reference)."""
    if reference is None or reference.value <= 0:
        return None
    return _rounded(price / reference.value)


def _rounded(ratio: Decimal) -> Decimal:
    """Six places, as the ``ratio`` column keeps it, without trailing zeros."""
    return Decimal(format(ratio.quantize(Decimal("0.000001")).normalize(), "f"))

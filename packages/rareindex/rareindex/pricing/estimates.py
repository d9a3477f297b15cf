"""One variant's current value: :func:`estimate_variant`.

The method, in log space (prices of collectibles spread multiplicatively):

1. Each sale ``i`` at time ``t_i`` is projected to the as-of date along its category's index
   ``I``: ``x_i = ln p_i + ln I(as_of) - ln I(t_i)`` (no index: ``x_i = ln p_i``).
2. It weighs ``w_i = 0.5 ** (age_i / half_life)`` (age in days before the as-of date).
3. The estimate is the weighted median ``m`` of the ``x_i``: one wild sale cannot move it.
4. The spread ``s_v`` is 1.4826 x the weighted median absolute deviation from ``m`` (the robust
   standard deviation), shrunk toward a prior for few sales:
   ``s² = (n_eff · s_v² + k · s0²) / (n_eff + k)`` with ``n_eff = (Σw)² / Σw²``.
5. The interval is a prediction interval for the next sale: ``m ± z · s · √(1 + 1/n_eff)``
   (``z`` of the two-sided level, 80 % by default), back in money with ``exp``.
6. The confidence label: ``high`` with ≥ 8 sales, the newest ≤ 30 days old and ``s ≤ 0.20``;
   ``medium`` with ≥ 3 sales, ≤ 90 days and ``s ≤ 0.40``; ``low`` otherwise.

Example:
    >>> from datetime import UTC, datetime
    >>> from decimal import Decimal
    >>> from rareindex.pricing.sales import PricedSale
    >>> prices = [1180, 1250, 1200, 1230, 1190, 1215, 1260, 1205, 1220]
    >>> days = [datetime(2026, 5, 1 + 3 * i, tzinfo=UTC) for i in range(len(prices))]
    >>> sales = [PricedSale(f"s{i}", "var_1", "ast_1", "sports", day, p, Decimal(p), "USD", "fixed")
    ...          for i, (day, p) in enumerate(zip(days, prices, strict=True))]
    >>> est = estimate_variant(sales, as_of=datetime(2026, 6, 1, tzinfo=UTC))
    >>> round(est.value_usd), est.n_sales, est.confidence
    (1215, 9, 'high')
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from statistics import NormalDist

from .sales import PricedSale

__all__ = ["DEFAULT_ESTIMATE", "Estimate", "EstimateParams", "estimate_variant", "weighted_median"]

Drift = Callable[[datetime], float]
"""``ln I(t)`` of the category index at a time (0 when there is no index)."""


@dataclass(frozen=True, slots=True)
class EstimateParams:
    half_life_days: float = 90.0
    """A sale this many days old weighs half as much as one of the as-of day."""
    level: float = 0.80
    """The nominal coverage of the interval (of the next sale's price)."""
    prior_sd: float = 0.25
    """``s0``: the log spread assumed before any sale (about ±25 %)."""
    prior_weight: float = 2.0
    """``k``: how many sales' worth the prior spread counts for."""
    min_direct: int = 3
    """Fewer sales than this: the variant is thin, and a derived estimate replaces it if one can
    be borrowed through the grade curve."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """What one variant is worth on ``as_of``, how sure we are, and what it rests on."""

    variant_id: str
    asset_id: str
    as_of: date
    value_usd: float
    low_usd: float
    high_usd: float
    currency: str
    """The currency most of its sales were in (ties: alphabetical)."""
    value: Decimal
    low: Decimal
    high: Decimal
    """In ``currency``, at the rate of the newest sale in that currency."""
    n_sales: int
    first_sale: date
    last_sale: date
    log_sd: float
    """``s``: the spread of a sale around the value, in log units (0.2 ≈ ±20 %)."""
    confidence: str
    """``high``, ``medium`` or ``low`` (a derived estimate is always ``low``)."""
    basis: str = "direct"
    """``direct`` (its own sales) or ``derived`` (another grade of the asset, through the curve)."""
    derived_from: str | None = None
    """The variant a derived estimate was borrowed from."""


DEFAULT_ESTIMATE = EstimateParams()


def weighted_median(values: Sequence[float], weights: Sequence[float]) -> float:
    """The smallest value at which the cumulative weight (values sorted) reaches half the total;
    the mean of the two middle values when it lands exactly on half."""
    pairs = sorted(zip(values, weights, strict=True))
    half = sum(weights) / 2
    acc = 0.0
    for n, (value, weight) in enumerate(pairs):
        acc += weight
        if math.isclose(acc, half, rel_tol=1e-12) and n + 1 < len(pairs):
            return (value + pairs[n + 1][0]) / 2
        if acc > half:
            return value
    return pairs[-1][0]


def _money(value: float) -> Decimal:
    return Decimal(f"{value:.2f}")


def confidence_label(n_sales: int, days_since_last: int, log_sd: float) -> str:
    """``high`` / ``medium`` / ``low`` from count, recency and dispersion (module docstring)."""
    if n_sales >= 8 and days_since_last <= 30 and log_sd <= 0.20:
        return "high"
    if n_sales >= 3 and days_since_last <= 90 and log_sd <= 0.40:
        return "medium"
    return "low"


def estimate_variant(
    sales: Sequence[PricedSale],
    *,
    as_of: datetime,
    params: EstimateParams = DEFAULT_ESTIMATE,
    drift: Drift | None = None,
) -> Estimate | None:
    """The estimate of one variant from its sales on or before ``as_of`` (None: none)."""
    used = [s for s in sales if s.sold_at <= as_of]
    if not used:
        return None
    now_level = drift(as_of) if drift else 0.0
    xs = [math.log(s.price_usd) + (now_level - drift(s.sold_at) if drift else 0.0) for s in used]
    ages = [(as_of - s.sold_at).total_seconds() / 86_400 for s in used]
    ws = [0.5 ** (age / params.half_life_days) for age in ages]
    total = sum(ws)
    ws = [w / total for w in ws]  # relative: old-only variants keep a usable scale
    n_eff = 1.0 / sum(w * w for w in ws)
    m = weighted_median(xs, ws)
    mad = weighted_median([abs(x - m) for x in xs], ws) if len(xs) > 1 else 0.0
    s_v = 1.4826 * mad
    k = params.prior_weight
    s = math.sqrt((n_eff * s_v**2 + k * params.prior_sd**2) / (n_eff + k))
    z = NormalDist().inv_cdf((1 + params.level) / 2)
    half = z * s * math.sqrt(1 + 1 / n_eff)
    currency = _main_currency(used)
    rate = _local_rate(used, currency)
    first, last = min(s.sold_at for s in used), max(s.sold_at for s in used)
    value, low, high = math.exp(m), math.exp(m - half), math.exp(m + half)
    return Estimate(
        variant_id=used[0].variant_id,
        asset_id=used[0].asset_id,
        as_of=as_of.date(),
        value_usd=value,
        low_usd=low,
        high_usd=high,
        currency=currency,
        value=_money(value * rate),
        low=_money(low * rate),
        high=_money(high * rate),
        n_sales=len(used),
        first_sale=first.date(),
        last_sale=last.date(),
        log_sd=s,
        confidence=confidence_label(len(used), (as_of - last).days, s),
    )


def _main_currency(sales: Sequence[PricedSale]) -> str:
    counts = Counter(s.currency for s in sales)
    return min(counts, key=lambda c: (-counts[c], c))


def _local_rate(sales: Sequence[PricedSale], currency: str) -> float:
    """Units of ``currency`` per USD at the newest sale in it."""
    newest = max((s for s in sales if s.currency == currency), key=lambda s: (s.sold_at, s.sale_id))
    return float(newest.price) / newest.price_usd

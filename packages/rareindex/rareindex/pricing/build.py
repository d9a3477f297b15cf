"""Everything the index publishes, from one list of priced sales: :func:`build_pricing`.

The order matters and is fixed:

1. a repeat-sales index per category (``category:<name>``), and per set (``set:<id>``) where the
   set has at least ``min_set_pairs`` pairs;
2. a direct estimate per variant with sales, each sale projected along its category's index;
3. a grade curve per category (``<name>``), and per set (``set:<id>``) where at least
   ``min_set_assets`` of its assets sold in two grades, from the direct estimates of at least
   ``min_direct`` sales;
4. derived estimates for the variants with none or a thin one (through the set's curve when both
   grades are on it, else the category's).

Inputs are sorted before use, so the same sales (in any order) give the same result to the last
bit: a replay from raw records rebuilds identical tables.

An incremental build (``previous``, a :class:`Resume`) reuses the published indices: an index none
of whose sales changed is kept (its levels recomputed from its exact log levels,
:func:`exact_points`), and one whose sales changed from week ``w`` on is
recomputed from ``w`` (:func:`~.repeat_sales.repeat_sales_index` ``resume``), since no week reads
a sale after it. Estimates, curves and derived estimates are always recomputed from every sale: a
direct estimate is projected to the as-of date (the newest sale) along its category's index, so a
new sale anywhere moves the as-of date or the index's newest level, and with them every estimate
of the category. Either way the result equals a full build on the same sales.

Example:
    >>> result = build_pricing(sales, variants, base=date(2026, 1, 5))    # doctest: +SKIP
    >>> sorted(result.indices)                                            # doctest: +SKIP
    ['category:coins', 'category:comics', 'category:sports', 'category:tcg']
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from .curves import GradeCurve, derive_estimates, fit_grade_curve
from .estimates import DEFAULT_ESTIMATE, Estimate, EstimateParams, estimate_variant
from .repeat_sales import (
    DEFAULT_INDEX,
    IndexParams,
    IndexPoint,
    cells_index,
    index_points,
    pair_count,
    pair_weeks,
    repeat_sales_index,
    sale_pairs,
    variant_weeks,
    week_of,
    weekly_cells,
)
from .sales import PricedSale

__all__ = [
    "PricingResult",
    "Resume",
    "VariantRef",
    "basket_index",
    "build_pricing",
    "drift_of",
    "exact_points",
]


@dataclass(frozen=True, slots=True)
class VariantRef:
    """A variant the index may estimate, with or without sales of its own."""

    variant_id: str
    asset_id: str
    category: str
    grade: str
    """A label of grader, grade and qualifier: ``PSA 10``, ``BGS 9.5 (OC)``, ``raw``."""
    set_id: str | None = None


@dataclass(slots=True)
class PricingResult:
    as_of: datetime
    estimates: dict[str, Estimate] = field(default_factory=dict)
    curves: dict[str, GradeCurve] = field(default_factory=dict)
    indices: dict[str, list[IndexPoint]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Resume:
    """What an incremental build starts from: the published indices, and per index id the week
    of the earliest of its sales added, changed or removed since (an index id absent from
    ``changed_from`` had no sale change, and is kept as published)."""

    points: Mapping[str, Sequence[IndexPoint]]
    changed_from: Mapping[str, date]


def drift_of(points: Sequence[IndexPoint]) -> Callable[[datetime], float]:
    """``ln(level / 100)`` of an index at a time: its week's level, the first one before the
    index starts and the last one after it ends."""
    weeks = [p.week for p in points]
    logs = [math.log(p.level / 100) for p in points]

    def drift(when: datetime) -> float:
        at = bisect.bisect_right(weeks, week_of(when)) - 1
        return logs[max(at, 0)]

    return drift


def exact_points(
    points: Sequence[IndexPoint], *, base: date | None, params: IndexParams = DEFAULT_INDEX
) -> list[IndexPoint]:
    """Published points as the build that published them computed them: their level and band
    from the exact ``log_level`` and ``se`` (a stored level is rounded to 6 places, and an
    estimate's projection reads the level: kept as read, it moved an estimate by a cent now and
    then against a full build's)."""
    weeks = [p.week for p in points]
    beta = {p.week: p.log_level for p in points}
    info = {p.week: (p.se, p.pairs, p.method) for p in points}
    return index_points(weeks, beta, info, base=base, level=params.level)


def basket_index(
    sales: Iterable[PricedSale],
    asset_ids: Iterable[str],
    *,
    base: date | None = None,
    params: IndexParams = DEFAULT_INDEX,
) -> list[IndexPoint]:
    """The repeat-sales index of a user's basket of assets."""
    keep = set(asset_ids)
    return repeat_sales_index(
        sale_pairs((s for s in sales if s.asset_id in keep), within=params.window_weeks - 1),
        base=base,
        params=params,
    )


def build_pricing(
    sales: Iterable[PricedSale],
    variants: Iterable[VariantRef],
    *,
    as_of: datetime | None = None,
    base: date | None = None,
    estimate_params: EstimateParams = DEFAULT_ESTIMATE,
    index_params: IndexParams = DEFAULT_INDEX,
    min_set_pairs: int = 50,
    min_set_assets: int = 5,
    previous: Resume | None = None,
) -> PricingResult:
    """Indices, direct and derived estimates and grade curves of ``sales`` on ``as_of`` (default:
    the newest sale's time). ``base``: the week whose level is 100 (default: each index's first).
    ``previous``: the indices published by a build with the same ``base`` and parameters, and
    where their sales changed since (the result is the same as without it, only faster)."""
    ordered = sorted(sales, key=lambda s: (s.variant_id, s.sold_at, s.sale_id))
    refs = sorted(set(variants), key=lambda v: v.variant_id)
    if as_of is None:
        as_of = max((s.sold_at for s in ordered), default=datetime.min)
    ordered = [s for s in ordered if s.sold_at <= as_of]
    result = PricingResult(as_of=as_of)
    by_category: dict[str, list[PricedSale]] = defaultdict(list)
    by_set: dict[str, list[PricedSale]] = defaultdict(list)
    for sale in ordered:
        by_category[sale.category].append(sale)
        if sale.set_id:
            by_set[sale.set_id].append(sale)

    def index_of(key: str, chain: list[PricedSale], least: int) -> list[IndexPoint]:
        if previous is not None and key not in previous.changed_from:
            return exact_points(previous.points.get(key, ()), base=base, params=index_params)
        cells = weekly_cells(variant_weeks(chain), within=index_params.window_weeks - 1)
        if pair_count(cells) < least:
            return []
        if previous is None:
            return cells_index(cells, base=base, params=index_params)
        return cells_index(
            cells,
            base=base,
            params=index_params,
            resume=previous.points.get(key, ()),
            resume_from=previous.changed_from[key],
        )

    def resumed_index(key: str, chain: list[PricedSale]) -> list[IndexPoint] | None:
        """A category index resumed from the pairs its recomputed weeks' windows can read
        (first sale no earlier than ``window_weeks - 1`` weeks before the first recomputed one);
        None where that does not apply."""
        if previous is None or key not in previous.changed_from:
            return None
        resume = previous.points.get(key, ())
        since = previous.changed_from[key]
        within = index_params.window_weeks - 1
        by_variant = variant_weeks(chain)
        bounds = pair_weeks(by_variant, within=within)
        if not resume or bounds is None or resume[0].week != bounds[0] or since <= bounds[0]:
            return None
        cutoff = max(bounds[0], since - timedelta(weeks=within))
        cells = weekly_cells(by_variant, since=cutoff, within=within)
        if not cells:
            return None
        return cells_index(
            cells,
            base=base,
            start=bounds[0],
            end=bounds[1],
            params=index_params,
            resume=resume,
            resume_from=since,
        )

    for category in sorted(by_category):
        key = f"category:{category}"
        resumed = resumed_index(key, by_category[category])
        points = index_of(key, by_category[category], 1) if resumed is None else resumed
        if points:
            result.indices[f"category:{category}"] = points
    for set_id in sorted(by_set):
        points = index_of(f"set:{set_id}", by_set[set_id], min_set_pairs)
        if points:
            result.indices[f"set:{set_id}"] = points
    drifts = {
        category: drift_of(result.indices[f"category:{category}"])
        for category in by_category
        if f"category:{category}" in result.indices
    }
    by_variant: dict[str, list[PricedSale]] = defaultdict(list)
    for sale in ordered:
        by_variant[sale.variant_id].append(sale)
    direct: dict[str, Estimate] = {}
    for variant_id, chain in by_variant.items():
        found = estimate_variant(
            chain, as_of=as_of, params=estimate_params, drift=drifts.get(chain[0].category)
        )
        if found is not None:
            direct[variant_id] = found
    known = {v.variant_id: v for v in refs}
    for sale in ordered:  # a sold variant the caller did not list still gets its estimate
        if sale.variant_id not in known:
            known[sale.variant_id] = VariantRef(sale.variant_id, sale.asset_id, sale.category, "?")
    points_by_key: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
    for variant_id, est in sorted(direct.items()):
        ref = known[variant_id]
        if est.n_sales >= estimate_params.min_direct:
            point = (ref.asset_id, ref.grade, math.log(est.value_usd))
            points_by_key[ref.category].append(point)
            if ref.set_id:
                points_by_key[f"set:{ref.set_id}"].append(point)
    for key in sorted(points_by_key):
        grid = points_by_key[key]
        if key.startswith("set:") and _assets_in_two_grades(grid) < min_set_assets:
            continue
        curve = fit_grade_curve(key, grid)
        if curve is not None:
            result.curves[key] = curve
    result.estimates = derive_estimates(
        direct,
        [(v.variant_id, v.asset_id, v.category, v.grade) for v in known.values()],
        result.curves,
        params=estimate_params,
        set_of={v.asset_id: v.set_id for v in known.values() if v.set_id},
    )
    return result


def _assets_in_two_grades(points: Sequence[tuple[str, str, float]]) -> int:
    grades: dict[str, set[str]] = defaultdict(set)
    for asset_id, grade, _ in points:
        grades[asset_id].add(grade)
    return sum(1 for found in grades.values() if len(found) >= 2)


def exclusion_summary(dropped: Counter[str]) -> str:
    """``lot 7, hidden_price 12`` (by reason, sorted), ``none`` when nothing was left out."""
    return ", ".join(f"{reason} {n}" for reason, n in sorted(dropped.items())) or "none"

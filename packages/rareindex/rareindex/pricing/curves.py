"""Grade curves: how much more a PSA 10 sells for than a PSA 9 of the same card, per category
(and per set, where a set has enough assets sold in two grades).

:func:`fit_grade_curve` fits the additive model ``ln v(asset, grade) = c_asset + θ_grade + ε`` on
the direct estimates of assets with two or more graded variants, by Tukey's median polish (rows
are assets, columns grades; alternately subtract row and column medians, 10 sweeps). An asset sold
in one grade only says nothing about the ratio and is left out. ``θ`` is anchored at 0 on the
reference grade (the one most assets have; ties: alphabetical), so ``exp(θ_g - θ_h)`` is the
ratio of grade ``g`` to grade ``h``. Each grade also gets the robust spread of its residuals
(1.4826 x MAD, at least :data:`MIN_SPREAD`): how far a single asset strays from the curve.

:func:`derive_estimates` fills the variants that have no direct estimate, or a thin one (fewer
than ``min_direct`` sales), from the best direct estimate of the same asset in another grade
(most sales, then newest): ``ln v_g = ln v_h + θ_g - θ_h``. Its log spread is
``√(s_h² + spread_g² + spread_h²)`` and its interval's half-width (log) is
``√(h_h² + (z·spread_g)² + (z·spread_h)²)`` — always wider than the estimate it borrows from; it is
marked ``basis="derived"``, ``confidence="low"``, with ``derived_from`` naming the source.

Example:
    >>> import math
    >>> points = [("a1", "PSA 10", math.log(2000)), ("a1", "PSA 9", math.log(1000)),
    ...           ("a2", "PSA 10", math.log(600)), ("a2", "PSA 9", math.log(290))]
    >>> curve = fit_grade_curve("sports", points)
    >>> curve.reference, round(curve.ratio("PSA 10", "PSA 9"), 2)
    ('PSA 10', 2.03)
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from statistics import NormalDist

from .estimates import DEFAULT_ESTIMATE, Estimate, EstimateParams

__all__ = ["MIN_SPREAD", "GradeCurve", "GradeStep", "derive_estimates", "fit_grade_curve"]

MIN_SPREAD = 0.05
"""The least spread a grade's step is given: a curve fitted on few assets is never exact."""
SWEEPS = 10


@dataclass(frozen=True, slots=True)
class GradeStep:
    grade: str
    log_offset: float
    """``θ``: ln of the price ratio to the reference grade."""
    assets: int
    """How many assets sold in this grade and in another one the fit rests on."""
    spread: float


@dataclass(frozen=True, slots=True)
class GradeCurve:
    category: str
    reference: str
    steps: Mapping[str, GradeStep]

    def ratio(self, grade: str, to: str) -> float | None:
        """``v(grade) / v(to)`` for the same asset, None when either grade is not on the curve."""
        a, b = self.steps.get(grade), self.steps.get(to)
        return None if a is None or b is None else math.exp(a.log_offset - b.log_offset)


def fit_grade_curve(
    category: str, points: Iterable[tuple[str, str, float]], *, min_assets: int = 2
) -> GradeCurve | None:
    """The curve of ``category`` from ``(asset id, grade label, ln value)`` points (None: no
    asset has two grades). Grades seen on fewer than ``min_assets`` such assets are left off."""
    by_asset: dict[str, dict[str, float]] = defaultdict(dict)
    for asset_id, grade, value in sorted(points):
        by_asset[asset_id][grade] = value
    cells = {a: g for a, g in by_asset.items() if len(g) >= 2}
    counts: dict[str, int] = defaultdict(int)
    for grades in cells.values():
        for grade in grades:
            counts[grade] += 1
    keep = {g for g, n in counts.items() if n >= min_assets}
    cells = {a: {g: v for g, v in gs.items() if g in keep} for a, gs in cells.items()}
    cells = {a: gs for a, gs in cells.items() if len(gs) >= 2}
    if not cells:
        return None
    row = dict.fromkeys(cells, 0.0)
    col: dict[str, float] = dict.fromkeys(sorted({g for gs in cells.values() for g in gs}), 0.0)
    for _ in range(SWEEPS):
        for a, gs in cells.items():
            row[a] = statistics.median(v - col[g] for g, v in gs.items())
        by_grade: dict[str, list[float]] = defaultdict(list)
        for a, gs in cells.items():
            for g, v in gs.items():
                by_grade[g].append(v - row[a])
        col = {g: statistics.median(vs) for g, vs in sorted(by_grade.items())}
    support: dict[str, int] = defaultdict(int)
    residuals: dict[str, list[float]] = defaultdict(list)
    for a, gs in cells.items():
        for g, v in gs.items():
            support[g] += 1
            residuals[g].append(v - row[a] - col[g])
    reference = min(col, key=lambda g: (-support[g], g))
    anchor = col[reference]
    steps = {
        g: GradeStep(
            grade=g,
            log_offset=col[g] - anchor,
            assets=support[g],
            spread=max(MIN_SPREAD, 1.4826 * statistics.median(abs(r) for r in residuals[g])),
        )
        for g in col
    }
    return GradeCurve(category, reference, steps)


def derive_estimates(
    direct: Mapping[str, Estimate],
    variants: Iterable[tuple[str, str, str, str]],
    curves: Mapping[str, GradeCurve],
    *,
    params: EstimateParams = DEFAULT_ESTIMATE,
    set_of: Mapping[str, str] | None = None,
) -> dict[str, Estimate]:
    """Every estimate: ``direct`` ones, with derived ones for the variants of ``(variant id,
    asset id, category, grade label)`` that have none or a thin one, where a curve allows.

    ``curves`` is keyed by category, and by ``set:<id>`` for set curves; ``set_of`` maps an asset
    to its set. A set's curve is used when both grades are on it, else the category's."""
    out = dict(direct)
    siblings: dict[str, list[tuple[str, str]]] = defaultdict(list)
    rows = sorted(variants)
    for variant_id, asset_id, _, grade in rows:
        siblings[asset_id].append((variant_id, grade))
    z = NormalDist().inv_cdf((1 + params.level) / 2)
    for variant_id, asset_id, category, grade in rows:
        own = direct.get(variant_id)
        if own is not None and own.n_sales >= params.min_direct:
            continue
        set_id = (set_of or {}).get(asset_id)
        candidates = [curves.get(f"set:{set_id}") if set_id else None, curves.get(category)]
        usable = [c for c in candidates if c is not None and grade in c.steps]
        if not usable:
            continue
        found = _source(direct, siblings[asset_id], variant_id, usable, params.min_direct)
        if found is None:
            continue
        src, src_grade, curve = found
        target, step = curve.steps[grade], curve.steps[src_grade]
        shift = target.log_offset - step.log_offset
        sd = math.sqrt(src.log_sd**2 + target.spread**2 + step.spread**2)
        centre = math.log(src.value_usd) + shift
        src_half = (math.log(src.high_usd) - math.log(src.low_usd)) / 2
        half = math.sqrt(src_half**2 + (z * target.spread) ** 2 + (z * step.spread) ** 2)
        ratio = float(src.value) / src.value_usd
        value, low, high = math.exp(centre), math.exp(centre - half), math.exp(centre + half)
        out[variant_id] = replace(
            src,
            variant_id=variant_id,
            value_usd=value,
            low_usd=low,
            high_usd=high,
            value=Decimal(f"{value * ratio:.2f}"),
            low=Decimal(f"{low * ratio:.2f}"),
            high=Decimal(f"{high * ratio:.2f}"),
            log_sd=sd,
            confidence="low",
            basis="derived",
            derived_from=src.variant_id,
        )
    return out


def _source(
    direct: Mapping[str, Estimate],
    siblings: Sequence[tuple[str, str]],
    variant_id: str,
    curves: Iterable[GradeCurve],
    min_direct: int,
) -> tuple[Estimate, str, GradeCurve] | None:
    """The sibling estimate to borrow from (most sales, then newest) on the first curve that has
    one, with its grade and that curve."""
    for curve in curves:
        sources = [
            (direct[v], g)
            for v, g in siblings
            if v != variant_id
            and v in direct
            and direct[v].basis == "direct"
            and direct[v].n_sales >= min_direct
            and g in curve.steps
        ]
        if sources:
            src, grade = max(sources, key=lambda p: (p[0].n_sales, p[0].last_sale, p[0].variant_id))
            return src, grade, curve
    return None

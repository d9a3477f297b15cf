"""A repeat-sales index: how the prices of the same variants moved, week by week.

:func:`sale_pairs` pairs each sale of a variant with each of the latest :data:`PARTNERS` (4) earlier
weeks in which the variant sold, at most :data:`WITHIN_WEEKS` (25) weeks before:
``y = ln p - median(ln p of that week)``, each pair weighing ``1/m`` for a sale with ``m`` such
weeks (a sale counts once in all). Pairing a sale only with the variant's previous sale (the
classic chain of consecutive pairs) was measured far less precise on the bench's world: a fit on
every such pair of a year missed the true path by a median 3.9 % (coins, seed 9), and by 2.1 %
with four earlier weeks, which come close to a fixed-effects fit on the same sales (1.0 %).
Sales within one week say nothing about a weekly index and are not paired.

:func:`repeat_sales_index` is chain-linked at a weekly step and never revises the past. With
``β_w`` the log level of week ``w`` (0 on the first week), it fits in the Case-Shiller way:

1. an unweighted joint least-squares fit of every ``β`` on ``y = β_second - β_first`` of the
   pairs inside the ``window_weeks`` up to the week;
2. ``r² = a + b·Δ`` by least squares on its residuals (``Δ`` = weeks between the two sales): a
   pair far apart in time carries more drift noise than a close one;
3. a joint weighted fit (``w = 1 / (a + b·Δ)``, then a Huber-weighted second pass) of the same
   pairs. Its step from each earlier *linked* week ``k`` of the window is added to ``k``'s
   published level, and the week's level is the mean of those (a "mean splice": one noisy link
   does not shift every later week).

Each week reads only the pairs of its own window (none sold after it), so new sales change the
index from the week of the earliest of them on and never before: :func:`repeat_sales_index` can
``resume`` from the published points of the weeks before that and give, to the last bit, what a
full computation gives (``IndexPoint.log_level`` and ``se`` are kept for that).

A week with fewer than ``min_pairs`` pairs takes the weighted median of ``y + β_first`` of its
pairs instead (``method="median"``: one odd pair cannot swing a thin week) and is not a linked
week; a week without pairs carries the previous level (``method="carried"``). The published level
is ``100 · exp(β_t - β_base)``: 100 at the base week. The band is ``β_t ± z·se`` of that week's
step, ``se² = Σ w² r² / (Σ w)²`` (the median's ``1.2533 · 1.4826 · MAD / √n`` in a thin week).
Everything is a pure function of the sorted pairs, so a replay gives the same numbers.

Example:
    >>> points = repeat_sales_index(sale_pairs(sales), base=date(2026, 1, 5))  # doctest: +SKIP
    >>> last = points[-1]                                                       # doctest: +SKIP
    >>> last.week, round(last.level, 1), last.pairs, last.method                # doctest: +SKIP
    (datetime.date(2026, 11, 30), 104.2, 41, 'wls')
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from statistics import NormalDist

from .estimates import weighted_median
from .sales import PricedSale

__all__ = [
    "DEFAULT_INDEX",
    "IndexParams",
    "IndexPoint",
    "SalePair",
    "repeat_sales_index",
    "sale_pairs",
    "week_of",
]


@functools.lru_cache(maxsize=1 << 18)
def week_of(when: datetime | date) -> date:
    """The Monday (UTC) of the ISO week of ``when`` (cached: an update after a resolve batch asks
    it of every sale again)."""
    day = when.date() if isinstance(when, datetime) else when
    return day - timedelta(days=day.weekday())


@dataclass(frozen=True, slots=True)
class SalePair:
    variant_id: str
    first: date
    """The week of the first sale."""
    second: date
    log_ratio: float
    weight: float = 1.0
    """``1/m``: a sale paired with ``m`` earlier weeks of its variant counts once in all."""


@dataclass(frozen=True, slots=True)
class IndexParams:
    min_pairs: int = 10
    """Fewer pairs in a week: the weighted median instead of the weighted mean."""
    level: float = 0.80
    """The nominal coverage of each point's band."""
    window_weeks: int = 26
    """Each week's step comes from a joint fit of the pairs inside this many weeks up to it."""
    robust: bool = True
    """A second, Huber-weighted pass of each fit: a shill bid or a mis-described copy in one
    pair counts for less."""


@dataclass(frozen=True, slots=True)
class IndexPoint:
    week: date
    level: float
    low: float
    high: float
    pairs: int
    method: str
    """``base`` (the first week), ``wls``, ``median`` or ``carried``."""
    log_level: float = 0.0
    """``β``: the log level against the index's first week, unrounded (what a resume reads)."""
    se: float = 0.0
    """The standard error of the week's step (its band is ``β ± z·se``)."""


DEFAULT_INDEX = IndexParams()


PARTNERS = 4
"""How many of a variant's earlier weeks each of its sales is paired with (module docstring)."""
WITHIN_WEEKS = 25
"""The most weeks a pair may span: each week's fit reads the 26 weeks up to it."""


def variant_weeks(sales: Iterable[PricedSale]) -> dict[str, dict[date, list[float]]]:
    """Variant -> week -> the log USD prices of its sales that week (what :func:`pair_weeks` and
    :func:`weekly_pairs` read: an update grouping a category's sales once for both)."""
    by_variant: dict[str, dict[date, list[float]]] = defaultdict(lambda: defaultdict(list))
    for sale in sales:  # any order: the pairs are formed in their order, a median ignores order
        by_variant[sale.variant_id][week_of(sale.sold_at)].append(math.log(sale.price_usd))
    return by_variant


def pair_weeks(
    by_variant: Mapping[str, Mapping[date, Sequence[float]]], *, within: int = WITHIN_WEEKS
) -> tuple[date, date] | None:
    """The earliest first week and the latest second week of the pairs of :func:`variant_weeks`
    without forming them (None: no pair): the weeks of a variant's sales two of which are at most
    ``within`` weeks apart."""
    low: date | None = None
    high: date | None = None
    span = timedelta(weeks=within)
    for weeks in by_variant.values():
        ordered = sorted(weeks)
        for u, w in itertools.pairwise(ordered):
            if w - u <= span:
                low = u if low is None or u < low else low
                high = w if high is None or w > high else high
    return None if low is None or high is None else (low, high)


def sale_pairs(
    sales: Iterable[PricedSale],
    *,
    since: date | None = None,
    partners: int = PARTNERS,
    within: int = WITHIN_WEEKS,
) -> list[SalePair]:
    """Each sale paired with each of the ``partners`` latest earlier weeks (at most ``within``
    weeks before) in which its variant sold, against the median log price of that week, each pair
    weighing ``1/m`` (``m``: the partners it has); sorted. ``since``: only the pairs whose first
    week is ``since`` or later (the same pairs, with the same weights, as without it)."""
    return weekly_pairs(variant_weeks(sales), since=since, partners=partners, within=within)


def weekly_pairs(
    by_variant: Mapping[str, Mapping[date, Sequence[float]]],
    *,
    since: date | None = None,
    partners: int = PARTNERS,
    within: int = WITHIN_WEEKS,
) -> list[SalePair]:
    """:func:`sale_pairs` of the sales :func:`variant_weeks` grouped, formed in their sorted order
    instead of sorted after (a sort of every pair cost more than forming them): (second, first)
    cells in order, each filled variant by variant in order, a variant's sales of the week by log
    price (so by ``log_ratio``; their weight is the same). With ``since``, a week more than
    ``within`` weeks before it is never a partner of a week after it, so reading it changes
    nothing."""
    span = timedelta(weeks=within)
    cells: dict[tuple[date, date], list[SalePair]] = defaultdict(list)
    for variant_id, weeks in sorted(by_variant.items()):
        ordered = sorted(weeks)
        middle: dict[date, float] = {}
        for n, second in enumerate(ordered):
            if since is not None and second <= since:
                continue  # every pair of it starts before since
            found = [u for u in ordered[max(0, n - partners) : n] if second - u <= span]
            kept = [u for u in found if since is None or u >= since]
            if not kept:
                continue
            weight = 1.0 / len(found)
            ys = sorted(weeks[second])
            for first in kept:
                if first not in middle:
                    middle[first] = statistics.median(weeks[first])
                m = middle[first]
                cells[second, first] += [
                    SalePair(variant_id, first, second, y - m, weight) for y in ys
                ]
    return [pair for cell in sorted(cells) for pair in cells[cell]]


def _weeks(start: date, end: date) -> list[date]:
    return [start + timedelta(weeks=n) for n in range((end - start).days // 7 + 1)]


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the systems are a few dozen weeks wide)."""
    n = len(rhs)
    m = [[*row[:], rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: (abs(m[r][col]), -r))
        m[col], m[pivot] = m[pivot], m[col]
        lead = m[col][col]
        for r in range(col + 1, n):
            factor = m[r][col] / lead
            if factor:
                row, top = m[r], m[col]
                for c in range(col, n + 1):
                    row[c] -= factor * top[c]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        out[r] = (m[r][n] - sum(m[r][c] * out[c] for c in range(r + 1, n))) / m[r][r]
    return out


def _weight(pair: SalePair, model: tuple[float, float] | None) -> float:
    if model is None:
        return pair.weight
    a, b = model
    return pair.weight / (a + b * (pair.second - pair.first).days / 7)


HUBER = 1.345
"""Huber's constant: a pair whose standardised residual exceeds it weighs ``HUBER / |u|``."""
HUBER_PASSES = 3
"""Huber passes, each on the residuals of the one before (iteratively reweighted least squares):
one pass left the coin index of the bench's seed 9 3.1 % off its true path, three 2.8 %."""


@dataclass(frozen=True, slots=True)
class _Window:
    """The pairs inside one week's window as its fits read them, built once for the week's five
    solves and the passes over their residuals (each read the pairs' attributes again, and
    summed a pair into its cell through a dict): per pair, in the pairs' order, its weeks'
    positions in the window, ``y``, weight and the number of its (second, first) cell; the cells
    sorted, with the days between their two weeks."""

    seconds: list[int]
    firsts: list[int]
    ys: list[float]
    weights: list[float]
    cell_of: list[int]
    cells: list[tuple[int, int]]
    days: list[int]
    weeks: int


def _window(pairs: Sequence[SalePair], weeks: Sequence[date]) -> _Window:
    at = {week: n for n, week in enumerate(weeks)}
    seconds = [at[p.second] for p in pairs]
    firsts = [at[p.first] for p in pairs]
    cells = sorted(set(zip(seconds, firsts, strict=True)))
    number = {cell: n for n, cell in enumerate(cells)}
    return _Window(
        seconds=seconds,
        firsts=firsts,
        ys=[p.log_ratio for p in pairs],
        weights=[p.weight for p in pairs],
        cell_of=[number[cell] for cell in zip(seconds, firsts, strict=True)],
        cells=cells,
        days=[(weeks[i] - weeks[j]).days for i, j in cells],
        weeks=len(weeks),
    )


def _fit(
    window: _Window, model: tuple[float, float] | None, *, robust: bool = False
) -> list[float]:
    """``β`` of every week by weighted least squares on ``y = β_second - β_first`` (``β`` = 0 on
    the first week); ``robust``: :data:`HUBER_PASSES` more passes with Huber weights on the
    residuals of the pass before.
    The Huber pass standardises each residual by its variance model and by their robust spread
    (1.4826 x their median): the variance model, a mean of squares, is inflated by the very
    outliers the pass is for. A tiny penalty on ``(β_t - β_{t-1})²`` keeps a week no pair touches
    at its neighbour's level instead of leaving the system singular."""
    weights = window.weights
    if model is not None:  # a pair's weight over its cell's variance (one per cell)
        a, b = model
        variance = [a + b * days / 7 for days in window.days]
        weights = [w / variance[c] for w, c in zip(weights, window.cell_of, strict=True)]
    beta = _solve_cells(window, weights)
    if robust and model is not None and window.ys:
        a, b = model
        spreads = [math.sqrt(a + b * (i - j)) for i, j in window.cells]
        us = _residuals(window, beta, spreads)
        first = weights
        for _ in range(HUBER_PASSES):
            scale = 1.4826 * statistics.median(us) or 1.0
            weights = [
                w * (HUBER * scale / u if u > HUBER * scale else 1.0)
                for w, u in zip(first, us, strict=True)
            ]
            beta = _solve_cells(window, weights)
            us = _residuals(window, beta, spreads)
    return beta


def _residuals(window: _Window, beta: Sequence[float], spreads: Sequence[float]) -> list[float]:
    """``|y + β_first - β_second|`` of each pair over its cell's spread."""
    return [
        abs(y + beta[j] - beta[i]) / spreads[c]
        for y, i, j, c in zip(window.ys, window.seconds, window.firsts, window.cell_of, strict=True)
    ]


def _solve_cells(window: _Window, weights: Sequence[float]) -> list[float]:
    """``β`` of the window's weeks (``β`` = 0 on week 0) for the pairs' ``weights``: the weights
    and weighted ``y`` are summed per (second, first) cell first, in the pairs' order, and the
    normal equations are built from the cells (a few hundred) instead of from every pair."""
    total = [0.0] * len(window.cells)
    weighted = [0.0] * len(window.cells)
    for c, w, y in zip(window.cell_of, weights, window.ys, strict=True):
        total[c] += w
        weighted[c] += w * y
    size = window.weeks - 1  # the first week is not a parameter
    xtx = [[0.0] * size for _ in range(size)]
    xty = [0.0] * size
    for (i, j), w, wy in zip(window.cells, total, weighted, strict=True):
        i, j = i - 1, j - 1
        xtx[i][i] += w
        xty[i] += wy
        if j >= 0:
            xtx[j][j] += w
            xtx[i][j] -= w
            xtx[j][i] -= w
            xty[j] -= wy
    ridge = 1e-6
    for k in range(size):
        xtx[k][k] += ridge * (2 if k + 1 < size else 1)
        if k + 1 < size:
            xtx[k][k + 1] -= ridge
            xtx[k + 1][k] -= ridge
    return [0.0, *(_solve(xtx, xty) if size else [])]


def _variance_model(window: _Window, beta: Sequence[float]) -> tuple[float, float]:
    """``(a, b)`` of ``r² = a + b·Δ`` by least squares, kept positive (stage 2)."""
    xs = [window.days[c] / 7 for c in window.cell_of]
    rs = [
        (y + beta[j] - beta[i]) ** 2
        for y, i, j in zip(window.ys, window.seconds, window.firsts, strict=True)
    ]
    n = len(xs)
    mean_x, mean_r = sum(xs) / n, sum(rs) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    b = sum((x - mean_x) * (r - mean_r) for x, r in zip(xs, rs, strict=True)) / sxx if sxx else 0.0
    b = max(b, 0.0)
    a = max(mean_r - b * mean_x, 1e-4)
    return a, b


def _link(
    found: Sequence[SalePair], beta: dict[date, float], model: tuple[float, float], min_pairs: int
) -> tuple[float, float, str]:
    """This week's ``β`` (on the window's scale), its standard error and the method."""
    ws = [_weight(p, model) for p in found]
    ys = [p.log_ratio + beta[p.first] for p in found]
    week = found[0].second
    if len(found) >= min_pairs:
        value = beta[week]
        total = sum(ws)
        se = math.sqrt(sum((w * (y - value)) ** 2 for w, y in zip(ws, ys, strict=True))) / total
        return value, se, "wls"
    value = weighted_median(ys, ws)
    mad = weighted_median([abs(y - value) for y in ys], ws)
    spread = 1.4826 * mad if len(ys) >= 3 else math.sqrt(len(ws) / sum(ws))
    return value, 1.2533 * spread / math.sqrt(len(ys)), "median"


def repeat_sales_index(
    pairs: Sequence[SalePair],
    *,
    base: date | None = None,
    start: date | None = None,
    end: date | None = None,
    params: IndexParams = DEFAULT_INDEX,
    resume: Sequence[IndexPoint] = (),
    resume_from: date | None = None,
) -> list[IndexPoint]:
    """The weekly index of ``pairs`` from ``start`` (default: the earliest first sale's week) to
    ``end`` (default: the latest second sale's week), 100 at ``base``'s week (default: the first
    week). Empty when there are no pairs.

    ``resume``: the points of an earlier computation, reused as they are for the weeks before
    ``resume_from`` (the week of the earliest sale added, changed or removed since); the result
    equals a full computation on ``pairs``. Ignored unless it starts on the same first week and
    holds every week before ``resume_from``."""
    if not pairs:
        return []
    first = week_of(start) if start else min(p.first for p in pairs)
    last = week_of(end) if end else max(p.second for p in pairs)
    used = [p for p in pairs if p.first >= first and p.second <= last]
    weeks = _weeks(first, last)
    if not used:
        return []
    kept = _resumable(weeks, resume, resume_from)
    by_second: dict[date, list[SalePair]] = defaultdict(list)
    for pair in used:
        by_second[pair.second].append(pair)
    window = params.window_weeks
    beta: dict[date, float] = {weeks[0]: 0.0}
    info: dict[date, tuple[float, int, str]] = {weeks[0]: (0.0, 0, "base")}
    linked = [weeks[0]]  # weeks whose level came from a joint fit (and the first week)
    for n, week in enumerate(weeks[1:], start=1):
        if week in kept:
            point = kept[week]
            beta[week] = point.log_level
            info[week] = (point.se, point.pairs, point.method)
            if point.method == "wls":
                linked.append(week)
            continue
        span = weeks[max(0, n - window + 1) : n + 1]
        found = [p for p in by_second.get(week, ()) if p.first >= span[0]]
        if not found:
            beta[week] = beta[weeks[n - 1]]
            info[week] = (0.0, 0, "carried")
            continue
        inside = [p for w in span[1:] for p in by_second.get(w, ()) if p.first >= span[0]]
        frame = _window(inside, span)
        model = _variance_model(frame, _fit(frame, None))
        fitted = dict(zip(span, _fit(frame, model, robust=params.robust), strict=True))
        value, se, method = _link(found, fitted, model, params.min_pairs)
        # mean splice: the window's step from each earlier linked week inside it, onto that
        # week's published level, averaged (no linked week inside: from last week's level)
        anchors = [w for w in linked if w >= span[0]] or [weeks[n - 1]]
        beta[week] = sum(beta[a] + value - fitted[a] for a in anchors) / len(anchors)
        info[week] = (se, len(found), method)
        if method == "wls":
            linked.append(week)
    return index_points(weeks, beta, info, base=base, level=params.level)


def _resumable(
    weeks: Sequence[date], resume: Sequence[IndexPoint], resume_from: date | None
) -> dict[date, IndexPoint]:
    """The points of ``resume`` to reuse: every week before ``resume_from`` (none if any is
    missing or the first week moved)."""
    if not resume or resume_from is None or resume[0].week != weeks[0]:
        return {}
    reused = {p.week: p for p in resume if p.week < resume_from}
    needed = [w for w in weeks[1:] if w < resume_from]
    if any(w not in reused for w in needed):
        return {}
    return {w: reused[w] for w in needed}


def index_points(
    weeks: Sequence[date],
    beta: dict[date, float],
    info: dict[date, tuple[float, int, str]],
    *,
    base: date | None,
    level: float,
) -> list[IndexPoint]:
    """The published points from each week's ``β`` and ``(se, pairs, method)``: 100 at ``base``'s
    week (its first week when ``base`` is None or outside the index)."""
    base_beta = beta.get(week_of(base), 0.0) if base else 0.0
    z = NormalDist().inv_cdf((1 + level) / 2)
    points = []
    for week in weeks:
        se, n, method = info[week]
        b = beta[week] - base_beta
        points.append(
            IndexPoint(
                week=week,
                level=100 * math.exp(b),
                low=100 * math.exp(b - z * se),
                high=100 * math.exp(b + z * se),
                pairs=n,
                method=method,
                log_level=beta[week],
                se=se,
            )
        )
    return points

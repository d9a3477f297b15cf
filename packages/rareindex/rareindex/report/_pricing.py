"""The report's price-index parts: each category index as a chart, and each top asset's grade
ladder, read from what ``rareindex index build`` (and every resolve batch after it) published.

* :func:`index_chart` draws one index week by week: its level as a line, 100 at the base week as
  a dashed line, and its 80 % band (the interval of each week's level) as a shaded area when the
  index has one; an index without one (every week carried or at its base) shows instead the pairs
  of sales each week rests on, as bars under the line. Every week is a marker whose ``<title>``
  (the browser's tooltip) says its level, band, pairs and method. No script, nothing fetched.
* :func:`ladder_table` lists an asset's grades cheapest first with their estimates in USD, the
  interval, the sales and dates they rest on, the confidence label, and whether the estimate is
  the grade's own (``direct``) or borrowed from another grade through the grade curve
  (``derived``, marked, with the grade it came from).

Example:
    >>> pricing = load_pricing(conn, ["ast_01J…"])                       # doctest: +SKIP
    >>> index_chart(pricing.indices[0]).startswith("<svg")                # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..pricing import Estimate
from ..storage import Connection
from ..storage.pricing_store import StoredIndexPoint, asset_estimates, index_ids, index_series
from ._chart import linear_ticks, time_ticks
from ._format import compact_money, esc, money

__all__ = [
    "INDEX_COLOR",
    "IndexSeries",
    "Ladder",
    "PricingSection",
    "index_chart",
    "ladder_table",
    "load_pricing",
    "render_indices",
]

INDEX_COLOR = "#0072B2"
BAND_COLOR = "#56B4E9"
PAIRS_COLOR = "#8c959f"


@dataclass(frozen=True, slots=True)
class IndexSeries:
    index_id: str
    points: tuple[StoredIndexPoint, ...]

    @property
    def name(self) -> str:
        """``sports`` for ``category:sports``."""
        return self.index_id.split(":", 1)[1]

    @property
    def has_band(self) -> bool:
        return any(p.high > p.low for p in self.points)


@dataclass(frozen=True, slots=True)
class Ladder:
    """The estimated grades of one asset, cheapest first: ``(grade label, estimate)``."""

    asset_id: str
    rungs: tuple[tuple[str, Estimate], ...]


@dataclass(frozen=True, slots=True)
class PricingSection:
    indices: tuple[IndexSeries, ...]
    """The category indices, by id."""
    ladders: dict[str, Ladder]
    """Asset id -> its grade ladder (only assets with an estimate)."""

    @property
    def built(self) -> bool:
        return bool(self.indices or self.ladders)


def load_pricing(conn: Connection, asset_ids: Sequence[str]) -> PricingSection:
    """The published category indices and the grade ladders of ``asset_ids``."""
    indices = tuple(
        IndexSeries(index_id, tuple(index_series(conn, index_id)))
        for index_id, *_ in index_ids(conn)
        if index_id.startswith("category:")
    )
    ladders = {}
    for asset_id in asset_ids:
        rungs = asset_estimates(conn, asset_id)
        if rungs:
            ladders[asset_id] = Ladder(asset_id, tuple(rungs))
    return PricingSection(indices, ladders)


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _at(week: object) -> datetime:
    return datetime.combine(week, datetime.min.time(), UTC)  # type: ignore[arg-type]


def index_chart(series: IndexSeries, *, width: int = 440, plot_height: int = 170) -> str:
    """An inline ``<svg class="index-chart">`` of one index (module docstring)."""
    left, right, top = 46.0, 14.0, 12.0
    plot_w = width - left - right
    points = series.points
    band = series.has_band
    strip = 0.0 if band else 34.0
    height = top + plot_height + strip + 44
    title = f"{series.index_id} weekly index"
    out = [
        '<svg class="index-chart" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{_f(height)}" viewBox="0 0 {width} {_f(height)}" role="img" '
        'font-family="system-ui, sans-serif" font-size="11">',
        f"<title>{esc(title)}</title>",
        f'<rect x="{_f(left)}" y="{_f(top)}" width="{_f(plot_w)}" height="{plot_height}" '
        'fill="#fafbfc" stroke="#d0d7de"/>',
    ]
    if not points:
        out.append(
            f'<text x="{_f(left + plot_w / 2)}" y="{_f(top + plot_height / 2)}" '
            'text-anchor="middle" fill="#57606a">no weeks</text></svg>'
        )
        return "".join(out)
    x0 = _at(points[0].week).timestamp() - 3 * 86_400
    x1 = _at(points[-1].week).timestamp() + 3 * 86_400

    def px(week: object) -> float:
        return left + (_at(week).timestamp() - x0) / (x1 - x0) * plot_w

    lows = [float(p.low) for p in points] + [100.0]
    highs = [float(p.high) for p in points] + [100.0]
    ticks = linear_ticks(min(lows), max(highs))
    y0, y1 = ticks[0], ticks[-1]

    def py(value: float) -> float:
        return top + plot_height - (value - y0) / ((y1 - y0) or 1.0) * plot_height

    for value in ticks:
        y = py(value)
        out.append(
            f'<line x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(y)}" y2="{_f(y)}" '
            'stroke="#e6e9ed"/>'
            f'<text x="{_f(left - 6)}" y="{_f(y + 4)}" text-anchor="end" fill="#57606a">'
            f"{esc(compact_money(value))}</text>"
        )
    start, end = datetime.fromtimestamp(x0, UTC), datetime.fromtimestamp(x1, UTC)
    for when_, label in time_ticks(start, end):
        x = left + (when_.timestamp() - x0) / (x1 - x0) * plot_w
        out.append(
            f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top + plot_height)}" '
            f'y2="{_f(top + plot_height + 4)}" stroke="#8c959f"/>'
            f'<text x="{_f(x)}" y="{_f(top + plot_height + 16)}" text-anchor="middle" '
            f'fill="#57606a">{esc(label)}</text>'
        )
    base = py(100.0)
    out.append(
        f'<line class="base" x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(base)}" '
        f'y2="{_f(base)}" stroke="#57606a" stroke-dasharray="4 3"/>'
    )
    if band:
        upper = [f"{_f(px(p.week))},{_f(py(float(p.high)))}" for p in points]
        lower = [f"{_f(px(p.week))},{_f(py(float(p.low)))}" for p in reversed(points)]
        out.append(
            f'<polygon class="band" points="{" ".join(upper + lower)}" fill="{BAND_COLOR}" '
            'fill-opacity="0.3" stroke="none"/>'
        )
    else:
        most = max((p.pairs for p in points), default=0) or 1
        floor = top + plot_height + 22 + strip
        bar = max(plot_w / len(points) - 1.0, 1.0)
        for p in points:
            h = (strip - 6) * p.pairs / most
            out.append(
                f'<rect class="pairs" x="{_f(px(p.week) - bar / 2)}" y="{_f(floor - h)}" '
                f'width="{_f(bar)}" height="{_f(h)}" fill="{PAIRS_COLOR}"/>'
            )
        out.append(
            f'<text x="{_f(left - 6)}" y="{_f(floor)}" text-anchor="end" fill="#57606a">'
            f"pairs (max {most})</text>"
        )
    line = " ".join(f"{_f(px(p.week))},{_f(py(float(p.level)))}" for p in points)
    out.append(
        f'<polyline class="level" points="{line}" fill="none" stroke="{INDEX_COLOR}" '
        'stroke-width="1.6"/>'
    )
    for p in points:
        tip = (
            f"week of {p.week}: {float(p.level):.1f} (80% band {float(p.low):.1f}"
            f"–{float(p.high):.1f}), {p.pairs} pairs, {p.method}"
        )
        out.append(
            f'<g class="ipoint"><title>{esc(tip)}</title><circle cx="{_f(px(p.week))}" '
            f'cy="{_f(py(float(p.level)))}" r="2.2" fill="{INDEX_COLOR}"/></g>'
        )
    y = top + plot_height + strip + 36
    legend = "level (100 = base week), dashed: 100" + (
        ", shaded: 80% band" if band else ", bars: pairs a week"
    )
    out.append(f'<text x="8" y="{_f(y)}" fill="#24292f">{esc(legend)}</text></svg>')
    return "".join(out)


def _change(points: Sequence[StoredIndexPoint]) -> str:
    """The last level and its change over the last four weeks, in words."""
    last = points[-1]
    back = [p for p in points if p.week <= last.week - timedelta(weeks=4)]
    level = f"{float(last.level):.1f}"
    if not back:
        return f"now {level}"
    change = float(last.level) / float(back[-1].level) - 1
    return f"now {level} ({change:+.1%} over 4 weeks)"


def render_indices(pricing: PricingSection) -> str:
    """The category indices section's body."""
    if not pricing.indices:
        return (
            '<p class="empty">No index published yet: run <code>rareindex index build</code> '
            "(the demo does), then write the report again.</p>"
        )
    intro = (
        '<p class="note">A repeat-sales index per category: how the prices of the same variants '
        "moved, week by week, chain-linked, 100 at the base week "
        "(docs/index-methodology.md#4-the-repeat-sales-index). "
        "The shaded band is each week's 80% interval; an index without one shows the pairs of "
        "sales each week rests on. Hover a week for its level, band, pairs and method.</p>"
    )
    figures = []
    for s in pricing.indices:
        weeks = len(s.points)
        pairs = sum(p.pairs for p in s.points)
        caption = (
            f"<figcaption>{esc(s.name)} <span class=muted>· {weeks} week"
            f"{'s' if weeks != 1 else ''}, {pairs:,} pairs · {esc(_change(s.points))}"
            "</span></figcaption>"
        )
        figures.append(f'<figure class="index">{caption}{index_chart(s)}</figure>')
    return intro + f'<div class="variants">{"".join(figures)}</div>'


def ladder_table(ladder: Ladder) -> str:
    """One asset's grade ladder as a table (module docstring)."""
    labels = {est.variant_id: label for label, est in ladder.rungs}
    rows = []
    for label, est in ladder.rungs:
        derived = est.basis == "derived"
        source = labels.get(est.derived_from or "", "another grade")
        basis = (
            f'<span class="badge derived">derived</span> from {esc(source)}'
            if derived
            else "direct"
        )
        local = (
            f"<br><span class=muted>{esc(money(float(est.value), est.currency))}</span>"
            if est.currency != "USD"
            else ""
        )
        rows.append(
            f'<tr class="{"derived" if derived else "direct"}"><td>{esc(label)}</td>'
            f"<td class='num nowrap'>{esc(money(est.value_usd, 'USD'))}{local}</td>"
            f"<td class='num nowrap'>{esc(money(est.low_usd, 'USD'))} – "
            f"{esc(money(est.high_usd, 'USD'))}</td>"
            f"<td class=num>{est.n_sales}</td>"
            f"<td class=nowrap>{esc(est.first_sale)} – {esc(est.last_sale)}</td>"
            f"<td>{esc(est.confidence)}</td><td>{basis}</td></tr>"
        )
    head = (
        "<tr><th>Grade</th><th class=num>Estimate</th><th class=num>80% interval</th>"
        "<th class=num>Sales</th><th>Dates</th><th>Confidence</th><th>Basis</th></tr>"
    )
    return (
        '<table class="ladder"><caption>Grade ladder: what each grade is worth now '
        "(a derived grade has no or too few sales of its own: its value is borrowed from "
        "another grade through the grade curve, with a wider interval)</caption>"
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    )

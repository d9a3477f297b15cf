"""A small server-side SVG chart: prices over time, one marker style per series, marked points.

No JavaScript and nothing fetched: the SVG is text inlined in the page. Hovering a marker shows
its ``<title>`` (the browser's own tooltip). The y axis turns logarithmic when the prices span
more than a factor of :data:`LOG_SPAN` — the scale price anomalies are judged on — so one outlier
does not flatten the rest into a line.

Example:
    >>> styles = series_styles(["Fake Auctions", "Market"])
    >>> point = ChartPoint(datetime(2026, 4, 11, tzinfo=UTC), 29400.0, "Fake Auctions")
    >>> price_chart([point], styles, currency="USD", title="PSA 8").startswith("<svg")
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from ._format import compact_money, esc

__all__ = [
    "ANOMALY_COLOR",
    "FLAG_COLOR",
    "LOG_SPAN",
    "ChartPoint",
    "Mark",
    "SeriesStyle",
    "linear_ticks",
    "log_ticks",
    "marker_svg",
    "price_chart",
    "series_styles",
    "time_ticks",
]

# Okabe-Ito: told apart with the common colour-vision deficiencies; red is kept for anomalies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#332288", "#999933", "#000000")
MARKERS = ("circle", "square", "triangle", "diamond", "triangle_down")
ANOMALY_COLOR = "#D62728"
FLAG_COLOR = "#B8860B"
LOG_SPAN = 20.0
"""Prices spanning more than this factor are drawn on a log scale."""

Mark = Literal["anomaly", "flag"]

_FONT_PX = 11
_CHAR_PX = 6.3  # average advance of an 11 px sans-serif character, for laying out the legend


@dataclass(frozen=True, slots=True)
class SeriesStyle:
    color: str
    marker: str


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """One marker: when, how much, which series, and how it is marked."""

    x: datetime
    y: float
    series: str
    mark: Mark | None = None
    """``anomaly``: a red ring (a statistical outlier); ``flag``: a dashed ring (lot, hidden
    price, a quality flag)."""
    hollow: bool = False
    """Drawn unfilled: the price is kept out of the index (and out of the series' line)."""
    note: int | None = None
    """A number printed beside the mark, referring to the list under the chart."""
    tooltip: str = ""


def series_styles(names: Sequence[str]) -> dict[str, SeriesStyle]:
    """A colour and marker per name, stable for the same sorted names."""
    return {
        name: SeriesStyle(PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)])
        for i, name in enumerate(sorted(set(names)))
    }


# --- scales ------------------------------------------------------------------------------------


def _nice(value: float, *, round_: bool) -> float:
    exponent = math.floor(math.log10(value))
    fraction = value / 10**exponent
    if round_:
        nice = 1 if fraction < 1.5 else 2 if fraction < 3 else 5 if fraction < 7 else 10
    else:
        nice = 1 if fraction <= 1 else 2 if fraction <= 2 else 5 if fraction <= 5 else 10
    return float(nice * 10.0**exponent)


def linear_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]`` (the first and last are the axis' ends)."""
    if hi <= lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    step = _nice(_nice(hi - lo, round_=False) / max(count - 1, 1), round_=True)
    start = math.floor(lo / step) * step
    if start < 0 <= lo:
        start = 0.0  # a price axis does not go below zero
    n = math.ceil(round((hi - start) / step, 9))
    return [round(start + i * step, 10) for i in range(n + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks covering ``[lo, hi]`` (both > 0); decades only when that is too many."""
    low = math.floor(math.log10(lo))
    high = math.ceil(math.log10(hi))
    for mantissas in ((1, 2, 5), (1,)):
        candidates = [m * 10.0**e for e in range(low, high + 1) for m in mantissas]
        start = max(t for t in candidates if t <= lo * (1 + 1e-9))
        end = min(t for t in candidates if t >= hi * (1 - 1e-9))
        ticks = [t for t in candidates if start <= t <= end]
        if len(ticks) <= 7:
            return ticks
    return ticks


def _add_months(day: datetime, months: int) -> datetime:
    index = day.year * 12 + day.month - 1 + months
    return day.replace(year=index // 12, month=index % 12 + 1, day=1)


def time_ticks(start: datetime, end: datetime, max_ticks: int = 5) -> list[tuple[datetime, str]]:
    """Tick dates in ``[start, end]`` with labels: days (``Apr 11``) or months (``Apr 2026``)."""
    span_days = max((end - start).total_seconds() / 86400, 1e-9)
    midnight = start.replace(hour=0, minute=0, second=0, microsecond=0)
    for step in (1, 2, 7, 14):
        if span_days / step <= max_ticks:
            day = midnight if midnight >= start else midnight + timedelta(days=1)
            ticks = []
            while day <= end:
                ticks.append((day, f"{day:%b} {day.day}"))
                day += timedelta(days=step)
            return ticks
    for months in (1, 2, 3, 6, 12, 24, 60):
        if span_days / (30.44 * months) <= max_ticks:
            break
    month = midnight.replace(day=1)
    if month < start:
        month = _add_months(month, 1)
    while (month.month - 1) % min(months, 12):
        month = _add_months(month, 1)
    ticks = []
    while month <= end:
        label = f"{month:%Y}" if months >= 12 else f"{month:%b %Y}"
        ticks.append((month, label))
        month = _add_months(month, months)
    return ticks


# --- drawing ----------------------------------------------------------------------------------


def _f(value: float) -> str:
    return f"{value:.1f}"


def marker_svg(kind: str, x: float, y: float, size: float, color: str, *, hollow: bool) -> str:
    """One marker shape centred on (x, y)."""
    fill = "#fff" if hollow else color
    paint = f'fill="{fill}" stroke="{color}" stroke-width="{1.6 if hollow else 1}"'
    if kind == "circle":
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(size)}" {paint}/>'
    if kind == "square":
        s = size * 0.9
        return (
            f'<rect x="{_f(x - s)}" y="{_f(y - s)}" width="{_f(2 * s)}" height="{_f(2 * s)}" '
            f"{paint}/>"
        )
    shapes = {
        "triangle": ((0, -1.2), (1.05, 0.75), (-1.05, 0.75)),
        "triangle_down": ((0, 1.2), (1.05, -0.75), (-1.05, -0.75)),
        "diamond": ((0, -1.3), (1.1, 0), (0, 1.3), (-1.1, 0)),
    }
    corners = shapes.get(kind, shapes["diamond"])
    path = " ".join(f"{_f(x + dx * size)},{_f(y + dy * size)}" for dx, dy in corners)
    return f'<polygon points="{path}" {paint}/>'


def _ring(x: float, y: float, mark: Mark) -> str:
    if mark == "anomaly":
        return (
            f'<circle class="mark-anomaly" cx="{_f(x)}" cy="{_f(y)}" r="9" fill="none" '
            f'stroke="{ANOMALY_COLOR}" stroke-width="2"/>'
        )
    return (
        f'<circle class="mark-flag" cx="{_f(x)}" cy="{_f(y)}" r="8.5" fill="none" '
        f'stroke="{FLAG_COLOR}" stroke-width="1.6" stroke-dasharray="3 2"/>'
    )


@dataclass(frozen=True, slots=True)
class _Frame:
    left: float
    top: float
    width: float
    height: float
    x0: float
    x1: float
    y0: float
    y1: float
    log: bool

    def px(self, when: datetime) -> float:
        return self.left + (when.timestamp() - self.x0) / (self.x1 - self.x0) * self.width

    def py(self, value: float) -> float:
        if self.log:
            v, lo, hi = math.log10(value), math.log10(self.y0), math.log10(self.y1)
        else:
            v, lo, hi = value, self.y0, self.y1
        return self.top + self.height - (v - lo) / (hi - lo) * self.height


def _legend(
    names: Sequence[str], styles: Mapping[str, SeriesStyle], marks: set[Mark], width: float
) -> tuple[list[tuple[str, str]], int]:
    """Legend items as (swatch svg at 0,0, label), and how many rows they need."""
    items = [
        (marker_svg(styles[n].marker, 0, 0, 4.5, styles[n].color, hollow=False), n) for n in names
    ]
    if "anomaly" in marks:
        items.append((_ring(0, 0, "anomaly"), "price anomaly"))
    if "flag" in marks:
        items.append((_ring(0, 0, "flag"), "lot / hidden price / flag"))
    rows, x = 1, 0.0
    for _, label in items:
        w = 22 + len(label) * _CHAR_PX + 14
        if x and x + w > width:
            rows, x = rows + 1, 0.0
        x += w
    return items, rows


def price_chart(
    points: Sequence[ChartPoint],
    styles: Mapping[str, SeriesStyle],
    *,
    currency: str,
    title: str,
    width: int = 440,
    plot_height: int = 170,
) -> str:
    """An inline ``<svg>``: x the date, y the price in ``currency``, a legend of the series and
    marks present. Every label is escaped. Points must have ``y > 0`` on a log axis; an empty
    ``points`` draws an empty frame saying so."""
    left, right, top = 58.0, 14.0, 12.0
    plot_w = width - left - right
    names = sorted({p.series for p in points})
    marks = {p.mark for p in points if p.mark is not None}
    legend, rows = _legend(names, styles, marks, plot_w + left - 8)
    height = top + plot_height + 34 + rows * 17 + 4
    out = [
        '<svg class="chart" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{_f(height)}" '
        f'viewBox="0 0 {width} {_f(height)}" role="img" font-family="system-ui, sans-serif" '
        f'font-size="{_FONT_PX}">',
        f"<title>{esc(title)}</title>",
        f'<rect x="{_f(left)}" y="{_f(top)}" width="{_f(plot_w)}" height="{plot_height}" '
        'fill="#fafbfc" stroke="#d0d7de"/>',
    ]
    if not points:
        out.append(
            f'<text x="{_f(left + plot_w / 2)}" y="{_f(top + plot_height / 2)}" '
            'text-anchor="middle" fill="#57606a">no priced sales</text></svg>'
        )
        return "".join(out)

    xs = [p.x.timestamp() for p in points]
    span = max(xs) - min(xs)
    pad = 3 * 86400 if span == 0 else max(span * 0.05, 43200)
    x0, x1 = min(xs) - pad, max(xs) + pad
    ys = [p.y for p in points]
    lo, hi = min(ys), max(ys)
    use_log = lo > 0 and hi / lo > LOG_SPAN
    y_ticks = log_ticks(lo, hi) if use_log else linear_ticks(lo, hi)
    frame = _Frame(left, top, plot_w, plot_height, x0, x1, y_ticks[0], y_ticks[-1], use_log)

    for value in y_ticks:
        y = frame.py(value)
        out.append(
            f'<line x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(y)}" y2="{_f(y)}" '
            'stroke="#e6e9ed"/>'
            f'<text x="{_f(left - 6)}" y="{_f(y + 4)}" text-anchor="end" fill="#57606a">'
            f"{esc(compact_money(value))}</text>"
        )
    start = datetime.fromtimestamp(x0, UTC)
    end = datetime.fromtimestamp(x1, UTC)
    for when, label in time_ticks(start, end):
        x = frame.px(when)
        out.append(
            f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top + plot_height)}" '
            f'y2="{_f(top + plot_height + 4)}" stroke="#8c959f"/>'
            f'<text x="{_f(x)}" y="{_f(top + plot_height + 16)}" text-anchor="middle" '
            f'fill="#57606a">{esc(label)}</text>'
        )
    axis = f"{currency}, log scale" if use_log else currency
    out.append(
        f'<text x="12" y="{_f(top + plot_height / 2)}" text-anchor="middle" fill="#57606a" '
        f'transform="rotate(-90 12 {_f(top + plot_height / 2)})">{esc(axis)}</text>'
    )

    for name in names:  # a thin line through each series' indexed prices, in date order
        line = sorted(
            (p for p in points if p.series == name and not p.hollow and p.mark != "anomaly"),
            key=lambda p: p.x,
        )
        if len(line) >= 2:
            coords = " ".join(f"{_f(frame.px(p.x))},{_f(frame.py(p.y))}" for p in line)
            out.append(
                f'<polyline points="{coords}" fill="none" stroke="{styles[name].color}" '
                'stroke-width="1.2" stroke-opacity="0.55"/>'
            )
    for p in points:
        x, y = frame.px(p.x), frame.py(p.y)
        style = styles[p.series]
        out.append(
            f'<g class="point"><title>{esc(p.tooltip or p.series)}</title>'
            f"{marker_svg(style.marker, x, y, 4.5, style.color, hollow=p.hollow)}</g>"
        )
    for p in points:
        if p.mark is None:
            continue
        x, y = frame.px(p.x), frame.py(p.y)
        out.append(_ring(x, y, p.mark))
        if p.note is not None:
            color = ANOMALY_COLOR if p.mark == "anomaly" else FLAG_COLOR
            tx = min(x + 10, left + plot_w - 8)
            ty = max(y - 8, top + 10)
            out.append(
                f'<text class="note" x="{_f(tx)}" y="{_f(ty)}" fill="{color}" '
                f'font-weight="700" font-size="10">{p.note}</text>'
            )

    x, y = 8.0, top + plot_height + 36
    for swatch, label in legend:
        w = 22 + len(label) * _CHAR_PX + 14
        if x > 8 and x + w > width - 8:
            x, y = 8.0, y + 17
        out.append(
            f'<g class="legend" transform="translate({_f(x + 7)} {_f(y - 4)})">{swatch}</g>'
            f'<text x="{_f(x + 20)}" y="{_f(y)}" fill="#24292f">{esc(label)}</text>'
        )
        x += w
    out.append("</svg>")
    return "".join(out)

"""The static HTML report: ``rareindex report`` and the end of ``rareindex demo``.

One self-contained ``index.html`` (styles and SVG charts inline, no script, nothing fetched from a
network) showing what the database holds: the index in numbers, coverage per category and source,
connector health with each connector's last run, and for the most-traded assets a price-history
chart per variant across sources in one currency, with price anomalies, lots and hidden prices
marked and listed. See docs/report.md.

Example:
    >>> path = write_report(engine, Path("data/report"), currency="EUR", top=5)  # doctest: +SKIP
    >>> path.name                                                                # doctest: +SKIP
    'index.html'
"""

from ._chart import ChartPoint, SeriesStyle, price_chart, series_styles
from ._data import AssetHistory, ReportData, VariantHistory, load_report
from ._page import render_report
from ._write import write_report

__all__ = [
    "AssetHistory",
    "ChartPoint",
    "ReportData",
    "SeriesStyle",
    "VariantHistory",
    "load_report",
    "price_chart",
    "render_report",
    "series_styles",
    "write_report",
]

"""The report's HTML: one self-contained page (styles and SVG charts inline, no script, nothing
fetched), rendered from :class:`~._data.ReportData` by :func:`render_report`.

Sections: the index in numbers, coverage per category and source, connector health with the
last run, and one price-history chart per variant of the most-traded assets. Text from the
database is escaped everywhere; only http(s) sale URLs become links.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from .._version import __version__
from ..storage.admin_queries import DOWN_HEALTH, UP_HEALTH, ConnectorOverview, CoverageCount
from ..storage.report_queries import SalePoint
from ._chart import (
    ANOMALY_COLOR,
    FLAG_COLOR,
    ChartPoint,
    Mark,
    SeriesStyle,
    price_chart,
    series_styles,
)
from ._data import (
    AssetHistory,
    ReportData,
    VariantHistory,
    flag_words,
    is_excluded,
    variant_label,
)
from ._format import age, esc, money, safe_href, when
from ._pricing import Ladder, PricingSection, ladder_table, render_indices

__all__ = ["render_report"]

STYLE = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #24292f; background: #f6f8fa; }
main { max-width: 1380px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 16px; margin: 0 0 2px; }
p.meta, p.note, .muted { color: #57606a; }
.stale { color: #9a3412; }
p.meta { margin: 0 0 12px; }
nav a { margin-right: 14px; }
a { color: #0969da; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 12px; }
.card { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 10px 14px;
        min-width: 150px; }
.card .value { font-size: 22px; font-weight: 600; }
.card .label { color: #57606a; font-size: 12px; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid #d0d7de; }
th, td { text-align: left; padding: 5px 9px; border-bottom: 1px solid #eaeef2;
         vertical-align: top; }
th { background: #f0f3f6; font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.nowrap, th { white-space: nowrap; }
.ago { color: #57606a; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fafbfc; }
tr.nothing td { color: #8c959f; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px;
         font-weight: 600; color: #fff; background: #8c959f; }
.badge.UP { background: #1a7f37; } .badge.DEGRADED { background: #bf8700; }
.badge.BROKEN { background: #cf222e; } .badge.MAINTENANCE { background: #0a7ea4; }
.badge.DISABLED, .badge.none { background: #8c959f; }
.badge.anomaly { background: ANOMALY; } .badge.flag { background: FLAG; }
.empty { background: #fff; border: 1px dashed #d0d7de; border-radius: 6px; padding: 14px 18px; }
article.asset { background: #fff; border: 1px solid #d0d7de; border-radius: 6px;
                padding: 14px 16px; margin: 16px 0; }
.variants { display: flex; flex-wrap: wrap; gap: 14px; margin-top: 10px; }
figure.variant { margin: 0; width: 410px; }
figure.variant figcaption { font-weight: 600; margin-bottom: 2px; }
figure.variant figcaption .muted { font-weight: 400; }
ol.flagged { margin: 4px 0 0; padding-left: 22px; font-size: 12px; }
ol.flagged li { margin: 2px 0; }
code { background: #eaeef2; padding: 0 4px; border-radius: 4px; }
.badge.derived { background: #6e40c9; }
table.ladder { margin-top: 10px; }
table.ladder caption { text-align: left; color: #57606a; font-size: 12px; padding: 4px 0; }
tr.derived td { color: #57606a; font-style: italic; }
figure.index { margin: 0; width: 450px; background: #fff; border: 1px solid #d0d7de;
               border-radius: 6px; padding: 8px; }
figure.index figcaption { font-weight: 600; margin-bottom: 2px; }
figure.index figcaption .muted { font-weight: 400; }
footer { margin-top: 36px; color: #57606a; font-size: 12px; }
""".replace("ANOMALY", ANOMALY_COLOR).replace("FLAG", FLAG_COLOR)


def _cards(data: ReportData) -> str:
    s = data.summary
    sales = sum(n for n, _ in s.sales_by_source.values())
    matched = sum(m for _, m in s.sales_by_source.values())
    anomalies = sum(data.flags.anomalies.values())
    health = [c.health.status for c in data.connectors if c.health is not None]
    up = sum(1 for h in health if h in UP_HEALTH)
    down = sum(1 for h in health if h in DOWN_HEALTH)
    by_reason = ", ".join(f"{n} {r}" for r, n in data.flags.anomalies.items()) or "none"
    cards = [
        (f"{s.assets:,}", "assets in the catalog"),
        (f"{s.assets_seen:,}", "assets with observations"),
        (f"{s.variants:,}", "variants (grader x grade)"),
        (f"{sales:,}", f"sales ({matched:,} matched to an asset)"),
        (f"{len(s.sales_by_source)}", "sources with sales"),
        (f"{anomalies:,}", f"price anomalies flagged ({by_reason})"),
        (f"{data.flags.lots:,} / {data.flags.hidden_prices:,}", "lots / hidden prices"),
        (f"{up} up / {down} down", f"connectors ({len(data.connectors)} stored)"),
    ]
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="value">{esc(v)}</div>'
            f'<div class="label">{esc(label)}</div></div>'
            for v, label in cards
        )
        + "</div>"
    )


def _dated(value: object, data: ReportData) -> str:
    if isinstance(value, str):  # an aggregate SQLite returned untyped
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return esc(value)
    if not isinstance(value, datetime):
        return "-"
    ago = esc(age(value, data.generated_at))
    return f'<span class="nowrap">{esc(when(value))}</span> <span class="ago">({ago} ago)</span>'


def _coverage(data: ReportData) -> str:
    if not data.coverage:
        return (
            '<p class="empty">No sources yet: nothing has been crawled. Run '
            "<code>rareindex demo</code> or <code>rareindex crawl ID</code>.</p>"
        )
    head = (
        "<tr><th>Category</th><th>Source</th><th class=num>Assets</th><th class=num>Variants</th>"
        "<th class=num>Sales, 30 d</th><th>Newest sale</th><th>Newest price observation</th>"
        "<th>Newest fetch</th><th>Connectors</th></tr>"
    )
    rows = []
    for c in data.coverage:
        category = esc(c.category) if c.category else '<span class="muted">not resolved</span>'
        nothing = not (c.assets or c.variants or c.newest_sale_at or c.newest_observation_at)
        rows.append(
            f"<tr{' class=nothing' if nothing else ''}><td>{category}</td>"
            f"<td>{esc(c.source_name)}<br>"
            f'<span class="muted">{esc(c.source_id)}</span></td>'
            f"<td class=num>{c.assets:,}</td><td class=num>{c.variants:,}</td>"
            f"<td class=num>{c.sales_recent:,}</td><td>{_dated(c.newest_sale_at, data)}</td>"
            f"<td>{_dated(c.newest_observation_at, data)}</td>"
            f"<td>{_dated(c.newest_raw_fetch_at, data)}</td><td>{_connectors_cell(c)}</td></tr>"
        )
    since = esc(when(data.recent_since))
    return (
        f'<p class="note">Sales, 30 d: sales since {since}, the 30 days before the newest sale. '
        "Connectors are counted by their latest health snapshot (UP and DEGRADED are up). "
        "Grey rows: categories a connector declares where nothing has been observed yet.</p>"
        f'<table class="coverage"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _fx(data: ReportData) -> str:
    """The FX line under coverage: the newest ECB rate against the newest sale (stale when more
    than ``RI_FX_STALE_DAYS`` behind), and the sales no rate prices, by currency and reason."""
    fx = data.fx
    if fx is None or fx.newest_sale_date is None:
        return ""
    if fx.newest_rate_date is None:
        rates = (
            '<strong class="stale">FX rates: none loaded</strong> (stale): no sale is priced; '
            "run <code>rareindex fx load</code>."
        )
    else:
        lag = fx.lag_days or 0
        when_ = (
            f"{esc(str(fx.newest_rate_date))}, {lag:,} days behind the newest sale"
            if lag > 0
            else f"{esc(str(fx.newest_rate_date))}, on or after the newest sale"
        )
        rates = (
            f'<strong class="stale">FX rates stale</strong>: the newest ECB rate is of {when_} '
            f"(more than {fx.stale_days}); load a newer ECB file with "
            "<code>rareindex fx load PATH</code>."
            if fx.stale
            else f"FX rates: the newest ECB rate is of {when_}."
        )
    parts = [
        rates,
        f"{_count(fx.converted, 'sale')} priced"
        + (
            f", {_count(fx.stale_sales, 'sale')} at a rate more than {fx.stale_days} days older "
            "than the sale (stale)"
            if fx.stale_sales
            else ""
        )
        + ".",
    ]
    if fx.missing:
        reasons = {"no_ecb_rate": "no ECB rate", "no_rate_on_date": "no rate on the date"}
        missing = ", ".join(
            f"{esc(currency)} {n:,} ({reasons.get(reason, esc(reason))})"
            for (reason, currency), n in sorted(fx.missing.items(), key=lambda kv: kv[0][::-1])
        )
        parts.append(f"Not priced (null): {missing}.")
    return f'<p class="note fx">{" ".join(parts)}</p>'


def _connectors_cell(c: CoverageCount) -> str:
    parts = [f'<span class="badge UP">{c.connectors_up} up</span>']
    if c.connectors_down:
        parts.append(f'<span class="badge BROKEN">{c.connectors_down} down</span>')
    if c.connectors_unchecked:
        parts.append(f'<span class="badge none">{c.connectors_unchecked} unchecked</span>')
    return " ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _last_run(c: ConnectorOverview, data: ReportData) -> str:
    run = c.last_run
    if run is None:
        return '<span class="muted">never run</span>'
    outcome = f" ({esc(run.outcome)})" if run.outcome and run.outcome != run.status else ""
    failure = f", {esc(run.failure_reason)}" if run.failure_reason else ""
    finished = run.finished_at or run.started_at or run.queued_at
    return (
        f"{esc(run.status)}{outcome}{failure}: {_count(run.pages, 'page')}, "
        f"{_count(run.records, 'record')}"
        f"<br>{_dated(finished, data)}"
    )


def _health(data: ReportData) -> str:
    if not data.connectors:
        return '<p class="empty">No connectors are stored yet.</p>'
    rows = []
    for c in data.connectors:
        h = c.health
        if h is None:
            state = '<span class="badge none">unchecked</span>'
            reasons = '<span class="muted">run <code>rareindex health</code></span>'
            checked = "-"
        else:
            state = f'<span class="badge {esc(h.status)}">{esc(h.status)}</span>'
            listed = (h.details or {}).get("reasons") or []
            reasons = esc(", ".join(str(r) for r in listed)) if listed else "-"
            checked = _dated(h.checked_at, data)
        rows.append(
            f"<tr><td>{esc(c.id)}</td><td>{esc(c.source_name)}</td><td>{esc(c.status)}</td>"
            f"<td>{state}</td><td>{reasons}</td><td>{checked}</td>"
            f"<td>{_last_run(c, data)}</td></tr>"
        )
    head = (
        "<tr><th>Connector</th><th>Source</th><th>Status</th><th>Health</th><th>Reasons</th>"
        "<th>Checked</th><th>Last run</th></tr>"
    )
    return f'<table class="health"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _tooltip(p: SalePoint, currency: str) -> str:
    assert p.converted is not None
    words = flag_words(p)
    parts = [when(p.sale_date), p.source_name, money(p.converted, currency)]
    if p.currency != currency:
        parts.append(f"({money(float(p.price), p.currency)})")
    if words:
        parts.append("— " + ", ".join(words))
    return " · ".join(parts) + f"\n{p.title}"


def _variant(v: VariantHistory, styles: Mapping[str, SeriesStyle], currency: str) -> str:
    points: list[ChartPoint] = []
    listed: list[tuple[int, SalePoint]] = []
    for p in v.priced:
        note = None
        mark: Mark | None = "anomaly" if p.anomaly_reason else ("flag" if flag_words(p) else None)
        if mark is not None:
            note = len(listed) + 1
            listed.append((note, p))
        points.append(
            ChartPoint(
                x=p.sale_date,
                y=p.converted or 0.0,
                series=p.source_name,
                mark=mark,
                hollow=is_excluded(p),
                note=note,
                tooltip=_tooltip(p, currency),
            )
        )
    sources = len({p.source_id for p in v.points})
    caption = (
        f"<figcaption>{esc(v.label)} <span class=muted>· {len(v.points)} "
        f"sale{'s' if len(v.points) != 1 else ''} on {sources} source"
        f"{'s' if sources != 1 else ''}</span></figcaption>"
    )
    chart = price_chart(
        points, styles, currency=currency, title=f"{v.label}: prices in {currency}", width=410
    )
    items = "".join(_flagged_item(n, p, currency) for n, p in listed)
    unpriced = len(v.points) - len(v.priced)
    missing = (
        f'<p class="note">{unpriced} sale{"s" if unpriced != 1 else ""} not drawn: '
        f"no {esc(currency)} rate for the sale date.</p>"
        if unpriced
        else ""
    )
    flagged = f'<ol class="flagged">{items}</ol>' if items else ""
    return f'<figure class="variant">{caption}{chart}{flagged}{missing}</figure>'


def _flagged_item(n: int, p: SalePoint, currency: str) -> str:
    kind = "anomaly" if p.anomaly_reason else "flag"
    amount = money(p.converted or 0.0, currency)
    original = f" ({esc(money(float(p.price), p.currency))})" if p.currency != currency else ""
    href = safe_href(p.url)
    title = esc(p.title)
    linked = f'<a href="{esc(href)}" rel="noreferrer nofollow">{title}</a>' if href else title
    return (
        f'<li value="{n}"><span class="badge {kind}">{esc(", ".join(flag_words(p)))}</span> '
        f"{esc(when(p.sale_date))} · {esc(p.source_name)} · {esc(amount)}{original}"
        f"{' · excluded from the index' if is_excluded(p) else ''}<br>{linked}</li>"
    )


def _asset(
    i: int, a: AssetHistory, styles: Mapping[str, SeriesStyle], currency: str, ladder: str = ""
) -> str:
    median = (
        f"median of clean sales {esc(money(a.median, currency))}"
        if a.median is not None
        else "no clean sale priced"
    )
    info = (
        f"{esc(a.asset.category)} · {a.asset.sales} sales on {a.asset.sources} "
        f"source{'s' if a.asset.sources != 1 else ''} · {len(a.variants)} variant"
        f"{'s' if len(a.variants) != 1 else ''} · {median}"
    )
    charts = "".join(_variant(v, styles, currency) for v in a.variants)
    return (
        f'<article class="asset" id="asset-{i}"><h3>{i}. {esc(a.asset.title)}</h3>'
        f'<p class="meta">{info}</p><div class="variants">{charts}</div>{ladder}</article>'
    )


def _prices(data: ReportData) -> str:
    if not data.assets:
        return (
            '<p class="empty">Nothing to chart yet: the database holds no sales matched to an '
            "asset. Run <code>rareindex demo</code>, or <code>rareindex crawl ID</code> then "
            "<code>rareindex replay</code> (normalize and resolve), and write the report "
            "again.</p>"
        )
    styles = series_styles(data.sources)
    intro = (
        f'<p class="note">Every sale of each variant, in {esc(data.currency)} at the ECB reference '
        "rate of its sale date (the latest rate on or before it). One marker shape and colour per "
        "source; a line joins each source's indexed prices. "
        f'<span style="color:{ANOMALY_COLOR}">Red rings</span> mark prices flagged as anomalies; '
        f'<span style="color:{FLAG_COLOR}">dashed rings</span> mark lots, hidden best-offer prices '
        "and other quality flags (hollow markers are kept out of the index). Numbers refer to the "
        "list under each chart; hover a marker for its sale.</p>"
    )
    ladders = data.pricing.ladders if data.pricing else {}
    return intro + "".join(
        _asset(i, a, styles, data.currency, _ladder(ladders, a.asset.asset_id))
        for i, a in enumerate(data.assets, 1)
    )


def _ladder(ladders: Mapping[str, Ladder], asset_id: str) -> str:
    found = ladders.get(asset_id)
    return ladder_table(found) if found else ""


def _flagged(data: ReportData) -> str:
    if not data.flagged:
        return '<p class="empty">No sale is flagged: no price anomaly, lot or hidden price.</p>'
    shown = len(data.flagged)
    scope = (
        f"the newest {shown} of {data.flagged_total:,}"
        if shown < data.flagged_total
        else f"all {shown}"
    )
    rows = []
    for p in data.flagged:
        kind = "anomaly" if p.anomaly_reason else "flag"
        amount = "-" if p.converted is None else money(p.converted, data.currency)
        original = (
            f"<br><span class=muted>{esc(money(float(p.price), p.currency))}</span>"
            if p.currency != data.currency
            else ""
        )
        asset = (
            f"{esc(p.asset_title)}<br><span class=muted>{esc(variant_label(p))}</span>"
            if p.asset_title
            else '<span class="muted">not resolved</span>'
        )
        href = safe_href(p.url)
        title = esc(p.title)
        linked = f'<a href="{esc(href)}" rel="noreferrer nofollow">{title}</a>' if href else title
        rows.append(
            f"<tr><td class=nowrap>{esc(when(p.sale_date))}</td><td>{esc(p.source_name)}</td>"
            f"<td>{asset}</td><td class='num nowrap'>{esc(amount)}{original}</td>"
            f'<td><span class="badge {kind}">{esc(", ".join(flag_words(p)))}</span>'
            f"{'<br>excluded from the index' if is_excluded(p) else ''}</td><td>{linked}</td></tr>"
        )
    head = (
        f"<tr><th>Sale date</th><th>Source</th><th>Asset / variant</th>"
        f"<th class=num>Price ({esc(data.currency)})</th><th>Why</th><th>Listing title</th></tr>"
    )
    return (
        f'<p class="note">Sales whose price is flagged, newest first ({scope}): price anomalies '
        "found by the resolver, lots, hidden best-offer prices and quality flags from the "
        "title. Flagged rows are stored, never deleted; the excluded ones stay out of the "
        "index's medians.</p>"
        f'<table class="flagged"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _pricing(data: ReportData) -> PricingSection:
    return data.pricing or PricingSection((), {})


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{body}</section>'


def render_report(data: ReportData) -> str:
    """The whole page as one HTML string."""
    newest = when(data.newest_sale_at) if data.newest_sale_at else "none yet"
    meta = (
        f"Generated {esc(when(data.generated_at))} UTC"
        + (f" from {esc(data.database)}" if data.database else "")
        + f" · prices in {esc(data.currency)} · newest sale {esc(newest)}"
    )
    top = f"Price history of the {len(data.assets) or data.top} most-traded assets"
    sections: Iterable[str] = (
        _section("summary", "The index in numbers", _cards(data)),
        _section("coverage", "Coverage by category and source", _coverage(data) + _fx(data)),
        _section("health", "Connector health", _health(data)),
        _section("indices", "Category indices", render_indices(_pricing(data))),
        _section("prices", top, _prices(data)),
        _section("flagged", "Flagged prices", _flagged(data)),
    )
    nav = (
        '<nav><a href="#summary">Numbers</a><a href="#coverage">Coverage</a>'
        '<a href="#health">Connector health</a><a href="#indices">Indices</a>'
        '<a href="#prices">Price history</a>'
        '<a href="#flagged">Flagged prices</a></nav>'
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>RareIndex report</title>"
        f"<style>{STYLE}</style></head><body><main>"
        f'<h1>RareIndex report</h1><p class="meta">{meta}</p>{nav}{"".join(sections)}'
        f"<footer>RareIndex {esc(__version__)} · a static page: no script, nothing fetched."
        "</footer>"
        "</main></body></html>\n"
    )

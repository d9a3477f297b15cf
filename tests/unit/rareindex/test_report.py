"""The static report on a small hand-made index: what it reads, how it prices, marks and escapes.

The dataset (plain inserts through the schema, SQLite here; PostgreSQL in
tests/integration/test_report_browser.py) holds one asset whose listing title and source name
carry markup, sales in USD and EUR at a known ECB rate, one price anomaly, a lot, a hidden
best-offer price with a ``javascript:`` URL, an unresolved flagged sale, a sale older than the
first rate, a BROKEN connector whose reason carries markup, and nothing else.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, insert

from rareindex.errors import ConfigError
from rareindex.report import ChartPoint, load_report, price_chart, series_styles, write_report
from rareindex.report._chart import linear_ticks, log_ticks, time_ticks
from rareindex.report._format import age, compact_money, money, safe_href
from rareindex.storage import upgrade
from rareindex.storage.fx_settings import set_stale_days
from rareindex.storage.schema import (
    asset_variants,
    assets,
    connector_health,
    connector_runs,
    connectors,
    fx_rates,
    price_observations,
    sales,
    sources,
)

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
NASTY_TITLE = "Charizard <script>alert('x')</script> & \"friends\""
NASTY_SOURCE = "Fake <Auctions>"
NASTY_REASON = "blocked_rate 0.30 > 0.20 <b>bold</b>"
RATES = {"EUR": "0.9", "GBP": "0.8", "CAD": "1.35", "JPY": "150"}


def _day(d: int, month: int = 3) -> datetime:
    return datetime(2026, month, d, 12, 0, tzinfo=UTC)


def _sale(
    sale_id: str, when: datetime, source: str, price: str, currency: str, **extra: Any
) -> dict[str, Any]:
    connector = {"auctions": "auction-house", "market": "card-market"}[source]
    row = {
        "id": sale_id,
        "sale_date": when,
        "source_id": source,
        "connector_id": connector,
        "asset_id": "ast_zard",
        "variant_id": "var_psa10",
        "external_id": sale_id,
        "title": f"{NASTY_TITLE} PSA 10 ({sale_id})",
        "url": f"https://market.example/itm/{sale_id}",
        "sale_type": "auction",
        "price_basis": "sold_price",
        "price": Decimal(price),
        "currency": currency,
    }
    row.update(extra)
    return row


def seed(engine: Engine) -> None:
    """Migrate ``engine`` and insert the dataset of this module's docstring."""
    upgrade(engine)

    def put(conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
        for row in rows:  # row by row: the rows leave different columns to their defaults
            conn.execute(insert(table).values(row))

    meta = {"engines": ["api"], "geography": ["global"], "capabilities": ["sale"], "requires": []}
    with engine.begin() as conn:
        put(
            conn,
            sources,
            [{"id": "auctions", "name": NASTY_SOURCE}, {"id": "market", "name": "Market"}],
        )
        base = {"version": "1", "parser_version": "1", "refresh_class": "ACTIVE"}
        put(
            conn,
            connectors,
            [
                {
                    **base,
                    "id": "auction-house",
                    "source_id": "auctions",
                    "meta": {**meta, "id": "auction-house", "categories": ["tcg_card"]},
                },
                {
                    **base,
                    "id": "card-market",
                    "source_id": "market",
                    "meta": {**meta, "id": "card-market", "categories": ["tcg_card", "coin"]},
                },
            ],
        )
        put(
            conn,
            connector_health,
            [
                {
                    "connector_id": "auction-house",
                    "status": "UP",
                    "checked_at": NOW - timedelta(minutes=5),
                    "details": {"reasons": []},
                },
                {
                    "connector_id": "card-market",
                    "status": "BROKEN",
                    "checked_at": NOW - timedelta(minutes=5),
                    "details": {"reasons": [NASTY_REASON]},
                },
            ],
        )
        put(
            conn,
            connector_runs,
            [
                {
                    "id": "run_1",
                    "connector_id": "auction-house",
                    "mode": "incremental",
                    "lease_token": 1,
                    "status": "succeeded",
                    "outcome": "complete",
                    "started_at": NOW - timedelta(hours=1),
                    "finished_at": NOW - timedelta(minutes=50),
                    "created_at": NOW - timedelta(hours=1),
                    "pages": 12,
                    "records": 345,
                }
            ],
        )
        put(
            conn,
            fx_rates,
            [
                {"rate_date": date(2026, 3, 2), "currency": c, "per_usd": Decimal(r)}
                for c, r in RATES.items()
            ],
        )
        put(
            conn,
            assets,
            [
                {"id": "ast_zard", "asset_key": "k1", "category": "tcg_card", "title": NASTY_TITLE},
                {"id": "ast_coin", "asset_key": "k2", "category": "coin", "title": "Morgan $1"},
                {"id": "ast_quiet", "asset_key": "k3", "category": "coin", "title": "Never sold"},
            ],
        )
        put(
            conn,
            asset_variants,
            [
                {
                    "id": "var_psa10",
                    "asset_id": "ast_zard",
                    "variant_key": "k1|psa|10",
                    "grader": "PSA",
                    "grade": "10",
                },
                {"id": "var_raw", "asset_id": "ast_zard", "variant_key": "k1|raw"},
                {
                    "id": "var_ms65",
                    "asset_id": "ast_coin",
                    "variant_key": "k2|ngc|ms65",
                    "grader": "NGC",
                    "grade": "MS65",
                },
            ],
        )
        put(
            conn,
            sales,
            [
                _sale("s9", _day(1, month=2), "auctions", "80", "USD"),  # before the first rate
                _sale("s1", _day(2), "auctions", "100", "USD"),
                _sale("s2", _day(3), "market", "90", "EUR"),  # = 100 USD at 0.9 EUR per USD
                _sale("s3", _day(4), "auctions", "1000", "USD"),  # the anomaly
                _sale("s4", _day(5), "market", "300", "USD", is_lot=True, flags=["lot"]),
                _sale(
                    "s5",
                    _day(6),
                    "auctions",
                    "120",
                    "USD",
                    price_visibility="hidden",
                    flags=["hidden_price"],
                    url="javascript:alert(1)",
                ),
                _sale("s6", _day(3), "market", "20", "USD", variant_id="var_raw"),
                _sale(
                    "s7",
                    _day(2),
                    "auctions",
                    "50",
                    "USD",
                    asset_id="ast_coin",
                    variant_id="var_ms65",
                ),
                _sale(
                    "s8",
                    _day(6),
                    "market",
                    "10",
                    "GBP",
                    asset_id=None,
                    variant_id=None,
                    flags=["speculative_grade"],
                ),
            ],
        )
        put(
            conn,
            price_observations,
            [
                {
                    "id": "obs_s3",
                    "observation_date": _day(4),
                    "source_id": "auctions",
                    "connector_id": "auction-house",
                    "asset_id": "ast_zard",
                    "variant_id": "var_psa10",
                    "source_item_id": "s3",
                    "kind": "realised",
                    "price": Decimal("1000"),
                    "currency": "USD",
                    "sale_id": "s3",
                    "anomaly_reason": "robust_z",
                },
                {
                    "id": "obs_s1",
                    "observation_date": _day(2),
                    "source_id": "auctions",
                    "connector_id": "auction-house",
                    "asset_id": "ast_zard",
                    "variant_id": "var_psa10",
                    "source_item_id": "s1",
                    "kind": "realised",
                    "price": Decimal("100"),
                    "currency": "USD",
                    "sale_id": "s1",
                },
            ],
        )


@pytest.fixture
def seeded(sqlite_engine: Engine) -> Engine:
    seed(sqlite_engine)
    return sqlite_engine


def _page(engine: Engine, tmp_path: Path, **options: Any) -> str:
    path = write_report(engine, tmp_path / "report", now=NOW, **options)
    return path.read_text(encoding="utf-8")


def _converted(engine: Engine, currency: str) -> dict[str, float | None]:
    data = load_report(engine, currency=currency, now=NOW)
    return {p.sale_id: p.converted for a in data.assets for v in a.variants for p in v.points}


# --- what it reads ------------------------------------------------------------------------------


def test_most_traded_assets_come_first_with_a_chart_per_variant(seeded: Engine) -> None:
    data = load_report(seeded, top=5, now=NOW)
    assert [a.asset.asset_id for a in data.assets] == ["ast_zard", "ast_coin"]  # never sold: out
    zard = data.assets[0]
    assert (zard.asset.sales, zard.asset.sources) == (7, 2)
    assert [v.label for v in zard.variants] == ["PSA 10", "ungraded"]
    assert [p.sale_id for p in zard.variants[0].points] == ["s9", "s1", "s2", "s3", "s4", "s5"]
    assert load_report(seeded, top=1, now=NOW).assets[0].asset.asset_id == "ast_zard"


def test_the_median_leaves_out_anomalies_lots_and_hidden_prices(seeded: Engine) -> None:
    zard = load_report(seeded, now=NOW).assets[0]
    assert zard.median == pytest.approx(90.0)  # 80, 100, 100 (the EUR sale) and 20 ungraded


def test_recent_sales_are_counted_back_from_the_newest_sale(seeded: Engine) -> None:
    data = load_report(seeded, now=NOW + timedelta(days=365))  # a year later: still "recent"
    assert data.newest_sale_at == _day(6)
    cells = {(c.category, c.source_id): c for c in data.coverage}
    assert cells[("tcg_card", "auctions")].sales_recent == 3  # s1, s3, s5; s9 is 33 days older
    assert cells[("tcg_card", "market")].sales_recent == 3
    assert cells[(None, "market")].sales_recent == 1  # the unresolved sale
    assert cells[("coin", "market")].assets == 0  # declared, never seen: the gap shows


# --- currency -----------------------------------------------------------------------------------


def test_prices_are_converted_at_the_sale_dates_rate(seeded: Engine) -> None:
    usd = _converted(seeded, "USD")
    assert usd["s1"] == pytest.approx(100.0)
    assert usd["s2"] == pytest.approx(100.0)  # 90 EUR at 0.9 EUR per USD
    assert usd["s9"] == pytest.approx(80.0)  # USD needs no rate
    eur = _converted(seeded, "EUR")
    assert eur["s1"] == pytest.approx(90.0)
    assert eur["s2"] == pytest.approx(90.0)  # already EUR
    assert eur["s9"] is None  # older than the first EUR rate: not guessed
    assert _converted(seeded, "jpy")["s1"] == pytest.approx(15000.0)


def test_the_page_is_priced_in_the_chosen_currency(seeded: Engine, tmp_path: Path) -> None:
    page = _page(seeded, tmp_path, currency="EUR")
    assert "prices in EUR" in page
    assert "EUR, log scale" in page or ">EUR</text>" in page  # the y axis says the currency
    assert "1 sale not drawn: no EUR rate for the sale date." in page
    assert "900.00 EUR" in page  # the anomaly, 1000 USD, in the flagged list
    jpy = _page(seeded, tmp_path, currency="JPY")
    assert "15,000 JPY" in jpy and "15,000.00 JPY" not in jpy  # the yen has no minor unit


def test_an_unknown_currency_is_a_one_line_error(seeded: Engine) -> None:
    with pytest.raises(ConfigError, match="choose one of USD, CAD, EUR, GBP, JPY"):
        load_report(seeded, currency="XYZ")


# --- marks --------------------------------------------------------------------------------------


def _figure(page: str, caption: str) -> str:
    figures = re.findall(r'<figure class="variant">.*?</figure>', page, flags=re.S)
    matching = [f for f in figures if f"<figcaption>{caption} " in f]
    assert len(matching) == 1, f"no single figure captioned {caption!r}"
    return matching[0]


def test_anomalies_lots_and_hidden_prices_are_marked_and_listed(
    seeded: Engine, tmp_path: Path
) -> None:
    page = _page(seeded, tmp_path)
    psa10 = _figure(page, "PSA 10")
    assert psa10.count('class="mark-anomaly"') == 1 + 1  # the ring, and its legend swatch
    assert psa10.count('class="mark-flag"') == 2 + 1  # the lot, the hidden price, the swatch
    assert psa10.count('fill="#fff"') == 2  # both excluded from the index: hollow markers
    listed = re.findall(r'<li value="(\d)"><span class="badge (\w+)">([^<]*)</span>', psa10)
    assert listed == [
        ("1", "anomaly", "price anomaly: robust_z"),
        ("2", "flag", "lot"),
        ("3", "flag", "hidden_price"),
    ]
    assert "price anomaly" in psa10 and "lot / hidden price / flag" in psa10  # the legend
    ungraded = _figure(page, "ungraded")
    assert "mark-" not in ungraded and "<ol" not in ungraded  # a clean chart lists nothing


def test_the_flagged_table_lists_every_flagged_sale_newest_first(
    seeded: Engine, tmp_path: Path
) -> None:
    data = load_report(seeded, now=NOW)
    assert [p.sale_id for p in data.flagged] == ["s5", "s8", "s4", "s3"]
    assert data.flagged_total == 4
    assert (data.flags.lots, data.flags.hidden_prices, data.flags.anomalies) == (
        1,
        1,
        {"robust_z": 1},
    )
    page = _page(seeded, tmp_path)
    table = re.search(r'<table class="flagged">.*?</table>', page, flags=re.S)
    assert table is not None
    assert table[0].count("<tr>") == 1 + 4
    assert "speculative_grade" in table[0] and "not resolved" in table[0]


# --- escaping -----------------------------------------------------------------------------------


def test_text_from_the_web_is_escaped_everywhere(seeded: Engine, tmp_path: Path) -> None:
    page = _page(seeded, tmp_path)
    assert "<script" not in page  # the page has no script at all, so none can be injected
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;friends&quot;" in page
    assert "Fake &lt;Auctions&gt;" in page and NASTY_SOURCE not in page
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "javascript:" not in page.lower()  # the hidden-price sale's URL is not linked
    assert 'href="https://market.example/itm/s3"' in page


def test_safe_href_only_links_http() -> None:
    assert safe_href("https://a.example/x") == "https://a.example/x"
    assert safe_href("JavaScript:alert(1)") is None
    assert safe_href("data:text/html,hi") is None
    assert safe_href(None) is None


# --- the empty database -------------------------------------------------------------------------


def test_an_empty_database_says_there_is_nothing_yet(sqlite_engine: Engine, tmp_path: Path) -> None:
    upgrade(sqlite_engine)
    page = _page(sqlite_engine, tmp_path)
    assert "Nothing to chart yet" in page
    assert "No sources yet" in page
    assert "No connectors are stored yet" in page
    assert "No sale is flagged" in page
    assert "newest sale none yet" in page


def test_write_report_replaces_the_page_and_leaves_nothing_else(
    seeded: Engine, tmp_path: Path
) -> None:
    out = tmp_path / "deep" / "report"
    first = write_report(seeded, out, now=NOW, top=1)
    second = write_report(seeded, out, now=NOW, top=2)
    assert first == second == (out / "index.html").resolve()
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]
    assert second.read_text(encoding="utf-8").count('<article class="asset"') == 2


# --- the chart ----------------------------------------------------------------------------------


def test_ticks_are_round_and_cover_the_data() -> None:
    assert linear_ticks(0.5, 9.5) == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert linear_ticks(9727.25, 9727.25)[0] <= 9727.25 <= linear_ticks(9727.25, 9727.25)[-1]
    assert log_ticks(20, 1000) == [20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
    labels = [label for _, label in time_ticks(_day(1, month=1), _day(1, month=12))]
    assert labels == ["Apr 2026", "Jul 2026", "Oct 2026"]  # quarters: at most five ticks
    days = [label for _, label in time_ticks(_day(2), _day(5))]
    assert days == ["Mar 3", "Mar 4", "Mar 5"]


def test_a_wide_price_range_switches_to_a_log_axis() -> None:
    styles = series_styles(["A"])
    narrow = [ChartPoint(_day(2), 100.0, "A"), ChartPoint(_day(3), 150.0, "A")]
    wide = [*narrow, ChartPoint(_day(4), 9000.0, "A", mark="anomaly", note=1)]
    assert "log scale" not in price_chart(narrow, styles, currency="USD", title="t")
    chart = price_chart(wide, styles, currency="USD", title="t")
    assert "USD, log scale" in chart and 'class="note"' in chart


def test_the_chart_escapes_its_labels_and_draws_an_empty_frame() -> None:
    styles = series_styles(["<evil>"])
    chart = price_chart(
        [ChartPoint(_day(2), 5.0, "<evil>", tooltip="a <b> c")], styles, currency="USD", title="<t>"
    )
    assert "<evil>" not in chart and "&lt;evil&gt;" in chart and "&lt;t&gt;" in chart
    assert "a &lt;b&gt; c" in chart
    assert "no priced sales" in price_chart([], styles, currency="USD", title="x")


def test_money_and_ages_read_well() -> None:
    assert money(29400, "USD") == "29,400.00 USD"
    assert money(3812500.4, "JPY") == "3,812,500 JPY"
    assert compact_money(12500) == "12.5k" and compact_money(950) == "950"
    assert compact_money(2_000_000) == "2M" and compact_money(0.35) == "0.35"
    assert age(NOW - timedelta(minutes=3), NOW) == "3 min"
    assert age(NOW - timedelta(days=214), NOW) == "214 d"
    assert age(None, NOW) == "never"


def test_fx_staleness_and_the_sales_no_rate_prices_are_on_the_page(
    seeded: Engine, tmp_path: Path
) -> None:
    with seeded.begin() as conn:  # a Kuwaiti dinar sale: the ECB publishes no KWD rate
        conn.execute(insert(sales).values(_sale("s_kwd", _day(6), "market", "30", "KWD")))
    data = load_report(seeded, now=NOW)
    assert data.fx is not None
    assert data.fx.missing == {("no_ecb_rate", "KWD"): 1, ("no_rate_on_date", "USD"): 1}
    fresh = _page(seeded, tmp_path)
    assert "FX rates: the newest ECB rate is of 2026-03-02, 4 days behind the newest sale." in fresh
    assert "Not priced (null): KWD 1 (no ECB rate), USD 1 (no rate on the date)." in fresh
    assert "FX rates stale" not in fresh and "(stale)" not in fresh
    set_stale_days(seeded, 2)  # what the views' fx_stale reads (RI_FX_STALE_DAYS, fx stale-days)
    stale = _page(seeded, tmp_path)
    assert '<strong class="stale">FX rates stale</strong>' in stale
    assert "(more than 2); load a newer ECB file with <code>rareindex fx load PATH</code>" in stale
    assert "days older than the sale (stale)" in stale

"""The multi-currency views agree with :func:`rareindex.fx.convert` to the cent on SQLite and
PostgreSQL: a sale or listing on a weekend or TARGET holiday is priced at the previous ECB
publication day's rates, every currency the ECB publishes converts (AUD, CHF…), one it does not
(KWD) is NULL with its reason, and each row carries the day of its rate and whether that rate is
stale (``fx_stale``, at ``fx_settings.stale_days``). SQLite's views read without RareIndex."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, insert, text

from rareindex.fx import convert, load_ecb_rates, rate_on
from rareindex.settings import Settings
from rareindex.storage import upgrade
from rareindex.storage.fx_coverage import fx_coverage
from rareindex.storage.fx_settings import set_stale_days, stale_days, sync_stale_days
from rareindex.storage.schema import VIEW_CURRENCIES, connectors, listings, sales, sources
from rareindex_connectors.records import currency_minor_unit
from tests.cli_helpers import invoke_cli

# (id, UTC time, price, currency, the ECB publication day whose rates apply)
SALES = [
    ("sal_xmas", datetime(2024, 12, 25, 18, 0, tzinfo=UTC), "1250.00", "EUR", date(2024, 12, 24)),
    ("sal_sat", datetime(2024, 12, 28, 9, 30, tzinfo=UTC), "845.50", "GBP", date(2024, 12, 27)),
    ("sal_newyear", datetime(2025, 1, 1, 23, 59, tzinfo=UTC), "182000", "JPY", date(2024, 12, 31)),
    ("sal_fri", datetime(2025, 1, 10, 12, 0, tzinfo=UTC), "99.99", "USD", date(2025, 1, 10)),
    ("sal_aud", datetime(2025, 1, 4, 10, 0, tzinfo=UTC), "1234.56", "AUD", date(2025, 1, 3)),
]
# (id, first seen, last seen, price, currency, publication day of last_seen_at)
LISTINGS = [
    (
        "lst_boxing",
        datetime(2024, 12, 20, 8, 0, tzinfo=UTC),  # a different rate: must not be used
        datetime(2024, 12, 26, 7, 0, tzinfo=UTC),
        "410.00",
        "GBP",
        date(2024, 12, 24),
    ),
    (
        "lst_sun",
        datetime(2024, 12, 23, 8, 0, tzinfo=UTC),
        datetime(2025, 1, 5, 21, 0, tzinfo=UTC),
        "56000",
        "JPY",
        date(2025, 1, 3),
    ),
    (
        "lst_chf",
        datetime(2024, 12, 23, 8, 0, tzinfo=UTC),
        datetime(2024, 12, 31, 9, 0, tzinfo=UTC),
        "789.05",
        "CHF",
        date(2024, 12, 31),
    ),
]
BEFORE_RATES = datetime(2024, 12, 19, 12, 0, tzinfo=UTC)  # the loaded window starts on the 20th


def _seed(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(insert(sources).values(id="demo", name="Demo"))
        conn.execute(
            insert(connectors).values(
                id="demo-cards",
                source_id="demo",
                version="1",
                parser_version="1",
                refresh_class="ACTIVE",
                meta={},
            )
        )
        subject = {"source_id": "demo", "connector_id": "demo-cards", "title": "card"}
        for sale_id, when, price, currency, _ in [
            *SALES,
            ("sal_early", BEFORE_RATES, "10.00", "GBP", None),
            ("sal_kwd", datetime(2025, 1, 6, 12, 0, tzinfo=UTC), "30.000", "KWD", None),
        ]:
            conn.execute(
                insert(sales).values(
                    id=sale_id,
                    sale_date=when,
                    external_id=sale_id,
                    sale_type="auction",
                    price_basis="hammer",
                    price=Decimal(price),
                    currency=currency,
                    **subject,
                )
            )
        for listing_id, first, last, price, currency, _ in LISTINGS:
            conn.execute(
                insert(listings).values(
                    id=listing_id,
                    external_id=listing_id,
                    price=Decimal(price),
                    currency=currency,
                    first_seen_at=first,
                    last_seen_at=last,
                    **subject,
                )
            )


@pytest.fixture
def engine(any_engine: Engine) -> Engine:
    upgrade(any_engine)
    _seed(any_engine)
    # 13 publication days x the 30 currencies the ECB still publishes (RUB is N/A since 2022).
    assert load_ecb_rates(any_engine, since=date(2024, 12, 20), until=date(2025, 1, 10)) == 390
    return any_engine


def _view(conn: Connection, name: str) -> dict[str, dict[str, Any]]:
    rows = conn.execute(text(f"SELECT * FROM {name}")).mappings()  # noqa: S608 - our own names
    return {str(row["id"]): dict(row) for row in rows}


def _check_row(
    conn: Connection, row: dict[str, Any], price: str, currency: str, day: date, published: date
) -> None:
    assert rate_on(conn, currency, day) == rate_on(conn, currency, published)
    assert row["fx_missing_reason"] is None, row["id"]
    assert str(row["fx_rate_date"]) == str(published), row["id"]
    assert int(row["fx_rate_age_days"]) == (day - published).days, row["id"]
    for target in VIEW_CURRENCIES:
        # At the publication day's rates, named explicitly: not the sale day's rule re-derived.
        from_rate, to_rate = rate_on(conn, currency, published), rate_on(conn, target, published)
        assert from_rate is not None and to_rate is not None
        exact = Decimal(price) / from_rate * to_rate
        viewed = row[f"price_{target.lower()}"]
        assert viewed is not None, (row["id"], target)
        converted = convert(conn, Decimal(price), currency, target, day)
        assert converted is not None
        half_minor_unit = Decimal(5).scaleb(-currency_minor_unit(target) - 1)
        assert abs(converted - exact) <= half_minor_unit, (row["id"], target)
        # Exact decimals on both databases: the view is convert() to the cent, not about it.
        assert Decimal(str(viewed)) == converted, (row["id"], target)
        assert Decimal(str(viewed)).as_tuple().exponent == -currency_minor_unit(target)


def test_sales_multi_currency_matches_convert_at_the_last_published_rate(engine: Engine) -> None:
    with engine.connect() as conn:
        rows = _view(conn, "sales_multi_currency")
        assert set(rows) == {sale[0] for sale in SALES} | {"sal_early", "sal_kwd"}
        for sale_id, when, price, currency, published in SALES:
            _check_row(conn, rows[sale_id], price, currency, when.date(), published)
        # 1234.56 AUD on Saturday 4 January 2025, at Friday's rates (AUD 1.6556, USD 1.0299 per
        # euro: 1.607535 AUD per USD): 1234.56 / 1.607535 = 767.98 USD, on both databases.
        assert Decimal(str(rows["sal_aud"]["price_usd"])) == Decimal("767.98")
        # Before the first loaded rate: NULL in the view, None from convert — never a guess.
        early = rows["sal_early"]
        assert early["fx_missing_reason"] == "no_rate_on_date"
        assert early["fx_rate_date"] is None and early["fx_rate_age_days"] is None
        for target in VIEW_CURRENCIES:
            assert early[f"price_{target.lower()}"] is None, target
            assert convert(conn, Decimal("10.00"), "GBP", target, BEFORE_RATES) is None
        # The ECB publishes no Kuwaiti dinar: NULL, and the view says why.
        kwd = rows["sal_kwd"]
        assert kwd["fx_missing_reason"] == "no_ecb_rate"
        assert all(kwd[f"price_{target.lower()}"] is None for target in VIEW_CURRENCIES)


def test_listings_multi_currency_uses_last_seen_at(engine: Engine) -> None:
    with engine.connect() as conn:
        rows = _view(conn, "listings_multi_currency")
        assert set(rows) == {listing[0] for listing in LISTINGS}
        for listing_id, first, last, price, currency, published in LISTINGS:
            _check_row(conn, rows[listing_id], price, currency, last.date(), published)
            if rate_on(conn, currency, first) != rate_on(conn, currency, last):
                wrong = convert(conn, Decimal(price), currency, "USD", first)
                assert wrong is not None
                assert Decimal(str(rows[listing_id]["price_usd"])) != wrong


def test_the_full_history_loads_once(any_engine: Engine) -> None:
    upgrade(any_engine)
    few = ("USD", "CAD", "EUR", "GBP", "JPY")  # all 30 take half a minute on PostgreSQL
    inserted = load_ecb_rates(any_engine, currencies=few)
    assert inserted > 5 * 7000 and inserted % 5 == 0
    assert load_ecb_rates(any_engine, currencies=few) == 0
    assert rate_on(any_engine, "EUR", date(1999, 1, 3)) is None
    assert rate_on(any_engine, "EUR", date(1999, 1, 4)) == Decimal("0.848248")  # 1 / 1.1789


def _late_sale(engine: Engine, sale_id: str, when: datetime) -> None:
    with engine.begin() as conn:
        conn.execute(
            insert(sales).values(
                id=sale_id,
                sale_date=when,
                external_id=sale_id,
                sale_type="auction",
                price_basis="hammer",
                price=Decimal("50.00"),
                currency="GBP",
                source_id="demo",
                connector_id="demo-cards",
                title="card",
            )
        )


def test_fx_stale_is_the_views_flag_at_the_stored_threshold(engine: Engine) -> None:
    # The loaded rates end on 10 January 2025: a sale on the 25th is priced at a 15-day-old rate.
    _late_sale(engine, "sal_late", datetime(2025, 1, 25, 12, 0, tzinfo=UTC))
    with engine.connect() as conn:
        assert stale_days(conn) == 7  # migration 0015's row, RI_FX_STALE_DAYS's default
        rows = _view(conn, "sales_multi_currency")
        listed = _view(conn, "listings_multi_currency")
    assert rows["sal_late"]["fx_rate_age_days"] == 15 and rows["sal_late"]["fx_stale"] == 1
    assert rows["sal_late"]["fx_stale"] is not None and bool(rows["sal_late"]["fx_stale"])
    for sale_id, *_ in SALES:  # a day or two behind: fresh at 7 days
        assert rows[sale_id]["fx_stale"] is not None and not rows[sale_id]["fx_stale"], sale_id
    assert rows["sal_kwd"]["fx_stale"] is None and rows["sal_early"]["fx_stale"] is None
    assert all(row["fx_stale"] is not None and not row["fx_stale"] for row in listed.values())
    with engine.connect() as conn:
        cover = fx_coverage(conn)
    assert cover.stale_days == 7 and cover.stale_sales == 1

    assert set_stale_days(engine, 0) is True and set_stale_days(engine, 0) is False
    with engine.connect() as conn:
        rows = _view(conn, "sales_multi_currency")
        cover = fx_coverage(conn)
    flagged = {i for i, row in rows.items() if row["fx_stale"]}
    aged = {i for i, row in rows.items() if (row["fx_rate_age_days"] or 0) > 0}
    assert flagged == aged and "sal_late" in flagged and "sal_fri" not in flagged
    # The API and the report count the view's flag, at the view's threshold.
    assert cover.stale_days == 0 and cover.stale_sales == len(flagged)


def test_ri_fx_stale_days_is_written_when_given(engine: Engine, tmp_path: Path) -> None:
    assert sync_stale_days(engine, Settings(data_dir=tmp_path)) is False  # not given: kept
    assert sync_stale_days(engine, Settings(data_dir=tmp_path, fx_stale_days=30)) is True
    with engine.connect() as conn:
        assert stale_days(conn) == 30
        assert conn.execute(text("SELECT stale_days FROM fx_settings")).scalar_one() == 30


def test_sqlite_views_read_without_rareindex(sqlite_engine: Engine) -> None:
    """The plain sqlite3 module (no ri_fx_convert registered) reads both views, with the same
    rows, to the cent, as RareIndex's connection and convert()."""
    upgrade(sqlite_engine)
    _seed(sqlite_engine)
    load_ecb_rates(sqlite_engine, since=date(2024, 12, 20), until=date(2025, 1, 10))
    _late_sale(sqlite_engine, "sal_late", datetime(2025, 1, 25, 12, 0, tzinfo=UTC))
    path = sqlite_engine.url.database
    assert path
    bare = sqlite3.connect(path)
    bare.row_factory = sqlite3.Row
    try:
        for name in ("sales_multi_currency", "listings_multi_currency"):
            plain = {r["id"]: dict(r) for r in bare.execute(f"SELECT * FROM {name}")}  # noqa: S608
            with sqlite_engine.connect() as conn:
                ours = _view(conn, name)
            assert plain == ours and plain, name
        row = bare.execute(
            "SELECT price_usd, fx_stale FROM sales_multi_currency WHERE id = 'sal_aud'"
        ).fetchone()
        assert tuple(row) == ("767.98", 0)
    finally:
        bare.close()
    with sqlite_engine.connect() as conn:
        for sale_id, when, price, currency, _ in SALES:
            viewed = _view(conn, "sales_multi_currency")[sale_id]
            for target in VIEW_CURRENCIES:
                expected = convert(conn, Decimal(price), currency, target, when)
                assert viewed[f"price_{target.lower()}"] == format(expected, "f"), sale_id


def test_fx_stale_days_command_sets_what_the_views_read(tmp_path: Path) -> None:
    env = {"RI_DATA_DIR": str(tmp_path)}
    assert invoke_cli("db", "upgrade", env=env).returncode == 0
    shown = invoke_cli("fx", "stale-days", env=env)
    assert shown.returncode == 0 and "fx stale days: 7" in shown.stdout
    assert "fx stale days: 14" in invoke_cli("fx", "stale-days", "14", env=env).stdout
    bare = sqlite3.connect(tmp_path / "rareindex.db")
    try:
        assert bare.execute("SELECT stale_days FROM fx_settings").fetchone() == (14,)
    finally:
        bare.close()
    # RI_FX_STALE_DAYS, when set, is written whenever the CLI opens the database.
    given = invoke_cli("fx", "stale-days", env={**env, "RI_FX_STALE_DAYS": "3"})
    assert "fx stale days: 3" in given.stdout, given.stderr
    assert "fx stale days: 3" in invoke_cli("fx", "stale-days", env=env).stdout  # kept when unset
    refused = invoke_cli("fx", "stale-days", "--", "-1", env=env)
    assert refused.returncode == 2

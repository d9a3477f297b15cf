"""FX rates from the bundled ECB history: crossed via EUR, stored only on publication days, the last
published rate on days without one, conversions rounded to the target's minor unit."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, insert, select

from rareindex.errors import FxFileError, RareIndexError, UnknownCurrencyError
from rareindex.fx import convert, ecb_rates, load_ecb_rates, published_rate, rate_on
from rareindex.storage import upgrade
from rareindex.storage.schema import fx_rates
from tests.cli_helpers import invoke_cli

SINCE, UNTIL = date(2024, 12, 20), date(2025, 1, 10)
# A newer ECB file, written by hand in eurofxref-hist's shape (newest first, N/A, trailing comma):
# three days after the bundled history ends, JPY not quoted on the 4th. Its zip holds the csv.
NEWER = Path(__file__).parents[3] / "fixtures" / "fx"
# ECB publication days in the window: no weekends, no 25/26 December, no 1 January.
PUBLISHED = [
    date(2024, 12, 20),
    date(2024, 12, 23),
    date(2024, 12, 24),
    date(2024, 12, 27),
    date(2024, 12, 30),
    date(2024, 12, 31),
    date(2025, 1, 2),
    date(2025, 1, 3),
    date(2025, 1, 6),
    date(2025, 1, 7),
    date(2025, 1, 8),
    date(2025, 1, 9),
    date(2025, 1, 10),
]
# eurofxref-hist.csv, 2024-12-24: USD 1.0395, CAD 1.4988, GBP 0.82805, JPY 163.25 (per EUR),
# crossed by hand: units per USD = per EUR / 1.0395, to 6 places.
CHRISTMAS_EVE = {
    "USD": Decimal("1.000000"),
    "EUR": Decimal("0.962001"),  # 1 / 1.0395
    "CAD": Decimal("1.441847"),  # 1.4988 / 1.0395
    "GBP": Decimal("0.796585"),  # 0.82805 / 1.0395
    "JPY": Decimal("157.046657"),  # 163.25 / 1.0395
}
# 2024-12-27: USD 1.0435, GBP 0.83098, JPY 164.65.
DEC_27 = {"GBP": Decimal("0.796339"), "JPY": Decimal("157.786296")}


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    upgrade(sqlite_engine)
    # Every currency the ECB published then: 30 (RUB is N/A since March 2022).
    assert load_ecb_rates(sqlite_engine, since=SINCE, until=UNTIL) == len(PUBLISHED) * 30
    return sqlite_engine


def _stored(engine: Engine, day: date) -> dict[str, Decimal]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(fx_rates.c.currency, fx_rates.c.per_usd).where(fx_rates.c.rate_date == day)
        )
        return {currency: per_usd for currency, per_usd in rows}


def test_a_publication_day_is_crossed_via_eur(engine: Engine) -> None:
    stored = _stored(engine, date(2024, 12, 24))
    assert {c: stored[c] for c in CHRISTMAS_EVE} == CHRISTMAS_EVE
    assert stored["AUD"] == Decimal("1.604714")  # 1.6681 / 1.0395
    with engine.connect() as conn:
        sources = set(conn.execute(select(fx_rates.c.source).distinct()).scalars())
    assert sources == {"ecb"}


def test_only_publication_days_are_stored(engine: Engine) -> None:
    with engine.connect() as conn:
        days = list(
            conn.execute(
                select(fx_rates.c.rate_date).distinct().order_by(fx_rates.c.rate_date)
            ).scalars()
        )
    assert days == PUBLISHED
    for holiday in (date(2024, 12, 25), date(2024, 12, 26), date(2025, 1, 1), date(2024, 12, 28)):
        assert _stored(engine, holiday) == {}


@pytest.mark.parametrize(
    ("day", "published", "expected"),
    [
        (date(2024, 12, 24), date(2024, 12, 24), CHRISTMAS_EVE),
        (date(2024, 12, 25), date(2024, 12, 24), CHRISTMAS_EVE),  # TARGET holiday
        (date(2024, 12, 26), date(2024, 12, 24), CHRISTMAS_EVE),  # TARGET holiday
        (date(2024, 12, 28), date(2024, 12, 27), DEC_27),  # Saturday
        (date(2024, 12, 29), date(2024, 12, 27), DEC_27),  # Sunday
    ],
)
def test_days_without_a_rate_use_the_last_published_one(
    engine: Engine, day: date, published: date, expected: dict[str, Decimal]
) -> None:
    for currency, per_usd in expected.items():
        assert rate_on(engine, currency, day) == per_usd
        with engine.connect() as conn:  # a connection works as well as an engine
            found = published_rate(conn, currency, day)
        # USD is the base: 1 on every day, not a publication.
        assert found == ((day, 1) if currency == "USD" else (published, per_usd))


def test_an_aware_datetime_is_taken_as_its_utc_date(engine: Engine) -> None:
    # 00:30 on the 27th in Tokyo is still the 26th in UTC: the 24th's rate, not the 27th's.
    tokyo = datetime(2024, 12, 27, 0, 30, tzinfo=timezone(timedelta(hours=9)))
    assert rate_on(engine, "GBP", tokyo) == CHRISTMAS_EVE["GBP"]
    assert rate_on(engine, "GBP", datetime(2024, 12, 27, 0, 30, tzinfo=UTC)) == DEC_27["GBP"]
    with pytest.raises(ValueError, match="naive datetime"):
        rate_on(engine, "GBP", datetime(2024, 12, 27, 0, 30))


def test_no_rate_before_the_first_publication(engine: Engine) -> None:
    assert rate_on(engine, "EUR", date(2024, 12, 19)) is None
    assert convert(engine, Decimal("10.00"), "EUR", "USD", date(2024, 12, 19)) is None
    assert rate_on(engine, "USD", date(2024, 12, 19)) == 1  # the dollar is the base


def test_reloading_inserts_nothing_and_extending_only_the_new_days(engine: Engine) -> None:
    assert load_ecb_rates(engine, since=SINCE, until=UNTIL) == 0
    # 13 and 14 January are new; the window's 13 days are already there.
    assert load_ecb_rates(engine, since=SINCE, until=date(2025, 1, 14)) == 2 * 30
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(fx_rates)).scalar_one() == 15 * 30


def test_a_stored_row_is_never_overwritten(sqlite_engine: Engine) -> None:
    upgrade(sqlite_engine)
    with sqlite_engine.begin() as conn:
        conn.execute(
            insert(fx_rates).values(
                rate_date=date(2024, 12, 24),
                currency="GBP",
                per_usd=Decimal("0.5"),
                source="manual",
            )
        )
    day = date(2024, 12, 24)
    assert load_ecb_rates(sqlite_engine, since=day, until=day) == 29
    assert rate_on(sqlite_engine, "GBP", day) == Decimal("0.5")


def test_the_full_history_has_every_currency_the_ecb_publishes() -> None:
    rows = ecb_rates()
    days = {day for day, _, _ in rows}
    assert min(days) == date(1999, 1, 4)
    assert not any(day.weekday() >= 5 for day in days)
    majors = [(day, c) for day, c, _ in rows if c in ("USD", "CAD", "EUR", "GBP", "JPY")]
    assert len(majors) == 5 * len(days)  # on every publication day
    last = max(days)
    newest = {c for day, c, _ in rows if day == last}
    assert len(newest) == 30 and {"AUD", "CHF", "SEK", "NZD", "ZAR", "KRW"} <= newest
    assert "KWD" not in newest and "CYP" not in newest  # not published / a legacy column


def test_a_currency_the_ecb_did_not_quote_is_skipped_that_day() -> None:
    # The ECB started quoting CNY in 2005; earlier days have "N/A", which is not a rate.
    rows = ecb_rates(["CNY"], since=date(2005, 3, 28), until=date(2005, 4, 8))
    assert rows and {currency for _, currency, _ in rows} == {"CNY"}
    assert min(day for day, _, _ in rows) == date(2005, 4, 1)


def test_convert_rounds_to_the_target_minor_unit(engine: Engine) -> None:
    # 100 GBP -> USD at 1/0.796585, -> JPY at 157.046657: 19714.99 yen.
    yen = convert(engine, Decimal("100.00"), "GBP", "JPY", date(2024, 12, 25))
    assert yen == Decimal("19715")
    assert yen is not None and yen.as_tuple().exponent == 0
    dollars = convert(engine, Decimal("10000"), "JPY", "USD", date(2024, 12, 26))
    assert dollars == Decimal("63.68")  # 10000 / 157.046657 = 63.675…
    assert dollars is not None and dollars.as_tuple().exponent == -2
    assert convert(engine, Decimal("1.005"), "EUR", "eur", date(2024, 12, 25)) == Decimal("1.00")
    with pytest.raises(TypeError, match="float"):
        convert(engine, 1.5, "EUR", "USD", date(2024, 12, 25))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call",
    [
        lambda engine: rate_on(engine, "XYZ", date(2024, 12, 24)),
        lambda engine: convert(engine, Decimal(1), "USD", "XYZ", date(2024, 12, 24)),
        lambda engine: load_ecb_rates(engine, currencies=("USD", "XYZ")),
        lambda engine: rate_on(engine, "CYP", date(2024, 12, 24)),  # legacy ECB column
    ],
)
def test_an_unknown_currency_is_one_clear_line(engine: Engine, call: object) -> None:
    with pytest.raises(UnknownCurrencyError) as excinfo:
        call(engine)  # type: ignore[operator]
    message = str(excinfo.value)
    assert isinstance(excinfo.value, RareIndexError)
    assert message.startswith("unknown currency ") and "\n" not in message
    assert "EUR" in message and "JPY" in message and "USD" in message and "CHF" in message


def test_cli_fx_load_and_convert(tmp_path: Path) -> None:
    env = {"RI_DATA_DIR": str(tmp_path)}
    empty = invoke_cli("fx", "load", env=env)
    assert empty.returncode == 2
    assert empty.stderr.startswith("error: ") and "run `rareindex db upgrade` first" in empty.stderr
    assert invoke_cli("db", "upgrade", env=env).returncode == 0

    args = ("fx", "load", "--since", "2024-12-20", "--until", "2025-01-10")
    first = invoke_cli(*args, env=env)
    assert first.returncode == 0, first.stderr
    assert "fx rates: 390 rows inserted" in first.stdout
    assert "covered: 2024-12-20 to 2025-01-10 (13 ECB publication days)" in first.stdout
    again = invoke_cli(*args, env=env)
    assert "fx rates: 0 rows inserted" in again.stdout
    newer = invoke_cli("fx", "load", str(NEWER / "eurofxref-hist.zip"), env=env)
    assert newer.returncode == 0, newer.stderr
    assert "fx rates: 23 rows inserted from " in newer.stdout
    assert "covered: 2024-12-20 to 2026-11-06 (16 ECB publication days)" in newer.stdout

    converted = invoke_cli("fx", "convert", "100.00", "GBP", "JPY", "--on", "2024-12-25", env=env)
    assert converted.returncode == 0, converted.stderr
    assert (
        converted.stdout.strip() == "100.00 GBP = 19715 JPY on 2024-12-25 (ECB rates of 2024-12-24)"
    )
    unknown = invoke_cli("fx", "convert", "1", "GBP", "XYZ", "--on", "2024-12-25", env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("error: unknown currency 'XYZ': use one of AUD")


@pytest.mark.parametrize("name", ["eurofxref-hist.csv", "eurofxref-hist.zip"])
def test_a_newer_ecb_file_loads_from_its_csv_or_zip(sqlite_engine: Engine, name: str) -> None:
    upgrade(sqlite_engine)
    # USD EUR JPY CZK GBP CHF AUD CAD on the 5th and 6th; no JPY on the 4th; BGN, RUB are N/A.
    assert load_ecb_rates(sqlite_engine, path=NEWER / name) == 8 + 8 + 7
    other = "eurofxref-hist.zip" if name.endswith(".csv") else "eurofxref-hist.csv"
    assert load_ecb_rates(sqlite_engine, path=NEWER / other) == 0  # the same rows
    assert rate_on(sqlite_engine, "AUD", date(2026, 11, 8)) == Decimal("1.536232")  # 1.7702/1.1523
    assert published_rate(sqlite_engine, "JPY", date(2026, 11, 4)) is None


def test_a_file_that_is_not_an_ecb_history_is_refused(tmp_path: Path) -> None:
    wrong = tmp_path / "rates.csv"
    wrong.write_text("day,usd\n2026-11-06,1\n")
    with pytest.raises(FxFileError, match="not an ECB reference-rate history"):
        ecb_rates(path=wrong)
    broken = tmp_path / "eurofxref-hist.csv"
    broken.write_text("Date,USD,GBP,\n2026-11-06,1.15,zero,\n")
    with pytest.raises(FxFileError, match="line 2"):
        ecb_rates(path=broken)

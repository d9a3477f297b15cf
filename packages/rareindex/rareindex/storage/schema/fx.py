"""Exchange rates and the multi-currency views over sales and listings.

``fx_rates`` stores, per day, how many units of a currency one US dollar buys (``per_usd``). The
views price each sale or listing in USD, CAD, EUR, GBP and JPY at the latest rate on or before the
sale (or last-seen) date, so weekends and holidays use Friday's rate. A missing rate gives NULL,
never a guess, and ``fx_missing_reason`` says why.

The arithmetic is exact on both databases: ``ri_fx_convert(price, from_per_usd, to_per_usd,
minor)`` is ``price * to / from`` rounded half to even to ``minor`` decimal places. PostgreSQL
runs it as a SQL function (created by migration 0010), SQLite as the Python function
:func:`exact_convert`, which :mod:`rareindex.storage.engine` registers on every connection. The
views are written once per dialect because SQLite has no ``::date`` and PostgreSQL has no
``date()`` on timestamptz.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal

from sqlalchemy import Column, Date, Index, PrimaryKeyConstraint, Table, Text

from ..types import ExactDecimal
from ._base import metadata

__all__ = [
    "FX_MISSING_REASONS",
    "PG_FX_CONVERT",
    "VIEW_CURRENCIES",
    "exact_convert",
    "fx_rates",
    "multi_currency_view_sql",
    "multi_currency_view_sql_0001",
]

VIEW_CURRENCIES = ("USD", "CAD", "EUR", "GBP", "JPY")
_MINOR = {"USD": 2, "CAD": 2, "EUR": 2, "GBP": 2, "JPY": 0}

FX_MISSING_REASONS = {
    "no_ecb_rate": "the ECB publishes no rate for this currency (none is loaded)",
    "no_rate_on_date": "no rate loaded on or before the date (before 1999, or not loaded yet)",
}
"""``fx_missing_reason`` in the views -> what it means. NULL there: the row converted."""

fx_rates = Table(
    "fx_rates",
    metadata,
    Column("rate_date", Date, nullable=False),
    Column("currency", Text, nullable=False),
    Column("per_usd", ExactDecimal(), nullable=False, comment="units of currency per 1 USD"),
    Column("source", Text, nullable=False, server_default="ecb"),
    PrimaryKeyConstraint("rate_date", "currency"),
    # The views look up "the last rate of C on or before D" (and "any rate of C"): by currency.
    Index("ix_fx_rates_currency_date", "currency", "rate_date"),
)

# The quotient is kept to 40 places (PostgreSQL divides a scale-40 dividend to 40 places, half
# away from zero), then rounded half to even to the minor unit: the same steps in both databases.
_QUOTIENT = Decimal(1).scaleb(-40)
_CONTEXT = Context(prec=100)

PG_FX_CONVERT = """\
CREATE FUNCTION ri_fx_convert(price numeric, from_rate numeric, to_rate numeric, minor integer)
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT round(CASE
    WHEN abs(y - trunc(y)) = 0.5 THEN trunc(y) + mod(trunc(y), 2)
    ELSE round(y)
  END / power(10::numeric, minor), minor)
  FROM (
    SELECT round(CAST(price * to_rate AS numeric(1000, 40)) / from_rate, 40)
      * power(10::numeric, minor) AS y
  ) q
$$"""
"""``ri_fx_convert`` on PostgreSQL; NULL in, NULL out (as :func:`exact_convert`)."""


def exact_convert(price: object, from_rate: object, to_rate: object, minor: int) -> str | None:
    """``price * to_rate / from_rate`` exactly, rounded half to even to ``minor`` places, as text.

    The SQLite side of ``ri_fx_convert`` (SQLite stores these decimals as text); None when an
    argument is NULL. ``exact_convert("100.00", "0.787", "156.9", 0)`` is ``'19937'``.
    """
    if price is None or from_rate is None or to_rate is None:
        return None
    value = _CONTEXT.divide(
        _CONTEXT.multiply(Decimal(str(price)), Decimal(str(to_rate))), Decimal(str(from_rate))
    )
    value = value.quantize(_QUOTIENT, rounding=ROUND_HALF_UP, context=_CONTEXT)
    rounded = value.quantize(Decimal(1).scaleb(-minor), rounding=ROUND_HALF_EVEN, context=_CONTEXT)
    return format(rounded, "f")


def _lookup(what: str, currency_sql: str, day_sql: str) -> str:
    # Only our own column names and literals are interpolated here, never user input.
    return (
        f"(SELECT r.{what} FROM fx_rates r WHERE r.currency = {currency_sql} "  # noqa: S608
        f"AND r.rate_date <= {day_sql} ORDER BY r.rate_date DESC LIMIT 1)"
    )


def multi_currency_view_sql(dialect: str) -> dict[str, str]:
    """``CREATE VIEW`` statements for ``sales_multi_currency`` and ``listings_multi_currency``.

    Columns: the row's own, ``price_usd`` … ``price_jpy`` (exact, rounded to each currency's
    minor unit), ``fx_rate_date`` (the ECB day of the rate of the row's currency; for USD, of the
    euro's), ``fx_rate_age_days`` (the row's day minus ``fx_rate_date``: a stale rate is older
    than ``RI_FX_STALE_DAYS``) and ``fx_missing_reason`` (a key of :data:`FX_MISSING_REASONS`).
    """
    sqlite = dialect == "sqlite"

    def day(column: str) -> str:
        return f"date({column})" if sqlite else f"CAST({column} AT TIME ZONE 'UTC' AS date)"

    def age(later: str, earlier: str) -> str:
        if sqlite:
            return f"CAST(julianday({later}) - julianday({earlier}) AS INTEGER)"
        return f"({later} - {earlier})"

    def view(name: str, table: str, columns: list[str], date_column: str) -> str:
        d, euro = day(f"t.{date_column}"), "'EUR'"
        targets = [c for c in VIEW_CURRENCIES if c != "USD"]
        inner = ",\n    ".join(
            [
                *(f"t.{c}" for c in columns),
                f"{d} AS fx_day",
                f"CASE WHEN t.currency = 'USD' THEN 1 ELSE {_lookup('per_usd', 't.currency', d)} "
                "END AS from_rate",
                f"CASE WHEN t.currency = 'USD' THEN {_lookup('rate_date', euro, d)} "
                f"ELSE {_lookup('rate_date', 't.currency', d)} END AS from_date",
                *(f"{_lookup('per_usd', repr(c), d)} AS rate_{c.lower()}" for c in targets),
            ]
        )
        rates = {"USD": "1", **{c: f"b.rate_{c.lower()}" for c in targets}}
        complete = " AND ".join(
            ["b.from_rate IS NOT NULL", *(f"{rates[c]} IS NOT NULL" for c in targets)]
        )
        outer = ",\n  ".join(
            [
                *(f"b.{c}" for c in columns),
                *(
                    f"ri_fx_convert(b.price, b.from_rate, {rates[c]}, {_MINOR[c]}) "
                    f"AS price_{c.lower()}"
                    for c in VIEW_CURRENCIES
                ),
                f"CASE WHEN {complete} THEN b.from_date END AS fx_rate_date",
                f"CASE WHEN {complete} THEN {age('b.fx_day', 'b.from_date')} END "
                "AS fx_rate_age_days",
                f"CASE WHEN {complete} THEN NULL "  # noqa: S608 - our own names only
                "WHEN b.currency <> 'USD' AND NOT EXISTS "
                "(SELECT 1 FROM fx_rates x WHERE x.currency = b.currency) THEN 'no_ecb_rate' "
                "ELSE 'no_rate_on_date' END AS fx_missing_reason",
            ]
        )
        return (
            f"CREATE VIEW {name} AS SELECT\n  {outer}\n"
            f"FROM (SELECT\n    {inner}\n  FROM {table} t) b"
        )

    common = ["id", "source_id", "asset_id", "variant_id"]
    return {
        "sales_multi_currency": view(
            "sales_multi_currency",
            "sales",
            ["id", "sale_date", *common[1:], "sale_type", "price", "currency"],
            "sale_date",
        ),
        "listings_multi_currency": view(
            "listings_multi_currency",
            "listings",
            ["id", "last_seen_at", *common[1:], "status", "price", "currency"],
            "last_seen_at",
        ),
    }


_CURRENCIES_0001 = ("USD", "CAD", "EUR", "GBP", "JPY")


def _rate_0001(currency_sql: str, day_sql: str, numeric: str) -> str:
    return (
        f"(CASE WHEN {currency_sql} = 'USD' THEN 1 ELSE (SELECT CAST(r.per_usd AS {numeric}) "  # noqa: S608
        f"FROM fx_rates r WHERE r.currency = {currency_sql} AND r.rate_date <= {day_sql} "
        "ORDER BY r.rate_date DESC LIMIT 1) END)"
    )


def multi_currency_view_sql_0001(dialect: str) -> dict[str, str]:
    """The views as migration 0001 created them (floating point on SQLite), frozen for 0001 and
    for the downgrade of 0010. Never change it: a migration must replay the same schema."""
    numeric = "REAL" if dialect == "sqlite" else "NUMERIC"

    def day(column: str) -> str:
        return (
            f"date({column})"
            if dialect == "sqlite"
            else f"CAST({column} AT TIME ZONE 'UTC' AS date)"
        )

    def view(name: str, table: str, columns: str, date_column: str) -> str:
        source_rate = _rate_0001("t.currency", day(f"t.{date_column}"), numeric)
        converted = ",\n  ".join(
            f"CAST(t.price AS {numeric}) / {source_rate} * "
            f"{_rate_0001(repr(c), day(f't.{date_column}'), numeric)} AS price_{c.lower()}"
            for c in _CURRENCIES_0001
        )
        return f"CREATE VIEW {name} AS SELECT\n  {columns},\n  {converted}\nFROM {table} t"

    return {
        "sales_multi_currency": view(
            "sales_multi_currency",
            "sales",
            "t.id, t.sale_date, t.source_id, t.asset_id, t.variant_id, t.sale_type, t.price, "
            "t.currency",
            "sale_date",
        ),
        "listings_multi_currency": view(
            "listings_multi_currency",
            "listings",
            "t.id, t.last_seen_at, t.source_id, t.asset_id, t.variant_id, t.status, t.price, "
            "t.currency",
            "last_seen_at",
        ),
    }

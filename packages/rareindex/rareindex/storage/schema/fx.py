"""Exchange rates and the multi-currency views over sales and listings.

``fx_rates`` stores, per day, how many units of a currency one US dollar buys (``per_usd``). The
views price each sale or listing in USD, CAD, EUR, GBP and JPY at the latest rate on or before the
sale (or last-seen) date, so weekends and holidays use Friday's rate. A missing rate gives NULL,
never a guess. The views are written once per dialect because SQLite has no ``::date`` and
PostgreSQL has no ``date()`` on timestamptz.
"""

from __future__ import annotations

from sqlalchemy import Column, Date, PrimaryKeyConstraint, Table, Text

from ..types import ExactDecimal
from ._base import metadata

__all__ = ["VIEW_CURRENCIES", "fx_rates", "multi_currency_view_sql"]

VIEW_CURRENCIES = ("USD", "CAD", "EUR", "GBP", "JPY")

fx_rates = Table(
    "fx_rates",
    metadata,
    Column("rate_date", Date, nullable=False),
    Column("currency", Text, nullable=False),
    Column("per_usd", ExactDecimal(), nullable=False, comment="units of currency per 1 USD"),
    Column("source", Text, nullable=False, server_default="ecb"),
    PrimaryKeyConstraint("rate_date", "currency"),
)


def _rate(currency_sql: str, day_sql: str, numeric: str) -> str:
    # Only our own column names and literals are interpolated here, never user input.
    return (
        f"(CASE WHEN {currency_sql} = 'USD' THEN 1 ELSE (SELECT CAST(r.per_usd AS {numeric}) "  # noqa: S608
        f"FROM fx_rates r WHERE r.currency = {currency_sql} AND r.rate_date <= {day_sql} "
        "ORDER BY r.rate_date DESC LIMIT 1) END)"
    )


def multi_currency_view_sql(dialect: str) -> dict[str, str]:
    """``CREATE VIEW`` statements for ``sales_multi_currency`` and ``listings_multi_currency``."""
    numeric = "REAL" if dialect == "sqlite" else "NUMERIC"

    def day(column: str) -> str:
        return (
            f"date({column})"
            if dialect == "sqlite"
            else f"CAST({column} AT TIME ZONE 'UTC' AS date)"
        )

    def view(name: str, table: str, columns: str, date_column: str) -> str:
        source_rate = _rate("t.currency", day(f"t.{date_column}"), numeric)
        converted = ",\n  ".join(
            f"CAST(t.price AS {numeric}) / {source_rate} * "
            f"{_rate(repr(c), day(f't.{date_column}'), numeric)} AS price_{c.lower()}"
            for c in VIEW_CURRENCIES
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

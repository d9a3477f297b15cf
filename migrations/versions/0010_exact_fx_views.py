"""The multi-currency views in exact decimals, with the rate's date and the reason for a NULL.

* ``price_usd`` … ``price_jpy`` are ``ri_fx_convert(price, from, to, minor)``: ``price * to /
  from`` rounded half to even to the currency's minor unit. A SQL function on PostgreSQL; on
  SQLite a Python function every connection registers (``rareindex.storage.engine``), so SQLite no
  longer goes through floating point and both databases agree to the cent.
* New columns: ``fx_rate_date`` (the ECB day of the rate used), ``fx_rate_age_days`` (the row's
  day minus that, for the staleness check) and ``fx_missing_reason`` (``no_ecb_rate`` for a
  currency the ECB does not publish, such as KWD; ``no_rate_on_date`` before the first rate).
* ``ix_fx_rates_currency_date``: the views look a rate up by currency, and a currency without any
  rate would otherwise scan the whole table.
* The downgrade puts back the views of 0001 and drops the function and the index.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 17:40:00
"""

from __future__ import annotations

from alembic import op

from rareindex.storage.schema.fx import (
    PG_FX_CONVERT,
    multi_currency_view_sql_0001,
    multi_currency_view_sql_0010,
)

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def _replace_views(statements: dict[str, str]) -> None:
    for view in statements:
        op.execute(f"DROP VIEW IF EXISTS {view}")
    for statement in statements.values():
        op.execute(statement)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.create_index("ix_fx_rates_currency_date", "fx_rates", ["currency", "rate_date"])
    if dialect == "postgresql":
        op.execute(PG_FX_CONVERT)
    _replace_views(multi_currency_view_sql_0010(dialect))


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    _replace_views(multi_currency_view_sql_0001(dialect))
    if dialect == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS ri_fx_convert(numeric, numeric, numeric, integer)")
    op.drop_index("ix_fx_rates_currency_date", table_name="fx_rates")

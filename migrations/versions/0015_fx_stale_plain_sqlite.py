"""The multi-currency views flag stale rates and, on SQLite, convert in plain SQL.

* ``fx_settings``: one row (``id = 1``) holding ``stale_days`` (7, ``RI_FX_STALE_DAYS``'s
  default), which the views read. RareIndex writes it from ``RI_FX_STALE_DAYS`` when it opens or
  upgrades the database with that variable set; ``rareindex fx stale-days N`` sets it.
* ``fx_stale`` in ``sales_multi_currency`` and ``listings_multi_currency``: ``fx_rate_age_days``
  is more than ``stale_days`` (boolean on PostgreSQL, 0/1 on SQLite; NULL when not converted).
* On SQLite the ``price_*`` columns are computed in plain SQL (64-bit integer arithmetic, round
  half to even; ``rareindex.storage.schema.fx.sqlite_exact_layers``) instead of the Python
  function ``ri_fx_convert`` that only RareIndex's connections register, so the sqlite3 shell can
  read the views. PostgreSQL keeps its SQL function ``ri_fx_convert``; the results are the same
  to the cent.
* The downgrade puts back the views of 0010 and drops ``fx_settings``.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01 23:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rareindex.storage.schema.fx import (
    DEFAULT_STALE_DAYS,
    multi_currency_view_sql,
    multi_currency_view_sql_0010,
)

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def _replace_views(statements: dict[str, str]) -> None:
    for view in statements:
        op.execute(f"DROP VIEW IF EXISTS {view}")
    for statement in statements.values():
        op.execute(statement)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    settings = op.create_table(
        "fx_settings",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column(
            "stale_days",
            sa.Integer(),
            nullable=False,
            comment="a rate more than this many days older than the row it prices is fx_stale",
        ),
        sa.CheckConstraint("id = 1", name="ck_fx_settings_one_row"),
        sa.CheckConstraint("stale_days >= 0", name="ck_fx_settings_stale_days"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(settings, [{"id": 1, "stale_days": DEFAULT_STALE_DAYS}])
    _replace_views(multi_currency_view_sql(dialect))


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    _replace_views(multi_currency_view_sql_0010(dialect))
    op.drop_table("fx_settings")

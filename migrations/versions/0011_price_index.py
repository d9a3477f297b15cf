"""The price index's tables: ``price_estimates``, ``grade_curves`` and ``index_values``.

* ``price_estimates``: one row per variant with an estimate — its value in USD and in its sale
  currency with the interval, how many sales and which dates it rests on, the confidence label,
  and whether it is ``direct`` or ``derived`` (borrowed from another grade through the curve).
* ``grade_curves``: per category and grade, the log price offset to the reference grade.
* ``index_values``: one row per index (``category:<name>``, ``set:<id>``) and week: the level
  (100 at the base week), its band, the pairs it rests on and the method (``wls``, ``median``,
  ``carried``, ``base``).
* All three are rebuilt by ``rareindex index build``; the downgrade drops them.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import rareindex.storage.types

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def _exact() -> rareindex.storage.types.ExactDecimal:
    return rareindex.storage.types.ExactDecimal()


def upgrade() -> None:
    op.create_table(
        "price_estimates",
        sa.Column("variant_id", sa.Text(), nullable=False),
        sa.Column("asset_id", sa.Text(), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("value_usd", _exact(), nullable=False),
        sa.Column("low_usd", _exact(), nullable=False),
        sa.Column("high_usd", _exact(), nullable=False),
        sa.Column("currency", sa.Text(), nullable=False),
        sa.Column("value", _exact(), nullable=False),
        sa.Column("low", _exact(), nullable=False),
        sa.Column("high", _exact(), nullable=False),
        sa.Column("n_sales", sa.Integer(), nullable=False),
        sa.Column("first_sale", sa.Date(), nullable=False),
        sa.Column("last_sale", sa.Date(), nullable=False),
        sa.Column("log_sd", _exact(), nullable=False),
        sa.Column("confidence", sa.Text(), nullable=False, comment="high, medium, low"),
        sa.Column("basis", sa.Text(), nullable=False, comment="direct, derived"),
        sa.Column("derived_from", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("variant_id", name=op.f("pk_price_estimates")),
    )
    op.create_index(
        op.f("ix_price_estimates_asset_id"), "price_estimates", ["asset_id"], unique=False
    )
    op.create_table(
        "grade_curves",
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("grade", sa.Text(), nullable=False),
        sa.Column("reference", sa.Text(), nullable=False),
        sa.Column("log_offset", _exact(), nullable=False),
        sa.Column("assets", sa.Integer(), nullable=False),
        sa.Column("spread", _exact(), nullable=False),
        sa.PrimaryKeyConstraint("category", "grade", name=op.f("pk_grade_curves")),
    )
    op.create_table(
        "index_values",
        sa.Column("index_id", sa.Text(), nullable=False, comment="category:<name>, set:<id>"),
        sa.Column("week", sa.Date(), nullable=False, comment="the Monday (UTC) of the week"),
        sa.Column("level", _exact(), nullable=False),
        sa.Column("low", _exact(), nullable=False),
        sa.Column("high", _exact(), nullable=False),
        sa.Column("pairs", sa.Integer(), nullable=False),
        sa.Column("method", sa.Text(), nullable=False, comment="base, wls, median, carried"),
        sa.PrimaryKeyConstraint("index_id", "week", name=op.f("pk_index_values")),
    )


def downgrade() -> None:
    op.drop_table("index_values")
    op.drop_table("grade_curves")
    op.drop_index(op.f("ix_price_estimates_asset_id"), table_name="price_estimates")
    op.drop_table("price_estimates")

"""What an incremental price-index update needs: ``priced_sales`` and the exact index state.

* ``priced_sales``: every sale that entered the index, as it entered (variant, asset, category,
  set, time, price realised in USD and in its currency, sale type). A resolve batch re-prices the
  sales of the variants it touched and replaces their rows; the build reads this table instead
  of joining every sale through the FX view again.
* ``index_values.log_level`` and ``index_values.se``: each week's log level (against the index's
  first week) and its step's standard error, unrounded (double precision), so a build resumed
  from the week of the earliest new sale continues from exactly what a full build computed;
  ``index_values.base_week``: the week the build set at 100 (NULL: the index's first week).
* ``pricing_state``: one row, the generation of ``priced_sales`` (a new random id at each write),
  so a process that kept its own copy of the priced sales knows whether it is still current.
* Rows written before this revision have NULL there: the next update is a full rebuild.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 23:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import rareindex.storage.types

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "priced_sales",
        sa.Column("sale_id", sa.Text(), nullable=False),
        sa.Column("variant_id", sa.Text(), nullable=False),
        sa.Column("asset_id", sa.Text(), nullable=False),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("set_id", sa.Text(), nullable=True),
        sa.Column("sold_at", rareindex.storage.types.UTCDateTime(), nullable=False),
        sa.Column("price_usd", sa.Double(), nullable=False),
        sa.Column("price", rareindex.storage.types.ExactDecimal(), nullable=False),
        sa.Column("currency", sa.Text(), nullable=False),
        sa.Column("sale_type", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("sale_id", name=op.f("pk_priced_sales")),
    )
    op.create_index(op.f("ix_priced_sales_variant_id"), "priced_sales", ["variant_id"])
    op.create_table(
        "pricing_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column(
            "generation",
            sa.Text(),
            nullable=False,
            comment="a new random id at each priced_sales write",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pricing_state")),
    )
    # Nullable columns: ALTER TABLE ADD COLUMN on both databases, no table rebuild.
    op.add_column("index_values", sa.Column("log_level", sa.Double(), nullable=True))
    op.add_column("index_values", sa.Column("se", sa.Double(), nullable=True))
    op.add_column("index_values", sa.Column("base_week", sa.Date(), nullable=True))


def downgrade() -> None:
    # DROP COLUMN directly (SQLite >= 3.35), as 0013 does.
    op.execute("ALTER TABLE index_values DROP COLUMN base_week")
    op.execute("ALTER TABLE index_values DROP COLUMN se")
    op.execute("ALTER TABLE index_values DROP COLUMN log_level")
    op.drop_table("pricing_state")
    op.drop_index(op.f("ix_priced_sales_variant_id"), table_name="priced_sales")
    op.drop_table("priced_sales")

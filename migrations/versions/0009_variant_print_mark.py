"""Add ``asset_variants.print_mark``: the edition a title named for an asset without one.

* A catalog that does not tell its print runs apart (the Pokémon TCG data has one ``Base``
  Charizard, not a 1st Edition, a Shadowless and an Unlimited one) still gets listings that do:
  ``1st Edition`` in a title now makes its own variant (``…|psa|9||||1st edition``), so the
  price of a 1st Edition copy is never mixed with an Unlimited one.
* NULL for every variant already there and for every title that names no edition: their variant
  keys and ids do not change.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("asset_variants", schema=None) as batch_op:
        batch_op.add_column(sa.Column("print_mark", sa.Text(), nullable=True))


def downgrade() -> None:
    # DROP COLUMN directly (SQLite >= 3.35): a batch rebuild drops asset_variants, and with rows
    # pointing at it (sales, listings, normalized records) SQLite's foreign keys refuse.
    op.execute("ALTER TABLE asset_variants DROP COLUMN print_mark")

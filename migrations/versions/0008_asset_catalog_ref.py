"""Add ``assets.catalog_ref``: the external id of the catalog item an asset was imported from.

* ``rareindex catalog import`` updates an asset in place when a newer dump of the catalog names
  the same item (a fixed card name changes the asset key, not the asset): the catalog's external
  id is the identity of an imported asset, its asset key only the way to find one without it.
* Unique where set: NULLs are distinct in a unique index on both databases, so assets from a
  connector's ``catalog_item`` records, which carry no reference, never clash.
* No backfill: an asset's ``attributes.external_id`` may come from a connector, whose ids are
  only unique per connector. The next import of a catalog adopts the assets it finds by asset
  key, and sets their reference then.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("catalog_ref", sa.Text(), nullable=True))
        batch_op.create_index(batch_op.f("ix_assets_catalog_ref"), ["catalog_ref"], unique=True)


def downgrade() -> None:
    # The index, then DROP COLUMN directly (SQLite >= 3.35): a batch rebuild drops assets, and
    # with rows pointing at it (variants, sales, listings) SQLite's foreign keys refuse.
    op.drop_index(op.f("ix_assets_catalog_ref"), table_name="assets")
    op.execute("ALTER TABLE assets DROP COLUMN catalog_ref")

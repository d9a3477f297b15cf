"""``normalized_records.fetched_at`` (its raw record's fetch time) and a partial index on the
pending rows in that order: the resolver reads its next batch off the index instead of joining
every pending row to ``raw_records`` and sorting them all (each batch cost O(pending): a
50,000-record crawl spent seconds per batch of 500 on PostgreSQL).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02 00:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rareindex.storage.types import UTCDateTime

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

_PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    # A nullable column: ALTER TABLE ADD COLUMN on both databases, no table rebuild.
    op.add_column(
        "normalized_records",
        sa.Column(
            "fetched_at",
            UTCDateTime(),
            nullable=True,
            comment="its raw record's fetched_at: the order the resolver takes pending rows in",
        ),
    )
    op.execute(
        "UPDATE normalized_records SET fetched_at = (SELECT r.fetched_at FROM raw_records r "
        "WHERE r.id = normalized_records.raw_id)"
    )
    op.create_index(
        "ix_normalized_records_pending",
        "normalized_records",
        ["fetched_at", "raw_id", "ordinal"],
        postgresql_where=_PENDING,
        sqlite_where=_PENDING,
    )


def downgrade() -> None:
    op.drop_index("ix_normalized_records_pending", table_name="normalized_records")
    # DROP COLUMN directly (SQLite >= 3.35): a batch rebuild would fight the foreign keys.
    op.execute("ALTER TABLE normalized_records DROP COLUMN fetched_at")

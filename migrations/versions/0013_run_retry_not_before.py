"""``connector_runs.retry_not_before``: when a host's ``Retry-After`` lets a rate-limited run's
connector crawl again. The scheduler enqueues nothing for the connector before that time, and
enqueues it then rather than at its next refresh interval.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 20:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rareindex.storage.types import UTCDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column: ALTER TABLE ADD COLUMN on both databases, no table rebuild.
    op.add_column(
        "connector_runs",
        sa.Column(
            "retry_not_before",
            UTCDateTime(),
            nullable=True,
            comment="the host's Retry-After that ended this run: no crawl of the connector "
            "before it",
        ),
    )


def downgrade() -> None:
    # DROP COLUMN directly (SQLite >= 3.35): a batch rebuild of connector_runs would fight the
    # foreign keys that point at it.
    op.execute("ALTER TABLE connector_runs DROP COLUMN retry_not_before")

"""The change-event outbox: ``events`` (cursor, type, stream, category, asset, variant,
connector, payload, created_at) and ``event_cursor``, the one-row counter that gives cursors in
commit order (``last``) and remembers the newest pruned cursor (``pruned_through``).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01 23:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rareindex.storage.types import JSONDoc, UTCDateTime

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("cursor", sa.BigInteger(), autoincrement=False, comment="commit order"),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column(
            "stream",
            sa.Text(),
            nullable=False,
            comment="asset:<id>, category:<cat>, connector:<id>",
        ),
        sa.Column("category", sa.Text()),
        sa.Column("asset_id", sa.Text()),
        sa.Column("variant_id", sa.Text()),
        sa.Column("connector_id", sa.Text()),
        sa.Column("payload", JSONDoc, nullable=False, comment="ids and values (money as strings)"),
        sa.Column("created_at", UTCDateTime(), nullable=False, comment="when the cursor was given"),
        sa.PrimaryKeyConstraint("cursor", name=op.f("pk_events")),
    )
    op.create_index("ix_events_created_at", "events", ["created_at"])
    cursor = op.create_table(
        "event_cursor",
        sa.Column("id", sa.Integer(), autoincrement=False),
        sa.Column("last", sa.BigInteger(), nullable=False, comment="the newest cursor given"),
        sa.Column(
            "pruned_through",
            sa.BigInteger(),
            nullable=False,
            comment="events up to this cursor were pruned (0: none)",
        ),
        sa.CheckConstraint("id = 1", name=op.f("ck_event_cursor_one_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_cursor")),
    )
    op.bulk_insert(cursor, [{"id": 1, "last": 0, "pruned_through": 0}])


def downgrade() -> None:
    op.drop_table("event_cursor")
    op.drop_index("ix_events_created_at", table_name="events")
    op.drop_table("events")

"""Dead letters: messages that failed every retry, kept for the operator to requeue.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 08:25:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy import Text
from sqlalchemy.dialects import postgresql

import rareindex.storage.types

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    json_type = sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql")
    op.create_table(
        "dead_letters",
        sa.Column("id", sa.Text(), nullable=False, comment="the dramatiq message id"),
        sa.Column("queue", sa.Text(), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("args", json_type, nullable=False),
        sa.Column("kwargs", json_type, nullable=False),
        sa.Column("retries", sa.Integer(), server_default="0", nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("failed_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("requeued_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dead_letters")),
    )
    op.create_index(
        op.f("ix_dead_letters_requeued_at_failed_at"),
        "dead_letters",
        ["requeued_at", "failed_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_dead_letters_requeued_at_failed_at"), table_name="dead_letters")
    op.drop_table("dead_letters")

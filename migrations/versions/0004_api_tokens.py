"""Admin API tokens: hashed bearer tokens, revoked but never deleted.

* ``api_tokens``: id, name, the SHA-256 of the token (never the token), role, created / last used /
  revoked times;
* ``ux_api_tokens_active_name``: a partial unique index, so at most one live token has a name
  (a revoked token's name can be given to a new one).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import rareindex.storage.types

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

LIVE = "revoked_at IS NULL"


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column(
            "id",
            sa.Text(),
            nullable=False,
            comment="tok_<16 hex>: names the token, not a secret",
        ),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column(
            "token_hash",
            sa.Text(),
            nullable=False,
            comment="sha256 hex of the whole token; the token itself is never stored",
        ),
        sa.Column("role", sa.Text(), server_default="admin", nullable=False),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column(
            "last_used_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column("revoked_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.CheckConstraint("role IN ('admin', 'read')", name=op.f("ck_api_tokens_role")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_index(
        "ux_api_tokens_active_name",
        "api_tokens",
        ["name"],
        unique=True,
        postgresql_where=sa.text(LIVE),
        sqlite_where=sa.text(LIVE),
    )


def downgrade() -> None:
    op.drop_index("ux_api_tokens_active_name", table_name="api_tokens")
    op.drop_table("api_tokens")

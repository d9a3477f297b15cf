"""``watchlists``: what a principal (an API token's name) wants to hear about — assets, variants,
categories or a title query, with optional price conditions (below / above a value in a currency,
a move of more than a percentage). One principal's rows are never read for another.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import rareindex.storage.types

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine:  # type: ignore[type-arg]
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _exact() -> rareindex.storage.types.ExactDecimal:
    return rareindex.storage.types.ExactDecimal()


def upgrade() -> None:
    op.create_table(
        "watchlists",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column(
            "principal",
            sa.Text(),
            nullable=False,
            comment="token:<name> (API) or the CLI's --principal",
        ),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("asset_ids", _json(), nullable=True, comment="a JSON list of ast_ ids, or NULL"),
        sa.Column(
            "variant_ids", _json(), nullable=True, comment="a JSON list of var_ ids, or NULL"
        ),
        sa.Column(
            "categories", _json(), nullable=True, comment="a JSON list of category names, or NULL"
        ),
        sa.Column(
            "title_query",
            sa.Text(),
            nullable=True,
            comment="words every one of which the event's title must hold",
        ),
        sa.Column("below", _exact(), nullable=True, comment="a price below this, in currency"),
        sa.Column("above", _exact(), nullable=True, comment="a price above this, in currency"),
        sa.Column("currency", sa.Text(), nullable=True, comment="the ISO code of below / above"),
        sa.Column(
            "move_pct",
            _exact(),
            nullable=True,
            comment="a price move of more than this many percent",
        ),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_watchlists")),
        sa.UniqueConstraint("principal", "name", name=op.f("uq_watchlists_principal_name")),
    )
    op.create_index(op.f("ix_watchlists_principal_id"), "watchlists", ["principal", "id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_watchlists_principal_id"), table_name="watchlists")
    op.drop_table("watchlists")

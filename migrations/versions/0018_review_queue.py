"""The review queue: ``review_items`` (one row per quarantined price observation, with its
reference and the decision: pending, accepted or rejected, who, when and why) and
``review_limits`` (the change limit per category; ``*`` the default). The multi-currency views
gain ``quarantined``: a sale whose observation is held for review (pending or rejected), a
listing whose current price is — what the index leaves out (``rareindex.review``).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 00:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import rareindex.storage.types
from rareindex.storage.schema.fx import multi_currency_view_sql
from rareindex.storage.schema.review import views_with_review

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def _exact() -> rareindex.storage.types.ExactDecimal:
    return rareindex.storage.types.ExactDecimal()


def _when() -> rareindex.storage.types.UTCDateTime:
    return rareindex.storage.types.UTCDateTime()


def _replace_views(statements: dict[str, str]) -> None:
    for view in statements:
        op.execute(f"DROP VIEW IF EXISTS {view}")
    for statement in statements.values():
        op.execute(statement)


def upgrade() -> None:
    op.create_table(
        "review_items",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("observation_id", sa.Text(), nullable=False, comment="price_observations.id"),
        sa.Column("kind", sa.Text(), nullable=False, comment="sale, realised, ask"),
        sa.Column(
            "sale_id",
            sa.Text(),
            nullable=True,
            comment="the sales row of a sale or realised observation",
        ),
        sa.Column("listing_id", sa.Text(), nullable=True, comment="the listings row of an ask"),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("asset_id", sa.Text(), nullable=False),
        sa.Column("variant_id", sa.Text(), nullable=False),
        sa.Column("category", sa.Text(), nullable=True),
        sa.Column("observed_at", _when(), nullable=False),
        sa.Column("price", _exact(), nullable=False),
        sa.Column("currency", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False, comment="above_limit, below_limit, anomaly"),
        sa.Column(
            "anomaly_reason",
            sa.Text(),
            nullable=True,
            comment="the anomaly rule that flagged it (reason anomaly)",
        ),
        sa.Column(
            "reference_basis",
            sa.Text(),
            nullable=True,
            comment="estimate or median (of recent sales)",
        ),
        sa.Column("reference", _exact(), nullable=True, comment="the reference price, in currency"),
        sa.Column("ratio", _exact(), nullable=True, comment="price / reference"),
        sa.Column(
            "limit_factor", _exact(), nullable=True, comment="the category's limit when judged"
        ),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column(
            "decided_by",
            sa.Text(),
            nullable=True,
            comment="token:<name> (API) or user:<login> (CLI)",
        ),
        sa.Column("decided_at", _when(), nullable=True),
        sa.Column("decision_reason", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            _when(),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'accepted', 'rejected')", name=op.f("ck_review_items_status")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_items")),
        sa.UniqueConstraint("observation_id", name=op.f("uq_review_items_observation_id")),
    )
    op.create_index(
        op.f("ix_review_items_status_created_at"), "review_items", ["status", "created_at"]
    )
    op.create_index(
        op.f("ix_review_items_connector_id_created_at"),
        "review_items",
        ["connector_id", "created_at"],
    )
    op.create_index(op.f("ix_review_items_sale_id"), "review_items", ["sale_id"])
    op.create_index(op.f("ix_review_items_listing_id"), "review_items", ["listing_id"])
    op.create_table(
        "review_limits",
        sa.Column(
            "category", sa.Text(), nullable=False, comment="a category, or * for the default"
        ),
        sa.Column("factor", _exact(), nullable=False),
        sa.Column("set_by", sa.Text(), nullable=True),
        sa.Column("set_at", _when(), nullable=True),
        sa.PrimaryKeyConstraint("category", name=op.f("pk_review_limits")),
    )
    dialect = op.get_bind().dialect.name
    _replace_views(views_with_review(multi_currency_view_sql(dialect)))


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    _replace_views(multi_currency_view_sql(dialect))
    op.drop_table("review_limits")
    for name in ("listing_id", "sale_id", "connector_id_created_at", "status_created_at"):
        op.drop_index(op.f(f"ix_review_items_{name}"), table_name="review_items")
    op.drop_table("review_items")

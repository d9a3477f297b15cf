"""The index the scheduler reads a backfill campaign's last slice through.

* ``connector_runs(backfill_id, created_at)``: per running campaign, the scheduler asks for its
  newest slice (``WHERE backfill_id = … ORDER BY created_at DESC LIMIT 1``); without an index each
  of those lookups scanned every run, so a tick's cost grew with campaigns times runs.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 13:40:00
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        op.f("ix_connector_runs_backfill_id_created_at"),
        "connector_runs",
        ["backfill_id", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_connector_runs_backfill_id_created_at"), table_name="connector_runs")

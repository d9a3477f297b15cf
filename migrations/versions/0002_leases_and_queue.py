"""Leases with fencing tokens, and the run queue's indexes (invariant 7 of
docs/architecture.md#the-invariants-and-where-each-is-tested).

* ``leases``: one row per named role (the scheduler leader), with a fencing token;
* ``ux_connector_runs_active``: a partial unique index — at most one ``queued`` or ``running`` run
  per connector — so a duplicate enqueue is refused by the database on both dialects. Before it is
  built, any older duplicates (possible before this revision) are closed as ``failed/crashed``,
  keeping the newest run of each connector;
* ``connector_runs(connector_id, mode, started_at)`` and ``(status, queued_at)`` for the
  scheduler's due and sweep queries.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import rareindex.storage.types

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ACTIVE = "status IN ('queued', 'running')"

CLOSE_OLDER_DUPLICATES = """
UPDATE connector_runs
   SET status = 'failed', outcome = 'failed', failure_reason = 'crashed',
       error = 'superseded by a newer run of the same connector (migration 0002)',
       finished_at = CURRENT_TIMESTAMP, lease_expires_at = NULL
 WHERE status IN ('queued', 'running')
   AND EXISTS (
     SELECT 1 FROM connector_runs AS newer
      WHERE newer.connector_id = connector_runs.connector_id
        AND newer.status IN ('queued', 'running')
        AND (newer.created_at > connector_runs.created_at
             OR (newer.created_at = connector_runs.created_at AND newer.id > connector_runs.id)))
"""


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.Text(), nullable=False, comment="the role, e.g. 'scheduler'"),
        sa.Column(
            "holder",
            sa.Text(),
            nullable=False,
            comment="host:pid:nonce of the current holder",
        ),
        sa.Column(
            "token",
            sa.BigInteger(),
            nullable=False,
            comment="fencing token: +1 on every takeover",
        ),
        sa.Column(
            "acquired_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("renewed_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    op.execute(CLOSE_OLDER_DUPLICATES)
    op.create_index(
        "ux_connector_runs_active",
        "connector_runs",
        ["connector_id"],
        unique=True,
        postgresql_where=sa.text(ACTIVE),
        sqlite_where=sa.text(ACTIVE),
    )
    op.create_index(
        op.f("ix_connector_runs_connector_id_mode_started_at"),
        "connector_runs",
        ["connector_id", "mode", "started_at"],
        unique=False,
    )
    op.create_index(
        op.f("ix_connector_runs_status_queued_at"),
        "connector_runs",
        ["status", "queued_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_connector_runs_status_queued_at"), table_name="connector_runs")
    op.drop_index(
        op.f("ix_connector_runs_connector_id_mode_started_at"), table_name="connector_runs"
    )
    op.drop_index("ux_connector_runs_active", table_name="connector_runs")
    op.drop_table("leases")

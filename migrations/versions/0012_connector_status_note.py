"""Who changed a connector's status last, when and why (``rareindex connectors pause|resume|
disable|enable|maintenance ID --reason …`` and the admin API's twins).

* ``connectors.status_reason``: the operator's reason, free text (NULL when none was given);
* ``connectors.status_changed_by``: the OS user (CLI) or ``token:<name>`` (API) who set it;
* ``connectors.status_changed_at``: when.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 20:05:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rareindex.storage.types import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_COLUMNS = ("status_reason", "status_changed_by", "status_changed_at")


def upgrade() -> None:
    with op.batch_alter_table("connectors") as batch:
        batch.add_column(
            sa.Column(
                "status_reason",
                sa.Text(),
                nullable=True,
                comment="why the operator set the status (free text)",
            )
        )
        batch.add_column(
            sa.Column(
                "status_changed_by",
                sa.Text(),
                nullable=True,
                comment="OS user (CLI) or token:<name> (API)",
            )
        )
        batch.add_column(sa.Column("status_changed_at", UTCDateTime(timezone=True), nullable=True))


def downgrade() -> None:
    # DROP COLUMN directly (SQLite >= 3.35), as 0013 does: a batch rebuild of connectors drops
    # the table, and with rows pointing at it (raw records, runs) SQLite's foreign keys refuse.
    for name in reversed(_COLUMNS):
        op.execute(f"ALTER TABLE connectors DROP COLUMN {name}")

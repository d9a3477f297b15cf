"""Store ``raw_records.payload`` as ``json`` (the text as captured) instead of ``jsonb``.

* A raw record is an archive of what a source sent. ``json`` keeps the canonical text the
  content hash was computed over, byte for byte; ``jsonb`` re-encoded it.
* No query reads into a raw payload with SQL operators or indexes: the normalizer loads it
  whole. ``jsonb`` only cost its parse on every insert — the largest share of the server's work
  per raw row: COPY of the benchmark's rows into a copy of ``raw_records`` ran at 51,600 rows/s
  with ``jsonb`` and 95,200 with ``json`` (batches of 500, this machine, 2026-11-30).
* The change rewrites every ``raw_records`` partition once, under an exclusive lock: on a large
  fleet database run it in a maintenance window.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":  # SQLite stores JSON as text either way
        op.alter_column(
            "raw_records",
            "payload",
            type_=sa.JSON(),
            existing_type=postgresql.JSONB(),
            postgresql_using="payload::json",
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "raw_records",
            "payload",
            type_=postgresql.JSONB(),
            existing_type=sa.JSON(),
            postgresql_using="payload::jsonb",
        )

"""Store ``raw_records.payload`` as ``json`` (the text as captured) instead of ``jsonb``.

* A raw record is an archive of what a source sent. ``json`` keeps the canonical text the
  content hash was computed over, byte for byte; ``jsonb`` re-encoded it.
* No query reads into a raw payload with SQL operators or indexes: the normalizer loads it
  whole. ``jsonb`` only cost its parse on every insert — the largest share of the server's work
  per raw row: COPY of the benchmark's rows into a copy of ``raw_records`` ran at 51,600 rows/s
  with ``jsonb`` and 95,200 with ``json`` (batches of 500, this machine, 2026-11-30).
* The change rewrites every ``raw_records`` partition once, under an exclusive lock: on a large
  fleet database run it in a maintenance window.
* The downgrade leaves the column ``json``. Going back to ``jsonb`` would lose what the archive
  holds: ``jsonb`` refuses a payload with ``\\u0000`` (a crawled title may hold one), so the
  downgrade failed, and it re-encodes every other payload, so after a downgrade and upgrade no
  row's ``content_hash`` matched its text any longer. The code of revisions 0001-0006 reads and
  writes a ``json`` column as it did ``jsonb`` (psycopg parses both, COPY takes the text), and the
  upgrade converts only a column that is still ``jsonb``.

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


def _payload_type(bind: sa.Connection) -> str:
    return str(
        bind.execute(
            sa.text(
                "SELECT data_type FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND table_name = 'raw_records' AND column_name = 'payload'"
            )
        ).scalar_one()
    )


def upgrade() -> None:
    bind = op.get_bind()
    # SQLite stores JSON as text either way; a column this revision's downgrade left is json.
    if bind.dialect.name == "postgresql" and _payload_type(bind) == "jsonb":
        op.alter_column(
            "raw_records",
            "payload",
            type_=sa.JSON(),
            existing_type=postgresql.JSONB(),
            postgresql_using="payload::json",
        )


def downgrade() -> None:
    """Nothing to undo: ``jsonb`` cannot hold every stored payload, nor keep its hashed text."""

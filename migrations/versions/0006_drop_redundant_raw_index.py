"""Drop ``raw_records(connector_id, external_id)``: a redundant index on the crawl's hot path.

* No query filters ``raw_records`` by external id: the dedupe lookups go to ``raw_record_keys``,
  whose primary key ``(connector_id, external_id, content_hash)`` starts with the same columns.
* Every raw row inserted paid for it: the COPY into ``raw_records`` ran 12% faster without it
  (41,700 against 37,300 rows/s on the benchmark machine).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 14:50:00
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("raw_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_raw_records_connector_id_external_id"))


def downgrade() -> None:
    with op.batch_alter_table("raw_records", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_raw_records_connector_id_external_id"),
            ["connector_id", "external_id"],
            unique=False,
        )

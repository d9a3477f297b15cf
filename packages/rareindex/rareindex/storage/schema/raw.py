"""Raw captures and the staging of their normalized records.

``raw_records`` is insert-only (triggers refuse UPDATE and DELETE on both dialects) and on
PostgreSQL range-partitioned by ``fetched_at``; its primary key therefore includes ``fetched_at``.
Deduplication needs a key that is unique across partitions, so ``raw_record_keys`` (not
partitioned) holds ``(connector_id, external_id, content_hash)``: an insert that conflicts there is
a *dupe* and writes no raw row. Tables referring to a raw record carry its id without a foreign
key, because PostgreSQL would need the partition key in every reference.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from ..types import JSONDoc, UTCDateTime
from ._base import created_at, id_column, metadata

__all__ = ["CHECKED_BY_TRIGGERS", "normalized_records", "raw_record_keys", "raw_records"]

CHECKED_BY_TRIGGERS = "checked_by_triggers_on_postgresql"
"""``info`` key of a foreign key that PostgreSQL checks once per statement with triggers instead
of a constraint (migration 0020: ``raw_records.connector_id``, checked per row it was a fifth
of a batch's commit). SQLite keeps the constraint."""

raw_records = Table(
    "raw_records",
    metadata,
    Column("id", Text, nullable=False),
    Column("fetched_at", UTCDateTime(), nullable=False),
    Column(
        "connector_id",
        Text,
        ForeignKey("connectors.id", info={CHECKED_BY_TRIGGERS: "0020"}),
        nullable=False,
    ),
    Column("run_id", Text),
    Column("external_id", Text, nullable=False),
    Column("url", Text, nullable=False),
    # json, not jsonb: the captured text as hashed, and no parse per insert (migration 0007)
    Column("payload", JSON()),
    Column("snapshot_ref", Text, comment="sha256 of the snapshot in the blob store"),
    Column("snapshot_size", Integer),
    Column("engine", Text, nullable=False),
    Column("http_status", Integer),
    Column("content_hash", Text, nullable=False),
    Column("connector_version", Text, nullable=False),
    Column("parser_version", Text, nullable=False),
    PrimaryKeyConstraint("id", "fetched_at"),
    Index(None, "connector_id", "fetched_at"),
    # No (connector_id, external_id) index: raw_record_keys' primary key starts with those
    # columns and answers that lookup; here it cost 12% of the COPY (migration 0006).
    postgresql_partition_by="RANGE (fetched_at)",
)

raw_record_keys = Table(
    "raw_record_keys",
    metadata,
    Column("connector_id", Text, primary_key=True),
    Column("external_id", Text, primary_key=True),
    Column("content_hash", Text, primary_key=True),
    Column("raw_id", Text, nullable=False),
    Column("fetched_at", UTCDateTime(), nullable=False),
)

normalized_records = Table(
    "normalized_records",
    metadata,
    id_column(),
    Column("raw_id", Text, nullable=False),
    Column("connector_id", Text, ForeignKey("connectors.id"), nullable=False),
    Column("parser_version", Text, nullable=False),
    Column("ordinal", Integer, nullable=False, comment="position in normalize() output"),
    Column("kind", Text, nullable=False),
    Column("record", JSONDoc, nullable=False),
    Column("status", Text, nullable=False, server_default="pending"),
    Column("match_method", Text),
    Column("match_confidence", Float),
    Column("reject_reason", Text),
    Column("anomaly_flags", JSONDoc),
    Column("asset_id", Text, ForeignKey("assets.id")),
    Column("variant_id", Text, ForeignKey("asset_variants.id")),
    created_at(),
    Column("resolved_at", UTCDateTime()),
    Column(
        "fetched_at",
        UTCDateTime(),
        comment="its raw record's fetched_at: the order the resolver takes pending rows in",
    ),
    UniqueConstraint("raw_id", "parser_version", "ordinal"),
    CheckConstraint(
        "status IN ('pending', 'matched', 'unmatched', 'rejected', 'failed')", name="status"
    ),
    Index(None, "status", "kind"),
    Index(None, "asset_id"),
    # The resolver's next batch: the oldest pending rows, read off this index in order (a join
    # to raw_records and a sort of every pending row made each batch cost O(pending)).
    Index(
        "ix_normalized_records_pending",
        "fetched_at",
        "raw_id",
        "ordinal",
        postgresql_where=text("status = 'pending'"),
        sqlite_where=text("status = 'pending'"),
    ),
)

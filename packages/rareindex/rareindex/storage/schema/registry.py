"""Registry mirror and runtime state: sources, connectors, runs, backfills, health, costs."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    Table,
    Text,
    false,
)

from ..types import ExactDecimal, JSONDoc, UTCDateTime
from ._base import created_at, id_column, metadata, updated_at

__all__ = [
    "connector_backfills",
    "connector_field_stats",
    "connector_health",
    "connector_runs",
    "connectors",
    "costs",
    "crawl_state",
    "sources",
]

sources = Table(
    "sources",
    metadata,
    Column("id", Text, primary_key=True, comment="slug of the website or company"),
    Column("name", Text, nullable=False),
    Column("homepage", Text),
    created_at(),
    updated_at(),
)

connectors = Table(
    "connectors",
    metadata,
    Column("id", Text, primary_key=True, comment="the connector slug"),
    Column("source_id", Text, ForeignKey("sources.id"), nullable=False),
    Column("version", Text, nullable=False),
    Column("parser_version", Text, nullable=False),
    Column("refresh_class", Text, nullable=False),
    Column("meta", JSONDoc, nullable=False),
    Column("config", JSONDoc),
    Column("status", Text, nullable=False, server_default="active"),
    Column("cursor", JSONDoc),
    Column("cursor_updated_at", UTCDateTime()),
    Column("status_reason", Text, comment="why the operator set the status (free text)"),
    Column("status_changed_by", Text, comment="OS user (CLI) or token:<name> (API)"),
    Column("status_changed_at", UTCDateTime()),
    created_at(),
    updated_at(),
    CheckConstraint("status IN ('active', 'paused', 'maintenance', 'disabled')", name="status"),
    CheckConstraint(
        "refresh_class IN ('HOT', 'ACTIVE', 'NORMAL', 'ARCHIVE')", name="refresh_class"
    ),
)

connector_runs = Table(
    "connector_runs",
    metadata,
    id_column(),
    Column("connector_id", Text, ForeignKey("connectors.id"), nullable=False),
    Column("mode", Text, nullable=False),
    Column("backfill_id", Text, ForeignKey("connector_backfills.id")),
    Column("status", Text, nullable=False, server_default="queued"),
    Column("outcome", Text),
    Column("failure_reason", Text),
    Column("lease_token", BigInteger, nullable=False, server_default="0"),
    Column("lease_expires_at", UTCDateTime()),
    Column("queued_at", UTCDateTime()),
    Column("started_at", UTCDateTime()),
    Column("finished_at", UTCDateTime()),
    Column(
        "retry_not_before",
        UTCDateTime(),
        comment="the host's Retry-After that ended this run: no crawl of the connector before it",
    ),
    Column("pages", Integer, nullable=False, server_default="0"),
    Column("records", Integer, nullable=False, server_default="0"),
    Column("dupes", Integer, nullable=False, server_default="0"),
    Column("anomalies", Integer, nullable=False, server_default="0"),
    Column("cost_credits", ExactDecimal(), nullable=False, server_default="0"),
    Column("engine_stats", JSONDoc),
    Column("cursor_start", JSONDoc),
    Column("cursor_end", JSONDoc),
    Column("error", Text),
    created_at(),
    CheckConstraint("mode IN ('incremental', 'backfill')", name="mode"),
    CheckConstraint(
        "status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')", name="status"
    ),
    Index(None, "connector_id", "created_at"),
    Index(None, "status"),
    # A campaign's last slice, for the scheduler (storage/queue.py ``_next_backfills``).
    Index(None, "backfill_id", "created_at"),
)

connector_backfills = Table(
    "connector_backfills",
    metadata,
    id_column(),
    Column("connector_id", Text, ForeignKey("connectors.id"), nullable=False),
    Column("status", Text, nullable=False, server_default="running"),
    Column("start_from", JSONDoc),
    Column("last_cursor", JSONDoc),
    Column("page_budget", Integer, nullable=False, server_default="50"),
    Column("pages_processed", Integer, nullable=False, server_default="0"),
    Column("items_processed", Integer, nullable=False, server_default="0"),
    Column("total_pages", Integer),
    Column("reached_date", UTCDateTime()),
    Column("percent", Float),
    Column("errors", Integer, nullable=False, server_default="0"),
    Column("retries", Integer, nullable=False, server_default="0"),
    Column("last_error", Text),
    created_at(),
    updated_at(),
    Column("finished_at", UTCDateTime()),
    CheckConstraint(
        "status IN ('running', 'paused', 'cancelled', 'completed', 'failed')", name="status"
    ),
    Index(None, "connector_id", "status"),
)

connector_health = Table(
    "connector_health",
    metadata,
    Column("connector_id", Text, ForeignKey("connectors.id"), primary_key=True),
    Column("status", Text, nullable=False),
    Column("checked_at", UTCDateTime(), nullable=False),
    Column("success_rate", Float),
    Column("records_per_run", Float),
    Column("blocked_rate", Float),
    Column("breaker_state", Text),
    Column("schema_drift", Boolean, nullable=False, server_default=false()),
    Column("freshness_seconds", Integer),
    Column("details", JSONDoc),
    CheckConstraint(
        "status IN ('UP', 'DEGRADED', 'BROKEN', 'DISABLED', 'MAINTENANCE')", name="status"
    ),
)

connector_field_stats = Table(
    "connector_field_stats",
    metadata,
    Column("connector_id", Text, ForeignKey("connectors.id"), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("record_kind", Text, primary_key=True),
    Column("field", Text, primary_key=True),
    Column("present", Integer, nullable=False, server_default="0"),
    Column("total", Integer, nullable=False, server_default="0"),
)

crawl_state = Table(
    "crawl_state",
    metadata,
    Column("connector_id", Text, ForeignKey("connectors.id"), primary_key=True),
    Column("url", Text, primary_key=True),
    Column("content_hash", Text),
    Column("etag", Text),
    Column("last_modified", Text),
    Column("change_interval_seconds", Float),
    Column("last_fetched_at", UTCDateTime()),
    Column("last_changed_at", UTCDateTime()),
    Column("next_fetch_at", UTCDateTime()),
    Column("changes", Integer, nullable=False, server_default="0"),
    Column("unchanged", Integer, nullable=False, server_default="0"),
    Column("failures", Integer, nullable=False, server_default="0"),
    Index(None, "connector_id", "next_fetch_at"),
)

costs = Table(
    "costs",
    metadata,
    Column("connector_id", Text, ForeignKey("connectors.id"), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("engine", Text, primary_key=True),
    Column("credits", ExactDecimal(), nullable=False, server_default="0"),
    Column("requests", Integer, nullable=False, server_default="0"),
)

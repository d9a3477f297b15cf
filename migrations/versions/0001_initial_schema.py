"""Initial schema: every table (docs/architecture.md#the-tables), on SQLite and PostgreSQL.

Beyond the tables (generated from ``rareindex.storage.schema`` and then frozen here):

* raw records are insert-only: triggers refuse UPDATE and DELETE on both dialects;
* on PostgreSQL, ``raw_records``, ``sales`` and ``price_observations`` are range-partitioned by
  month with a DEFAULT partition, and ``ri_ensure_partitions(table, months_back, months_ahead)``
  creates monthly partitions ahead (moving any rows the DEFAULT partition holds for that month);
  ``rareindex db maintain`` calls it;
* the ``sales_multi_currency`` and ``listings_multi_currency`` views.

Revision ID: 0001
Revises:
Create Date: 2026-11-30 07:25:20.579610
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy import Text
from sqlalchemy.dialects import postgresql

import rareindex.storage.types
from rareindex.storage.schema.fx import multi_currency_view_sql_0001

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "brands",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("normalized_name", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_brands")),
        sa.UniqueConstraint("normalized_name", name=op.f("uq_brands_normalized_name")),
    )
    op.create_table(
        "fx_rates",
        sa.Column("rate_date", sa.Date(), nullable=False),
        sa.Column("currency", sa.Text(), nullable=False),
        sa.Column(
            "per_usd",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=False,
            comment="units of currency per 1 USD",
        ),
        sa.Column("source", sa.Text(), server_default="ecb", nullable=False),
        sa.PrimaryKeyConstraint("rate_date", "currency", name=op.f("pk_fx_rates")),
    )
    op.create_table(
        "images",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column(
            "owner_type", sa.Text(), nullable=False, comment="asset, listing, sale, auction_lot"
        ),
        sa.Column("owner_id", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=True),
        sa.Column("width", sa.Integer(), nullable=True),
        sa.Column("height", sa.Integer(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_images")),
        sa.UniqueConstraint(
            "owner_type", "owner_id", "url", name=op.f("uq_images_owner_type_owner_id_url")
        ),
    )
    op.create_table(
        "raw_record_keys",
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=False),
        sa.Column("raw_id", sa.Text(), nullable=False),
        sa.Column("fetched_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "connector_id", "external_id", "content_hash", name=op.f("pk_raw_record_keys")
        ),
    )
    op.create_table(
        "sources",
        sa.Column("id", sa.Text(), nullable=False, comment="slug of the website or company"),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("homepage", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sources")),
    )
    op.create_table(
        "auctions",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("starts_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("ends_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("currency", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_auctions_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auctions")),
        sa.UniqueConstraint(
            "source_id", "external_id", name=op.f("uq_auctions_source_id_external_id")
        ),
    )
    op.create_table(
        "connectors",
        sa.Column("id", sa.Text(), nullable=False, comment="the connector slug"),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Text(), nullable=False),
        sa.Column("parser_version", sa.Text(), nullable=False),
        sa.Column("refresh_class", sa.Text(), nullable=False),
        sa.Column(
            "meta",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "config",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("status", sa.Text(), server_default="active", nullable=False),
        sa.Column(
            "cursor",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "cursor_updated_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "refresh_class IN ('HOT', 'ACTIVE', 'NORMAL', 'ARCHIVE')",
            name=op.f("ck_connectors_refresh_class"),
        ),
        sa.CheckConstraint(
            "status IN ('active', 'paused', 'maintenance', 'disabled')",
            name=op.f("ck_connectors_status"),
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_connectors_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_connectors")),
    )
    op.create_table(
        "news",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column(
            "published_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("author", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_news_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_news")),
        sa.UniqueConstraint("source_id", "external_id", name=op.f("uq_news_source_id_external_id")),
    )
    with op.batch_alter_table("news", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_news_published_at"), ["published_at"], unique=False)

    op.create_table(
        "sets",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("brand_id", sa.Text(), nullable=True),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("normalized_name", sa.Text(), nullable=False),
        sa.Column("year", sa.Integer(), nullable=True),
        sa.Column("set_code", sa.Text(), nullable=True),
        sa.Column("language", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["brand_id"], ["brands.id"], name=op.f("fk_sets_brand_id_brands")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sets")),
        sa.UniqueConstraint(
            "category",
            "normalized_name",
            "year",
            name=op.f("uq_sets_category_normalized_name_year"),
        ),
    )
    op.create_table(
        "assets",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("asset_key", sa.Text(), nullable=False),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("year", sa.Integer(), nullable=True),
        sa.Column("brand_id", sa.Text(), nullable=True),
        sa.Column("set_id", sa.Text(), nullable=True),
        sa.Column("number", sa.Text(), nullable=True),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("parallel", sa.Text(), nullable=True),
        sa.Column("edition", sa.Text(), nullable=True),
        sa.Column("language", sa.Text(), nullable=True),
        sa.Column("print_run", sa.Integer(), nullable=True),
        sa.Column(
            "identifiers",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "attributes",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["brand_id"], ["brands.id"], name=op.f("fk_assets_brand_id_brands")
        ),
        sa.ForeignKeyConstraint(["set_id"], ["sets.id"], name=op.f("fk_assets_set_id_sets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assets")),
        sa.UniqueConstraint("asset_key", name=op.f("uq_assets_asset_key")),
    )
    with op.batch_alter_table("assets", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_assets_category_year_set_id"),
            ["category", "year", "set_id"],
            unique=False,
        )

    op.create_table(
        "connector_backfills",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), server_default="running", nullable=False),
        sa.Column(
            "start_from",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "last_cursor",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("page_budget", sa.Integer(), server_default="50", nullable=False),
        sa.Column("pages_processed", sa.Integer(), server_default="0", nullable=False),
        sa.Column("items_processed", sa.Integer(), server_default="0", nullable=False),
        sa.Column("total_pages", sa.Integer(), nullable=True),
        sa.Column(
            "reached_date", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column("percent", sa.Float(), nullable=True),
        sa.Column("errors", sa.Integer(), server_default="0", nullable=False),
        sa.Column("retries", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column("finished_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('running', 'paused', 'cancelled', 'completed', 'failed')",
            name=op.f("ck_connector_backfills_status"),
        ),
        sa.ForeignKeyConstraint(
            ["connector_id"],
            ["connectors.id"],
            name=op.f("fk_connector_backfills_connector_id_connectors"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_connector_backfills")),
    )
    with op.batch_alter_table("connector_backfills", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_connector_backfills_connector_id_status"),
            ["connector_id", "status"],
            unique=False,
        )

    op.create_table(
        "connector_field_stats",
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("record_kind", sa.Text(), nullable=False),
        sa.Column("field", sa.Text(), nullable=False),
        sa.Column("present", sa.Integer(), server_default="0", nullable=False),
        sa.Column("total", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["connector_id"],
            ["connectors.id"],
            name=op.f("fk_connector_field_stats_connector_id_connectors"),
        ),
        sa.PrimaryKeyConstraint(
            "connector_id", "day", "record_kind", "field", name=op.f("pk_connector_field_stats")
        ),
    )
    op.create_table(
        "connector_health",
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("checked_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("success_rate", sa.Float(), nullable=True),
        sa.Column("records_per_run", sa.Float(), nullable=True),
        sa.Column("blocked_rate", sa.Float(), nullable=True),
        sa.Column("breaker_state", sa.Text(), nullable=True),
        sa.Column("schema_drift", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("freshness_seconds", sa.Integer(), nullable=True),
        sa.Column(
            "details",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.CheckConstraint(
            "status IN ('UP', 'DEGRADED', 'BROKEN', 'DISABLED', 'MAINTENANCE')",
            name=op.f("ck_connector_health_status"),
        ),
        sa.ForeignKeyConstraint(
            ["connector_id"],
            ["connectors.id"],
            name=op.f("fk_connector_health_connector_id_connectors"),
        ),
        sa.PrimaryKeyConstraint("connector_id", name=op.f("pk_connector_health")),
    )
    op.create_table(
        "costs",
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("engine", sa.Text(), nullable=False),
        sa.Column(
            "credits",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            server_default="0",
            nullable=False,
        ),
        sa.Column("requests", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["connector_id"], ["connectors.id"], name=op.f("fk_costs_connector_id_connectors")
        ),
        sa.PrimaryKeyConstraint("connector_id", "day", "engine", name=op.f("pk_costs")),
    )
    op.create_table(
        "crawl_state",
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=True),
        sa.Column("etag", sa.Text(), nullable=True),
        sa.Column("last_modified", sa.Text(), nullable=True),
        sa.Column("change_interval_seconds", sa.Float(), nullable=True),
        sa.Column(
            "last_fetched_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column(
            "last_changed_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column(
            "next_fetch_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column("changes", sa.Integer(), server_default="0", nullable=False),
        sa.Column("unchanged", sa.Integer(), server_default="0", nullable=False),
        sa.Column("failures", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["connector_id"], ["connectors.id"], name=op.f("fk_crawl_state_connector_id_connectors")
        ),
        sa.PrimaryKeyConstraint("connector_id", "url", name=op.f("pk_crawl_state")),
    )
    with op.batch_alter_table("crawl_state", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_crawl_state_connector_id_next_fetch_at"),
            ["connector_id", "next_fetch_at"],
            unique=False,
        )

    op.create_table(
        "raw_records",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("fetched_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "snapshot_ref",
            sa.Text(),
            nullable=True,
            comment="sha256 of the snapshot in the blob store",
        ),
        sa.Column("snapshot_size", sa.Integer(), nullable=True),
        sa.Column("engine", sa.Text(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("content_hash", sa.Text(), nullable=False),
        sa.Column("connector_version", sa.Text(), nullable=False),
        sa.Column("parser_version", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["connector_id"], ["connectors.id"], name=op.f("fk_raw_records_connector_id_connectors")
        ),
        sa.PrimaryKeyConstraint("id", "fetched_at", name=op.f("pk_raw_records")),
        postgresql_partition_by="RANGE (fetched_at)",
    )
    with op.batch_alter_table("raw_records", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_raw_records_connector_id_external_id"),
            ["connector_id", "external_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_raw_records_connector_id_fetched_at"),
            ["connector_id", "fetched_at"],
            unique=False,
        )

    op.create_table(
        "asset_variants",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("asset_id", sa.Text(), nullable=False),
        sa.Column("variant_key", sa.Text(), nullable=False),
        sa.Column("grader", sa.Text(), nullable=True),
        sa.Column("grade", sa.Text(), nullable=True),
        sa.Column("qualifier", sa.Text(), nullable=True),
        sa.Column("label_type", sa.Text(), nullable=True),
        sa.Column("autograph_grade", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["asset_id"], ["assets.id"], name=op.f("fk_asset_variants_asset_id_assets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_asset_variants")),
        sa.UniqueConstraint("variant_key", name=op.f("uq_asset_variants_variant_key")),
    )
    with op.batch_alter_table("asset_variants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_asset_variants_asset_id"), ["asset_id"], unique=False)

    op.create_table(
        "connector_runs",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("mode", sa.Text(), nullable=False),
        sa.Column("backfill_id", sa.Text(), nullable=True),
        sa.Column("status", sa.Text(), server_default="queued", nullable=False),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("lease_token", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column(
            "lease_expires_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column("queued_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("started_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("finished_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("pages", sa.Integer(), server_default="0", nullable=False),
        sa.Column("records", sa.Integer(), server_default="0", nullable=False),
        sa.Column("dupes", sa.Integer(), server_default="0", nullable=False),
        sa.Column("anomalies", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "cost_credits",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            server_default="0",
            nullable=False,
        ),
        sa.Column(
            "engine_stats",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "cursor_start",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "cursor_end",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "mode IN ('incremental', 'backfill')", name=op.f("ck_connector_runs_mode")
        ),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')",
            name=op.f("ck_connector_runs_status"),
        ),
        sa.ForeignKeyConstraint(
            ["backfill_id"],
            ["connector_backfills.id"],
            name=op.f("fk_connector_runs_backfill_id_connector_backfills"),
        ),
        sa.ForeignKeyConstraint(
            ["connector_id"],
            ["connectors.id"],
            name=op.f("fk_connector_runs_connector_id_connectors"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_connector_runs")),
    )
    with op.batch_alter_table("connector_runs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_connector_runs_connector_id_created_at"),
            ["connector_id", "created_at"],
            unique=False,
        )
        batch_op.create_index(batch_op.f("ix_connector_runs_status"), ["status"], unique=False)

    op.create_table(
        "population_reports",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("grader", sa.Text(), nullable=False),
        sa.Column("spec_id", sa.Text(), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("asset_id", sa.Text(), nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column(
            "counts",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("as_of", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["asset_id"], ["assets.id"], name=op.f("fk_population_reports_asset_id_assets")
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_population_reports_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_population_reports")),
        sa.UniqueConstraint(
            "grader", "spec_id", "as_of", name=op.f("uq_population_reports_grader_spec_id_as_of")
        ),
    )
    op.create_table(
        "auction_lots",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("auction_id", sa.Text(), nullable=False),
        sa.Column("lot_number", sa.Text(), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("normalized_id", sa.Text(), nullable=True),
        sa.Column("asset_id", sa.Text(), nullable=True),
        sa.Column("variant_id", sa.Text(), nullable=True),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("currency", sa.Text(), nullable=True),
        sa.Column(
            "hammer_price",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=True,
        ),
        sa.Column(
            "buyer_premium_rate",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=True,
        ),
        sa.Column(
            "buyer_premium",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=True,
        ),
        sa.Column(
            "price_realised",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=True,
        ),
        sa.Column(
            "estimate_low",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=True,
        ),
        sa.Column(
            "estimate_high",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=True,
        ),
        sa.Column("closes_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["asset_id"], ["assets.id"], name=op.f("fk_auction_lots_asset_id_assets")
        ),
        sa.ForeignKeyConstraint(
            ["auction_id"], ["auctions.id"], name=op.f("fk_auction_lots_auction_id_auctions")
        ),
        sa.ForeignKeyConstraint(
            ["connector_id"],
            ["connectors.id"],
            name=op.f("fk_auction_lots_connector_id_connectors"),
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_auction_lots_source_id_sources")
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["asset_variants.id"],
            name=op.f("fk_auction_lots_variant_id_asset_variants"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auction_lots")),
        sa.UniqueConstraint(
            "auction_id", "lot_number", name=op.f("uq_auction_lots_auction_id_lot_number")
        ),
    )
    op.create_table(
        "certificates",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("grader", sa.Text(), nullable=False),
        sa.Column("cert_number", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column("grade", sa.Text(), nullable=True),
        sa.Column("qualifier", sa.Text(), nullable=True),
        sa.Column("label_type", sa.Text(), nullable=True),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("year", sa.Integer(), nullable=True),
        sa.Column("set_name", sa.Text(), nullable=True),
        sa.Column("asset_id", sa.Text(), nullable=True),
        sa.Column("variant_id", sa.Text(), nullable=True),
        sa.Column(
            "details",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("verified_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["asset_id"], ["assets.id"], name=op.f("fk_certificates_asset_id_assets")
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["asset_variants.id"],
            name=op.f("fk_certificates_variant_id_asset_variants"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_certificates")),
        sa.UniqueConstraint(
            "grader", "cert_number", name=op.f("uq_certificates_grader_cert_number")
        ),
    )
    op.create_table(
        "listings",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("normalized_id", sa.Text(), nullable=True),
        sa.Column("asset_id", sa.Text(), nullable=True),
        sa.Column("variant_id", sa.Text(), nullable=True),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column(
            "price", rareindex.storage.types.ExactDecimal(precision=20, scale=6), nullable=False
        ),
        sa.Column("currency", sa.Text(), nullable=False),
        sa.Column("available", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("quantity", sa.Integer(), nullable=True),
        sa.Column("status", sa.Text(), server_default="active", nullable=False),
        sa.Column(
            "first_seen_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column(
            "last_seen_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("ended_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["asset_id"], ["assets.id"], name=op.f("fk_listings_asset_id_assets")
        ),
        sa.ForeignKeyConstraint(
            ["connector_id"], ["connectors.id"], name=op.f("fk_listings_connector_id_connectors")
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_listings_source_id_sources")
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["asset_variants.id"],
            name=op.f("fk_listings_variant_id_asset_variants"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_listings")),
        sa.UniqueConstraint(
            "source_id", "external_id", name=op.f("uq_listings_source_id_external_id")
        ),
    )
    with op.batch_alter_table("listings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_listings_variant_id"), ["variant_id"], unique=False)

    op.create_table(
        "normalized_records",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("raw_id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("parser_version", sa.Text(), nullable=False),
        sa.Column(
            "ordinal", sa.Integer(), nullable=False, comment="position in normalize() output"
        ),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column(
            "record",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column("match_method", sa.Text(), nullable=True),
        sa.Column("match_confidence", sa.Float(), nullable=True),
        sa.Column("reject_reason", sa.Text(), nullable=True),
        sa.Column(
            "anomaly_flags",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("asset_id", sa.Text(), nullable=True),
        sa.Column("variant_id", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.Column("resolved_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'matched', 'unmatched', 'rejected', 'failed')",
            name=op.f("ck_normalized_records_status"),
        ),
        sa.ForeignKeyConstraint(
            ["asset_id"], ["assets.id"], name=op.f("fk_normalized_records_asset_id_assets")
        ),
        sa.ForeignKeyConstraint(
            ["connector_id"],
            ["connectors.id"],
            name=op.f("fk_normalized_records_connector_id_connectors"),
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["asset_variants.id"],
            name=op.f("fk_normalized_records_variant_id_asset_variants"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_normalized_records")),
        sa.UniqueConstraint(
            "raw_id",
            "parser_version",
            "ordinal",
            name=op.f("uq_normalized_records_raw_id_parser_version_ordinal"),
        ),
    )
    with op.batch_alter_table("normalized_records", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_normalized_records_asset_id"), ["asset_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_normalized_records_status_kind"), ["status", "kind"], unique=False
        )

    op.create_table(
        "price_observations",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column(
            "observation_date", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("normalized_id", sa.Text(), nullable=True),
        sa.Column("asset_id", sa.Text(), nullable=True),
        sa.Column("variant_id", sa.Text(), nullable=True),
        sa.Column("source_item_id", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False, comment="sale, ask, guide, realised"),
        sa.Column(
            "price", rareindex.storage.types.ExactDecimal(precision=20, scale=6), nullable=False
        ),
        sa.Column("currency", sa.Text(), nullable=False),
        sa.Column("sale_id", sa.Text(), nullable=True),
        sa.Column(
            "flags",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("anomaly_reason", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["asset_id"], ["assets.id"], name=op.f("fk_price_observations_asset_id_assets")
        ),
        sa.ForeignKeyConstraint(
            ["connector_id"],
            ["connectors.id"],
            name=op.f("fk_price_observations_connector_id_connectors"),
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_price_observations_source_id_sources")
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["asset_variants.id"],
            name=op.f("fk_price_observations_variant_id_asset_variants"),
        ),
        sa.PrimaryKeyConstraint("id", "observation_date", name=op.f("pk_price_observations")),
        sa.UniqueConstraint(
            "source_id",
            "source_item_id",
            "kind",
            "observation_date",
            name=op.f("uq_price_observations_source_id_source_item_id_kind_observation_date"),
        ),
        postgresql_partition_by="RANGE (observation_date)",
    )
    with op.batch_alter_table("price_observations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_price_observations_variant_id_observation_date"),
            ["variant_id", "observation_date"],
            unique=False,
        )

    op.create_table(
        "sales",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("sale_date", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("connector_id", sa.Text(), nullable=False),
        sa.Column("normalized_id", sa.Text(), nullable=True),
        sa.Column("asset_id", sa.Text(), nullable=True),
        sa.Column("variant_id", sa.Text(), nullable=True),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("sale_type", sa.Text(), nullable=False),
        sa.Column("price_basis", sa.Text(), nullable=False),
        sa.Column("price_visibility", sa.Text(), server_default="exact", nullable=False),
        sa.Column(
            "price", rareindex.storage.types.ExactDecimal(precision=20, scale=6), nullable=False
        ),
        sa.Column("currency", sa.Text(), nullable=False),
        sa.Column(
            "shipping", rareindex.storage.types.ExactDecimal(precision=20, scale=6), nullable=True
        ),
        sa.Column(
            "buyer_premium",
            rareindex.storage.types.ExactDecimal(precision=20, scale=6),
            nullable=True,
        ),
        sa.Column("is_lot", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column(
            "flags",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["asset_id"], ["assets.id"], name=op.f("fk_sales_asset_id_assets")),
        sa.ForeignKeyConstraint(
            ["connector_id"], ["connectors.id"], name=op.f("fk_sales_connector_id_connectors")
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_sales_source_id_sources")
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"], ["asset_variants.id"], name=op.f("fk_sales_variant_id_asset_variants")
        ),
        sa.PrimaryKeyConstraint("id", "sale_date", name=op.f("pk_sales")),
        sa.UniqueConstraint(
            "source_id",
            "external_id",
            "sale_date",
            name=op.f("uq_sales_source_id_external_id_sale_date"),
        ),
        postgresql_partition_by="RANGE (sale_date)",
    )
    with op.batch_alter_table("sales", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sales_asset_id_sale_date"), ["asset_id", "sale_date"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_sales_variant_id_sale_date"), ["variant_id", "sale_date"], unique=False
        )

    op.create_table(
        "certificate_sightings",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("certificate_id", sa.Text(), nullable=True),
        sa.Column("cert_number", sa.Text(), nullable=False),
        sa.Column("grader", sa.Text(), nullable=True),
        sa.Column(
            "attribution", sa.Text(), nullable=False, comment="attributed, ambiguous, negated"
        ),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("listing_external_id", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("seen_at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("title_hash", sa.Text(), nullable=False),
        sa.Column("image_hash", sa.Text(), nullable=True),
        sa.Column(
            "price", rareindex.storage.types.ExactDecimal(precision=20, scale=6), nullable=True
        ),
        sa.Column("currency", sa.Text(), nullable=True),
        sa.Column(
            "mismatch",
            sa.Text(),
            nullable=True,
            comment="subject or year disagreeing with the verified certificate",
        ),
        sa.Column(
            "created_at",
            rareindex.storage.types.UTCDateTime(timezone=True),
            server_default=sa.text("(CURRENT_TIMESTAMP)"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["certificate_id"],
            ["certificates.id"],
            name=op.f("fk_certificate_sightings_certificate_id_certificates"),
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_certificate_sightings_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_certificate_sightings")),
        sa.UniqueConstraint(
            "source_id",
            "listing_external_id",
            "cert_number",
            "title_hash",
            name=op.f(
                "uq_certificate_sightings_source_id_listing_external_id_cert_number_title_hash"
            ),
        ),
    )
    with op.batch_alter_table("certificate_sightings", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_certificate_sightings_cert_number"), ["cert_number"], unique=False
        )

    op.create_table(
        "listing_events",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("listing_id", sa.Text(), nullable=False),
        sa.Column(
            "event",
            sa.Text(),
            nullable=False,
            comment="listed, price_changed, ended, relisted, sold",
        ),
        sa.Column(
            "price", rareindex.storage.types.ExactDecimal(precision=20, scale=6), nullable=True
        ),
        sa.Column("currency", sa.Text(), nullable=True),
        sa.Column("at", rareindex.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["listing_id"], ["listings.id"], name=op.f("fk_listing_events_listing_id_listings")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_listing_events")),
    )
    with op.batch_alter_table("listing_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_listing_events_listing_id_at"), ["listing_id", "at"], unique=False
        )

    _create_extras()


def downgrade() -> None:
    _drop_extras()
    with op.batch_alter_table("listing_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_listing_events_listing_id_at"))

    op.drop_table("listing_events")
    with op.batch_alter_table("certificate_sightings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_certificate_sightings_cert_number"))

    op.drop_table("certificate_sightings")
    with op.batch_alter_table("sales", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sales_variant_id_sale_date"))
        batch_op.drop_index(batch_op.f("ix_sales_asset_id_sale_date"))

    op.drop_table("sales")
    with op.batch_alter_table("price_observations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_price_observations_variant_id_observation_date"))

    op.drop_table("price_observations")
    with op.batch_alter_table("normalized_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_normalized_records_status_kind"))
        batch_op.drop_index(batch_op.f("ix_normalized_records_asset_id"))

    op.drop_table("normalized_records")
    with op.batch_alter_table("listings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_listings_variant_id"))

    op.drop_table("listings")
    op.drop_table("certificates")
    op.drop_table("auction_lots")
    op.drop_table("population_reports")
    with op.batch_alter_table("connector_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_connector_runs_status"))
        batch_op.drop_index(batch_op.f("ix_connector_runs_connector_id_created_at"))

    op.drop_table("connector_runs")
    with op.batch_alter_table("asset_variants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_asset_variants_asset_id"))

    op.drop_table("asset_variants")
    with op.batch_alter_table("raw_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_raw_records_connector_id_fetched_at"))
        batch_op.drop_index(batch_op.f("ix_raw_records_connector_id_external_id"))

    op.drop_table("raw_records")
    with op.batch_alter_table("crawl_state", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_crawl_state_connector_id_next_fetch_at"))

    op.drop_table("crawl_state")
    op.drop_table("costs")
    op.drop_table("connector_health")
    op.drop_table("connector_field_stats")
    with op.batch_alter_table("connector_backfills", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_connector_backfills_connector_id_status"))

    op.drop_table("connector_backfills")
    with op.batch_alter_table("assets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_assets_category_year_set_id"))

    op.drop_table("assets")
    op.drop_table("sets")
    with op.batch_alter_table("news", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_news_published_at"))

    op.drop_table("news")
    op.drop_table("connectors")
    op.drop_table("auctions")
    op.drop_table("sources")
    op.drop_table("raw_record_keys")
    op.drop_table("images")
    op.drop_table("fx_rates")
    op.drop_table("brands")


PARTITIONED = {
    "raw_records": "fetched_at",
    "sales": "sale_date",
    "price_observations": "observation_date",
}
IMMUTABLE = ("raw_records", "raw_record_keys")

PG_FUNCTIONS = r"""
CREATE OR REPLACE FUNCTION ri_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Partition maintenance moves rows out of a DEFAULT partition; nothing else may change them.
  IF TG_OP = 'DELETE' AND current_setting('rareindex.partition_maintenance', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'rareindex: % is insert-only (% refused)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END $$;

CREATE OR REPLACE FUNCTION ri_ensure_partitions(
  parent regclass, months_back integer DEFAULT 1, months_ahead integer DEFAULT 3
) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  first_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC')
                           - make_interval(months => months_back);
  month_start timestamptz;
  month_end timestamptz;
  part_name text;
  part_column text;
  created integer := 0;
BEGIN
  SELECT a.attname INTO part_column
    FROM pg_partitioned_table p
    JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
   WHERE p.partrelid = parent;
  IF part_column IS NULL THEN
    RAISE EXCEPTION 'rareindex: % is not a partitioned table', parent;
  END IF;
  FOR i IN 0..(months_back + months_ahead) LOOP
    month_start := (first_month + make_interval(months => i)) AT TIME ZONE 'UTC';
    month_end := (first_month + make_interval(months => i + 1)) AT TIME ZONE 'UTC';
    part_name := format('%s_y%s', parent::text, to_char(month_start AT TIME ZONE 'UTC', 'YYYY"m"MM'));
    CONTINUE WHEN to_regclass(part_name) IS NOT NULL;
    EXECUTE format('CREATE TABLE %I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part_name, parent);
    PERFORM set_config('rareindex.partition_maintenance', 'on', true);
    EXECUTE format(
      'WITH moved AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
      parent::text || '_default', part_column, month_start, part_column, month_end, part_name);
    PERFORM set_config('rareindex.partition_maintenance', 'off', true);
    EXECUTE format('ALTER TABLE %s ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   parent, part_name, month_start, month_end);
    created := created + 1;
  END LOOP;
  RETURN created;
END $$;
"""


def _create_extras() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(PG_FUNCTIONS)
        for table in IMMUTABLE:
            op.execute(
                f"CREATE TRIGGER {table}_immutable BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION ri_refuse_change()"
            )
        for table in PARTITIONED:
            op.execute(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT")
            op.execute(f"SELECT ri_ensure_partitions('{table}'::regclass, 1, 3)")
    else:
        for table in IMMUTABLE:
            for action in ("UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, 'rareindex: {table} is insert-only ({action} refused)'); END"
                )
    for statement in multi_currency_view_sql_0001(dialect).values():
        op.execute(statement)


def _drop_extras() -> None:
    dialect = op.get_bind().dialect.name
    for view in multi_currency_view_sql_0001(dialect):
        op.execute(f"DROP VIEW IF EXISTS {view}")
    if dialect == "postgresql":
        for table in IMMUTABLE:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_immutable ON {table}")
        op.execute("DROP FUNCTION IF EXISTS ri_ensure_partitions(regclass, integer, integer)")
        op.execute("DROP FUNCTION IF EXISTS ri_refuse_change()")
    else:
        for table in IMMUTABLE:
            for action in ("update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{action}")

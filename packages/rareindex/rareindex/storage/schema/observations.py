"""Observations: sales, listings and their events, auctions and lots, price observations,
population reports, images and news.

``sales`` (by ``sale_date``) and ``price_observations`` (by ``observation_date``) are
range-partitioned on PostgreSQL; their natural-key unique constraints include the partition column,
which is part of the natural key anyway (a sale happens once, on its date). Money is an exact
decimal plus its ISO-4217 code; auction hammer, premium and price realised are kept apart.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    false,
    true,
)

from ..types import ExactDecimal, JSONDoc, UTCDateTime
from ._base import created_at, id_column, metadata, updated_at

__all__ = [
    "auction_lots",
    "auctions",
    "images",
    "listing_events",
    "listings",
    "news",
    "population_reports",
    "price_observations",
    "sales",
]


def _subject() -> list[Column]:  # type: ignore[type-arg]
    """Where an observation points in the canonical graph, and where it came from."""
    return [
        Column("source_id", Text, ForeignKey("sources.id"), nullable=False),
        Column("connector_id", Text, ForeignKey("connectors.id"), nullable=False),
        Column("normalized_id", Text),
        Column("asset_id", Text, ForeignKey("assets.id")),
        Column("variant_id", Text, ForeignKey("asset_variants.id")),
    ]


sales = Table(
    "sales",
    metadata,
    Column("id", Text, nullable=False),
    Column("sale_date", UTCDateTime(), nullable=False),
    *_subject(),
    Column("external_id", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("url", Text),
    Column("sale_type", Text, nullable=False),
    Column("price_basis", Text, nullable=False),
    Column("price_visibility", Text, nullable=False, server_default="exact"),
    Column("price", ExactDecimal(), nullable=False),
    Column("currency", Text, nullable=False),
    Column("shipping", ExactDecimal()),
    Column("buyer_premium", ExactDecimal()),
    Column("is_lot", Boolean, nullable=False, server_default=false()),
    Column("flags", JSONDoc),
    created_at(),
    PrimaryKeyConstraint("id", "sale_date"),
    UniqueConstraint("source_id", "external_id", "sale_date"),
    Index(None, "variant_id", "sale_date"),
    Index(None, "asset_id", "sale_date"),
    postgresql_partition_by="RANGE (sale_date)",
)

listings = Table(
    "listings",
    metadata,
    id_column(),
    *_subject(),
    Column("external_id", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("url", Text),
    Column("price", ExactDecimal(), nullable=False),
    Column("currency", Text, nullable=False),
    Column("available", Boolean, nullable=False, server_default=true()),
    Column("quantity", Integer),
    Column("status", Text, nullable=False, server_default="active"),
    Column("first_seen_at", UTCDateTime(), nullable=False),
    Column("last_seen_at", UTCDateTime(), nullable=False),
    Column("ended_at", UTCDateTime()),
    created_at(),
    updated_at(),
    UniqueConstraint("source_id", "external_id"),
    Index(None, "variant_id"),
)

listing_events = Table(
    "listing_events",
    metadata,
    id_column(),
    Column("listing_id", Text, ForeignKey("listings.id"), nullable=False),
    Column("event", Text, nullable=False, comment="listed, price_changed, ended, relisted, sold"),
    Column("price", ExactDecimal()),
    Column("currency", Text),
    Column("at", UTCDateTime(), nullable=False),
    Index(None, "listing_id", "at"),
)

auctions = Table(
    "auctions",
    metadata,
    id_column(),
    Column("source_id", Text, ForeignKey("sources.id"), nullable=False),
    Column("external_id", Text, nullable=False),
    Column("title", Text),
    Column("starts_at", UTCDateTime()),
    Column("ends_at", UTCDateTime()),
    Column("currency", Text),
    created_at(),
    UniqueConstraint("source_id", "external_id"),
)

auction_lots = Table(
    "auction_lots",
    metadata,
    id_column(),
    Column("auction_id", Text, ForeignKey("auctions.id"), nullable=False),
    Column("lot_number", Text, nullable=False),
    *_subject(),
    Column("external_id", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("currency", Text),
    Column("hammer_price", ExactDecimal()),
    Column("buyer_premium_rate", ExactDecimal()),
    Column("buyer_premium", ExactDecimal()),
    Column("price_realised", ExactDecimal()),
    Column("estimate_low", ExactDecimal()),
    Column("estimate_high", ExactDecimal()),
    Column("closes_at", UTCDateTime()),
    created_at(),
    UniqueConstraint("auction_id", "lot_number"),
)

price_observations = Table(
    "price_observations",
    metadata,
    Column("id", Text, nullable=False),
    Column("observation_date", UTCDateTime(), nullable=False),
    *_subject(),
    Column("source_item_id", Text, nullable=False),
    Column("kind", Text, nullable=False, comment="sale, ask, guide, realised"),
    Column("price", ExactDecimal(), nullable=False),
    Column("currency", Text, nullable=False),
    Column("sale_id", Text),
    Column("flags", JSONDoc),
    Column("anomaly_reason", Text),
    created_at(),
    PrimaryKeyConstraint("id", "observation_date"),
    UniqueConstraint("source_id", "source_item_id", "kind", "observation_date"),
    Index(None, "variant_id", "observation_date"),
    postgresql_partition_by="RANGE (observation_date)",
)

population_reports = Table(
    "population_reports",
    metadata,
    id_column(),
    Column("grader", Text, nullable=False),
    Column("spec_id", Text, nullable=False),
    Column("source_id", Text, ForeignKey("sources.id"), nullable=False),
    Column("asset_id", Text, ForeignKey("assets.id")),
    Column("title", Text, nullable=False),
    Column("counts", JSONDoc, nullable=False),
    Column("total", Integer, nullable=False),
    Column("as_of", UTCDateTime(), nullable=False),
    created_at(),
    UniqueConstraint("grader", "spec_id", "as_of"),
)

images = Table(
    "images",
    metadata,
    id_column(),
    Column("owner_type", Text, nullable=False, comment="asset, listing, sale, auction_lot"),
    Column("owner_id", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("content_hash", Text),
    Column("width", Integer),
    Column("height", Integer),
    created_at(),
    UniqueConstraint("owner_type", "owner_id", "url"),
)

news = Table(
    "news",
    metadata,
    id_column(),
    Column("source_id", Text, ForeignKey("sources.id"), nullable=False),
    Column("external_id", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("published_at", UTCDateTime(), nullable=False),
    Column("summary", Text),
    Column("author", Text),
    created_at(),
    UniqueConstraint("source_id", "external_id"),
    Index(None, "published_at"),
)

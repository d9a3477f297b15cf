"""Every table of RareIndex, on one ``MetaData``. Migrations in ``migrations/`` create them.

Grouped by concept: :mod:`.registry` (connectors and their runtime state), :mod:`.raw` (immutable
captures), :mod:`.canonical` (the asset graph), :mod:`.observations` (sales, listings, lots…),
:mod:`.provenance` (certificates), :mod:`.fx` (rates and the multi-currency views),
:mod:`.coordination` (leases and the run-queue indexes), :mod:`.access` (admin API tokens),
:mod:`.watchlists` and :mod:`.review` (the review queue).
"""

from ._base import metadata
from .access import api_tokens
from .canonical import asset_variants, assets, brands, sets
from .coordination import ACTIVE_RUN_STATUSES, leases
from .dead_letters import dead_letters
from .events import EVENT_TYPES, event_cursor, events
from .fx import VIEW_CURRENCIES, fx_rates, fx_settings, multi_currency_view_sql
from .observations import (
    auction_lots,
    auctions,
    images,
    listing_events,
    listings,
    news,
    population_reports,
    price_observations,
    sales,
)
from .pricing import grade_curves, index_values, price_estimates, priced_sales
from .provenance import certificate_sightings, certificates
from .raw import CHECKED_BY_TRIGGERS, normalized_records, raw_record_keys, raw_records
from .registry import (
    connector_backfills,
    connector_field_stats,
    connector_health,
    connector_runs,
    connectors,
    costs,
    crawl_state,
    sources,
)
from .review import review_items, review_limits
from .watchlists import watchlists

PARTITIONED_TABLES: dict[str, str] = {
    "raw_records": "fetched_at",
    "sales": "sale_date",
    "price_observations": "observation_date",
}
"""Range-partitioned on PostgreSQL: table -> partition column."""

IMMUTABLE_TABLES = ("raw_records", "raw_record_keys")
"""Insert-only: triggers refuse UPDATE and DELETE."""

VIEWS = ("sales_multi_currency", "listings_multi_currency")

__all__ = [
    "ACTIVE_RUN_STATUSES",
    "CHECKED_BY_TRIGGERS",
    "EVENT_TYPES",
    "IMMUTABLE_TABLES",
    "PARTITIONED_TABLES",
    "VIEWS",
    "VIEW_CURRENCIES",
    "api_tokens",
    "asset_variants",
    "assets",
    "auction_lots",
    "auctions",
    "brands",
    "certificate_sightings",
    "certificates",
    "connector_backfills",
    "connector_field_stats",
    "connector_health",
    "connector_runs",
    "connectors",
    "costs",
    "crawl_state",
    "dead_letters",
    "event_cursor",
    "events",
    "fx_rates",
    "fx_settings",
    "grade_curves",
    "images",
    "index_values",
    "leases",
    "listing_events",
    "listings",
    "metadata",
    "multi_currency_view_sql",
    "news",
    "normalized_records",
    "population_reports",
    "price_estimates",
    "price_observations",
    "priced_sales",
    "raw_record_keys",
    "raw_records",
    "review_items",
    "review_limits",
    "sales",
    "sets",
    "sources",
    "watchlists",
]

"""What a resolved record writes: the rows of each table, planned a batch at a time.

:func:`plan_rows` turns one resolved record into rows of a :class:`RowPlan` (sales, listings,
images, price observations, population reports, news), in record order; :meth:`RowPlan.flush`
sends each table's rows as a few multi-row statements. Auction lots are written first
(:func:`lot_rows`, then :func:`~.storage.observation_store.write_auction_lots`), because a
sold lot's sale is built from the lot as merged in the database.

Example:
    >>> plan = RowPlan()                                            # doctest: +SKIP
    >>> context = RecordContext(row, "house", asset_id, variant_id, ())  # doctest: +SKIP
    >>> plan_rows(plan, record, context, None)                      # doctest: +SKIP
    >>> plan.flush(conn)                                            # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from rareindex_connectors.records import (
    AuctionLot,
    Listing,
    NewsItem,
    PopulationReport,
    PriceObservation,
    Sale,
)

from .quality import excluded_from_index
from .storage.normalized_store import PendingRow
from .storage.observation_store import (
    AuctionRow,
    ListingRow,
    LotRow,
    NewsRow,
    ObservationRow,
    PopulationRow,
    SaleRow,
    Subject,
    listing_id,
    observation_row,
    sale_row,
    write_images,
    write_listings,
    write_news,
    write_population,
    write_price_observations,
    write_sales,
)

__all__ = ["RecordContext", "RowPlan", "lot_rows", "plan_rows"]


@dataclass(slots=True)
class RowPlan:
    """The rows of one batch, per table, in record order; :meth:`flush` sends them."""

    sales: list[tuple[SaleRow, bool]] = field(default_factory=list)
    listings: list[tuple[ListingRow, datetime]] = field(default_factory=list)
    images: list[tuple[str, str, Sequence[str]]] = field(default_factory=list)
    observations: list[ObservationRow] = field(default_factory=list)
    population: list[PopulationRow] = field(default_factory=list)
    news: list[NewsRow] = field(default_factory=list)

    def flush(self, conn: Any) -> None:
        write_listings(conn, self.listings)
        write_sales(conn, self.sales)
        write_images(conn, self.images)
        write_price_observations(conn, self.observations)
        write_population(conn, self.population)
        write_news(conn, self.news)


@dataclass(frozen=True, slots=True)
class RecordContext:
    """A resolved record's normalized row and where it points (source, asset, variant)."""

    row: PendingRow
    source_id: str
    asset_id: str | None
    variant_id: str | None
    flags: tuple[str, ...]

    @property
    def subject(self) -> Subject:
        return {
            "source_id": self.source_id,
            "connector_id": self.row["connector_id"],
            "normalized_id": self.row["id"],
            "asset_id": self.asset_id,
            "variant_id": self.variant_id,
        }

    @property
    def indexable(self) -> bool:
        return self.variant_id is not None and not excluded_from_index(self.flags)

    @property
    def fetched_at(self) -> datetime:
        return self.row["fetched_at"]


def plan_rows(
    writes: RowPlan, record: Any, ctx: RecordContext, stored_lot: dict[str, Any] | None
) -> bool:
    """Plan the observation rows of one record; True when a price observation is written."""
    if isinstance(record, Sale):
        flags = sorted({*record.flags, *ctx.flags})
        sale = sale_row(
            {
                **ctx.subject,
                "sale_date": record.sold_at,
                "external_id": record.external_id,
                "title": record.title,
                "url": record.url,
                "sale_type": record.sale_type,
                "price_basis": record.price_basis,
                "price_visibility": record.price_visibility,
                "price": record.price.amount,
                "currency": record.price.currency,
                "shipping": record.shipping.amount if record.shipping else None,
                "buyer_premium": record.buyer_premium.amount if record.buyer_premium else None,
                "is_lot": record.is_lot or "lot" in flags,
                "flags": flags or None,
            }
        )
        writes.sales.append((sale, False))
        writes.images.append(("sale", sale["id"], record.image_urls))
        return _observe(
            writes,
            ctx,
            record.external_id,
            "sale",
            record.sold_at,
            record.price.amount,
            record.price.currency,
            sale["id"],
        )
    if isinstance(record, Listing):
        row: ListingRow = {
            **ctx.subject,
            "external_id": record.external_id,
            "title": record.title,
            "url": record.url,
            "price": record.price.amount,
            "currency": record.price.currency,
            "available": record.available,
            "quantity": record.quantity,
        }
        writes.listings.append((row, ctx.fetched_at))
        writes.images.append(
            ("listing", listing_id(ctx.source_id, record.external_id), record.image_urls)
        )
        if not record.available:
            return False
        return _observe(
            writes,
            ctx,
            record.external_id,
            "ask",
            ctx.fetched_at,
            record.price.amount,
            record.price.currency,
        )
    if isinstance(record, AuctionLot):
        assert stored_lot is not None  # written (and read back) before the other rows
        return _plan_lot(writes, record, ctx, stored_lot)
    if isinstance(record, PriceObservation):
        return _observe(
            writes,
            ctx,
            record.external_id,
            "guide",
            record.observed_at,
            record.price.amount,
            record.price.currency,
        )
    if isinstance(record, PopulationReport):
        writes.population.append(
            {
                "grader": record.grader,
                "spec_id": record.external_id,
                "source_id": ctx.source_id,
                "asset_id": ctx.asset_id,
                "title": record.title,
                "counts": record.counts,
                "total": record.total,
                "as_of": record.as_of,
            }
        )
        return False
    if isinstance(record, NewsItem):
        writes.news.append(
            {
                "source_id": ctx.source_id,
                "external_id": record.external_id,
                "title": record.title,
                "url": record.url,
                "published_at": record.published_at,
                "summary": record.summary,
                "author": record.author,
            }
        )
    return False


def lot_rows(record: AuctionLot, ctx: RecordContext) -> tuple[AuctionRow, LotRow]:
    """The ``auctions`` and ``auction_lots`` rows of a lot record."""
    currency = next(
        (
            m.currency
            for m in (record.price_realised, record.hammer_price, record.estimate_low)
            if m
        ),
        None,
    )
    hammer = record.hammer_price.amount if record.hammer_price else None
    realised = record.price_realised.amount if record.price_realised else None
    auction: AuctionRow = {
        "source_id": ctx.source_id,
        "external_id": record.auction_id,
        "title": record.auction_title,
        "ends_at": record.closes_at,
        "currency": currency,
    }
    lot: LotRow = {
        **ctx.subject,
        "lot_number": record.lot_number,
        "external_id": record.external_id,
        "title": record.title,
        "status": record.status,
        "currency": currency,
        "hammer_price": hammer,
        "buyer_premium_rate": record.buyer_premium_rate,
        "buyer_premium": None,  # realised - hammer, derived once the lot is merged (storage)
        "price_realised": realised,
        "estimate_low": record.estimate_low.amount if record.estimate_low else None,
        "estimate_high": record.estimate_high.amount if record.estimate_high else None,
        "closes_at": record.closes_at,
    }
    return auction, lot


def _plan_lot(
    writes: RowPlan, record: AuctionLot, ctx: RecordContext, stored: dict[str, Any]
) -> bool:
    writes.images.append(("auction_lot", stored["id"], record.image_urls))
    realised, hammer, currency = (
        stored["price_realised"],
        stored["hammer_price"],
        stored["currency"],
    )
    premium = stored["buyer_premium"]
    price = realised if realised is not None else hammer
    if record.status != "sold" or price is None or currency is None or not stored["closes_at"]:
        # A lot seen only in a list without its date (a "prices realised" PDF line) waits for
        # its page: a sale is dated by the auction, never by when we happened to fetch it.
        return False
    sold_at = stored["closes_at"]
    merged = RecordContext(
        ctx.row,
        ctx.source_id,
        stored["asset_id"],  # the lot's page and its PDF line agree on one asset: the merged one
        stored["variant_id"],
        ctx.flags,
    )
    sale = sale_row(
        {
            **merged.subject,
            "sale_date": sold_at,
            "external_id": record.external_id,
            "title": stored["title"],
            "url": record.url,
            "sale_type": "auction_house",
            "price_basis": "realized_incl_bp" if realised is not None else "hammer",
            "price_visibility": "exact",
            "price": price,
            "currency": currency,
            "shipping": None,
            "buyer_premium": premium,
            "is_lot": "lot" in ctx.flags,
            "flags": sorted(ctx.flags) or None,
        }
    )
    writes.sales.append((sale, True))
    return _observe(
        writes, merged, record.external_id, "realised", sold_at, price, currency, sale["id"]
    )


def _observe(
    writes: RowPlan,
    ctx: RecordContext,
    item_id: str,
    kind: str,
    when: datetime,
    price: Decimal,
    currency: str,
    sale_id: str | None = None,
) -> bool:
    if not ctx.indexable:
        return False
    writes.observations.append(
        observation_row(
            {
                **ctx.subject,
                "observation_date": when,
                "source_item_id": item_id,
                "kind": kind,
                "price": price,
                "currency": currency,
                "sale_id": sale_id,
                "flags": sorted(ctx.flags) or None,
            }
        )
    )
    return True

"""The entity-resolution stage: pending normalized records -> assets, variants and observations.

Per batch (one transaction): ``catalog_item`` records first become assets; then every other
pending record is resolved by :class:`~rareindex.resolution.Resolver` (identifiers, canonical key,
fuzzy inside blocks) and written out — set-based: the rows of the whole batch are collected in
record order and each table gets a fixed handful of multi-row upserts, which leave it as writing
the records one by one would:

=====================  ======================================================================
``sale``               ``sales`` + a ``sale`` price observation
``listing``            ``listings`` (+ ``listing_events`` on change) + an ``ask`` observation
``auction_lot``        ``auctions`` + ``auction_lots``; a sold lot also a ``sales`` row
                       (``auction_house``; hammer, premium, realised apart) + ``realised``
``price_observation``  a ``guide`` price observation
``population_report``  ``population_reports`` (asset when the title resolves)
``news_item``          ``news``
=====================  ======================================================================

Observations are written whether or not they matched (``asset_id`` NULL when unmatched: visible,
not forced); only matched records whose rule flags allow it (no lot, reprint, custom, hidden
best-offer price…) enter the price-observation series. Each decision is stored on the
normalized row: status, method, confidence, reject reason, asset and variant. Finally the
price-distribution anomalies of every touched variant are recomputed and flagged with a reason.

Example:
    >>> summary = resolve_pending(engine)            # doctest: +SKIP
    >>> summary.matched, summary.unmatched
    (1502, 171)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import structlog

from rareindex_connectors import (
    AuctionLot,
    CatalogItem,
    Listing,
    NewsItem,
    PopulationReport,
    PriceObservation,
    Sale,
    parse_normalized,
)

from .quality import excluded_from_index, flag_price_anomalies
from .resolution import Decision, Resolver, asset_key, variant_key
from .storage import Engine
from .storage.catalog_store import asset_ids_by_key, catalog_version, import_catalog, load_catalog
from .storage.normalized_store import pending_normalized, set_decisions
from .storage.observation_store import (
    connector_sources,
    listing_id,
    observation_row,
    sale_row,
    set_anomalies,
    upsert_variants,
    variant_prices,
    variant_row,
    write_auction_lots,
    write_images,
    write_listings,
    write_news,
    write_population,
    write_price_observations,
    write_sales,
)

__all__ = ["ResolveSummary", "resolve_pending"]

log = structlog.get_logger(__name__)
BATCH = 500


@dataclass(slots=True)
class ResolveSummary:
    resolved: int = 0
    matched: int = 0
    unmatched: int = 0
    catalog: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    anomalies: int = 0


class _ResolverCache:
    """One resolver per database, rebuilt when the catalog changes."""

    def __init__(self) -> None:
        self._cached: dict[str, tuple[tuple[int, object], Resolver, dict[str, str]]] = {}

    def get(self, engine: Engine, conn: Any) -> tuple[Resolver, dict[str, str]]:
        size = catalog_version(conn)
        key = str(engine.url)
        hit = self._cached.get(key)
        if hit is None or hit[0] != size:
            items = load_catalog(conn)
            hit = (size, Resolver.from_catalog(items), asset_ids_by_key(conn))
            self._cached[key] = hit
        return hit[1], hit[2]


_CACHE = _ResolverCache()


def resolve_pending(
    engine: Engine, *, batch: int = BATCH, limit: int | None = None
) -> ResolveSummary:
    """Resolve pending normalized records until none are left (or ``limit`` were done)."""
    summary = ResolveSummary()
    while True:
        with engine.begin() as conn:
            catalog_rows = pending_normalized(conn, limit=batch, kinds=["catalog_item"])
            if catalog_rows:
                _import_catalog_rows(engine, conn, catalog_rows, summary)
                continue
        with engine.begin() as conn:
            rows = pending_normalized(conn, limit=batch)
            if not rows:
                break
            _resolve_batch(engine, conn, rows, summary)
        if limit is not None and summary.resolved >= limit:
            break
    if summary.resolved:
        log.info(
            "resolve.completed",
            records=summary.resolved,
            matched=summary.matched,
            unmatched=summary.unmatched,
            anomalies=summary.anomalies,
        )
    return summary


def _import_catalog_rows(
    engine: Engine, conn: Any, rows: list[dict[str, Any]], summary: ResolveSummary
) -> None:
    items = [CatalogItem.model_validate(r["record"]) for r in rows]
    import_catalog(engine, items, conn=conn)
    ids = asset_ids_by_key(conn)

    now = datetime.now(UTC)
    set_decisions(
        conn,
        [
            {
                "id": row["id"],
                "status": "matched",
                "match_method": "catalog",
                "match_confidence": 1.0,
                "reject_reason": None,
                "asset_id": ids.get(asset_key(item)),
                "variant_id": None,
                "anomaly_flags": row["anomaly_flags"],
                "resolved_at": now,
            }
            for row, item in zip(rows, items, strict=True)
        ],
    )
    summary.catalog += len(rows)
    summary.resolved += len(rows)


def _resolve_batch(
    engine: Engine, conn: Any, rows: list[dict[str, Any]], summary: ResolveSummary
) -> None:
    resolver, asset_ids = _CACHE.get(engine, conn)
    sources = connector_sources(conn)
    now = datetime.now(UTC)
    decisions = []
    touched: set[str] = set()
    variants: dict[str, dict[str, Any]] = {}
    planned: list[tuple[Any, _Context]] = []
    for row in rows:
        record = parse_normalized(row["record"])
        flags = tuple(row["anomaly_flags"] or ())
        source_id = sources[row["connector_id"]]
        decision: Decision | None = None
        asset_id = variant_id = None
        if isinstance(record, (Sale, Listing, AuctionLot, PriceObservation, PopulationReport)):
            identifiers = getattr(record, "identifiers", None)
            decision = resolver.resolve(
                record.title, category=record.category, identifiers=identifiers
            )
            if decision.matched and decision.asset_key:
                asset_id = asset_ids.get(decision.asset_key)
                grading = getattr(record, "grading", None) or decision.grading
                if asset_id and not isinstance(record, PopulationReport):
                    grading_doc = grading.model_dump() if grading else None
                    variant = variant_row(
                        asset_id, variant_key(decision.asset_key, grading), grading_doc
                    )
                    variants.setdefault(variant["variant_key"], variant)
                    variant_id = variant["id"]
        planned.append((record, _Context(row, source_id, asset_id, variant_id, flags)))
        matched = decision is None or decision.matched
        summary.resolved += 1
        if matched:
            summary.matched += 1
            summary.methods[(decision.method if decision else None) or "direct"] += 1
        else:
            summary.unmatched += 1
            summary.reasons[decision.reject_reason or "unknown"] += 1  # type: ignore[union-attr]
        decisions.append(
            {
                "id": row["id"],
                "status": "matched" if matched else "unmatched",
                "match_method": (decision.method if decision else "direct") if matched else None,
                "match_confidence": decision.confidence if decision else 1.0,
                "reject_reason": None if matched or decision is None else decision.reject_reason,
                "asset_id": asset_id,
                "variant_id": variant_id,
                "anomaly_flags": row["anomaly_flags"],
                "resolved_at": now,
            }
        )
    # Foreign keys fix the order: variants, then lots (read back: their sales depend on the
    # merged lot), then the observations.
    upsert_variants(conn, list(variants.values()))
    lots = [
        (i, record, ctx)
        for i, (record, ctx) in enumerate(planned)
        if isinstance(record, AuctionLot)
    ]
    stored = write_auction_lots(conn, [_lot_rows(record, ctx) for _, record, ctx in lots])
    stored_lots = {i: lot for (i, _, _), lot in zip(lots, stored, strict=True)}
    writes = _Writes()
    for i, (record, ctx) in enumerate(planned):
        observed = _write(writes, record, ctx, stored_lots.get(i))
        if observed and ctx.variant_id:
            touched.add(ctx.variant_id)
    writes.flush(conn)
    set_decisions(conn, decisions)
    summary.anomalies += _flag_anomalies(conn, touched)


@dataclass(slots=True)
class _Writes:
    """The rows of one batch, per table, in record order; :meth:`flush` sends them."""

    sales: list[tuple[dict[str, Any], bool]] = field(default_factory=list)
    listings: list[tuple[dict[str, Any], datetime]] = field(default_factory=list)
    images: list[tuple[str, str, Sequence[str]]] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    population: list[dict[str, Any]] = field(default_factory=list)
    news: list[dict[str, Any]] = field(default_factory=list)

    def flush(self, conn: Any) -> None:
        write_listings(conn, self.listings)
        write_sales(conn, self.sales)
        write_images(conn, self.images)
        write_price_observations(conn, self.observations)
        write_population(conn, self.population)
        write_news(conn, self.news)


@dataclass(frozen=True, slots=True)
class _Context:
    row: dict[str, Any]
    source_id: str
    asset_id: str | None
    variant_id: str | None
    flags: tuple[str, ...]

    @property
    def subject(self) -> dict[str, Any]:
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
        return self.row["fetched_at"]  # type: ignore[no-any-return]


def _write(writes: _Writes, record: Any, ctx: _Context, stored_lot: dict[str, Any] | None) -> bool:
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
        row = {
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
        return _write_lot(writes, record, ctx, stored_lot)
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


def _lot_rows(record: AuctionLot, ctx: _Context) -> tuple[dict[str, Any], dict[str, Any]]:
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
    auction = {
        "source_id": ctx.source_id,
        "external_id": record.auction_id,
        "title": record.auction_title,
        "ends_at": record.closes_at,
        "currency": currency,
    }
    lot = {
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


def _write_lot(writes: _Writes, record: AuctionLot, ctx: _Context, stored: dict[str, Any]) -> bool:
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
    merged = _Context(
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
    writes: _Writes,
    ctx: _Context,
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


def _flag_anomalies(conn: Any, variant_ids: set[str]) -> int:
    """Recompute the anomaly flags of the sale series of ``variant_ids``, per currency; only
    the observations whose flag changed are written."""
    if not variant_ids:
        return 0
    series: dict[tuple[str, str], list[tuple[str, Decimal]]] = defaultdict(list)
    current: dict[str, str | None] = {}
    for obs_id, variant_id, currency, price, reason in variant_prices(conn, variant_ids):
        series[variant_id, currency].append((obs_id, price))
        current[obs_id] = reason
    changed: dict[str, str | None] = {}
    flagged = 0
    for prices in series.values():
        flags = flag_price_anomalies(prices)
        for obs_id, _ in prices:
            flag = flags.get(obs_id)
            reason = flag.reason if flag else None
            if reason != current[obs_id]:
                changed[obs_id] = reason
            flagged += flag is not None
    set_anomalies(conn, changed)
    return flagged

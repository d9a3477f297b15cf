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
    >>> summary.matched, summary.unmatched           # doctest: +SKIP
    (1502, 171)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import structlog

from rareindex_connectors.records import (
    AuctionLot,
    Listing,
    PopulationReport,
    PriceObservation,
    Sale,
    parse_normalized,
)

from .handoff import ValidatedRecords
from .observation_plan import RecordContext, RowPlan, lot_rows, plan_rows
from .quality import flag_price_anomalies
from .resolution import Decision, Resolver, asset_key, variant_key
from .review import quarantine_batch
from .storage import Engine
from .storage.catalog_store import asset_ids_by_key, catalog_version, import_catalog, load_catalog
from .storage.normalized_store import PendingRow, pending_normalized, set_decisions
from .storage.observation_store import (
    connector_sources,
    set_anomalies,
    upsert_variants,
    variant_prices,
    variant_row,
    write_auction_lots,
)
from .storage.pricing_store import update_after_batch

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
    quarantined: int = 0

    def add(self, other: ResolveSummary) -> None:
        self.resolved += other.resolved
        self.matched += other.matched
        self.unmatched += other.unmatched
        self.catalog += other.catalog
        self.methods.update(other.methods)
        self.reasons.update(other.reasons)
        self.anomalies += other.anomalies
        self.quarantined += other.quarantined


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
    engine: Engine,
    *,
    batch: int = BATCH,
    limit: int | None = None,
    handoff: ValidatedRecords | None = None,
) -> ResolveSummary:
    """Resolve pending normalized records until none are left (or ``limit`` were done).

    A record ``handoff`` holds (the normalizer of this process stored it) is used as validated
    then; every other row's record is validated from its stored JSON.
    """
    summary = ResolveSummary()
    records = _Records(handoff)
    while True:
        with engine.begin() as conn:
            catalog_rows = pending_normalized(
                conn, limit=batch, kinds=["catalog_item"], held=handoff
            )
            if catalog_rows:
                _import_catalog_rows(engine, conn, catalog_rows, summary, records)
                continue
        with engine.begin() as conn:
            rows = pending_normalized(conn, limit=batch, held=handoff)
            if not rows:
                break
            _resolve_batch(engine, conn, rows, summary, records)
        if limit is not None and summary.resolved >= limit:
            break
    if summary.resolved:
        log.info(
            "resolve.completed",
            records=summary.resolved,
            matched=summary.matched,
            unmatched=summary.unmatched,
            anomalies=summary.anomalies,
            quarantined=summary.quarantined,
        )
    return summary


class _Records:
    """The validated record of a pending row: from the handoff, else parsed from its JSON."""

    __slots__ = ("_handoff",)

    def __init__(self, handoff: ValidatedRecords | None) -> None:
        self._handoff = handoff

    def of(self, row: PendingRow) -> Any:
        if self._handoff is not None and (record := self._handoff.take(row["id"])) is not None:
            return record  # its row was read without its record (``pending_normalized(held=)``)
        return parse_normalized(row["record"])


def _import_catalog_rows(
    engine: Engine,
    conn: Any,
    rows: list[PendingRow],
    summary: ResolveSummary,
    records: _Records,
) -> None:
    items = [records.of(r) for r in rows]
    # A connector's external ids are only unique per connector: its items go by asset key.
    import_catalog(engine, items, conn=conn, by_external_id=False)
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
    engine: Engine,
    conn: Any,
    rows: list[PendingRow],
    summary: ResolveSummary,
    records: _Records,
) -> None:
    resolver, asset_ids = _CACHE.get(engine, conn)
    sources = connector_sources(conn)
    now = datetime.now(UTC)
    decisions = []
    touched: set[str] = set()
    variants: dict[str, dict[str, Any]] = {}
    planned: list[tuple[Any, RecordContext]] = []
    for row in rows:
        record = records.of(row)
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
                    mark = decision.print_mark
                    key = variant_key(decision.asset_key, grading, mark)
                    variant = variant_row(asset_id, key, grading_doc, mark)
                    variants.setdefault(variant["variant_key"], variant)
                    variant_id = variant["id"]
        planned.append((record, RecordContext(row, source_id, asset_id, variant_id, flags)))
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
    stored = write_auction_lots(conn, [lot_rows(record, ctx) for _, record, ctx in lots])
    stored_lots = {i: lot for (i, _, _), lot in zip(lots, stored, strict=True)}
    writes = RowPlan()
    for i, (record, ctx) in enumerate(planned):
        observed = plan_rows(writes, record, ctx, stored_lots.get(i))
        if observed and ctx.variant_id:
            touched.add(ctx.variant_id)
    writes.flush(conn)
    set_decisions(conn, decisions)
    summary.anomalies += _flag_anomalies(conn, touched)
    summary.quarantined += quarantine_batch(conn, writes.observations)  # review queue (issue 19)
    update_after_batch(conn, touched)  # the price index, once built (issue 18)


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

"""Everything the report shows, read from the database in one pass: :func:`load_report`.

The coverage table and the connector overviews are the admin API's own queries
(:func:`~rareindex.storage.admin_queries.coverage`,
:func:`~rareindex.storage.admin_queries.connector_overviews`), so the report and
``GET /api/admin/coverage`` always agree. "Recent" sales are those in the 30 days before the
newest sale, not before today: a report of an old crawl still shows its activity.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from ..errors import ConfigError
from ..quality import excluded_from_index
from ..storage import Engine
from ..storage.admin_queries import (
    ConnectorOverview,
    CoverageCount,
    connector_overviews,
    coverage,
)
from ..storage.fx_coverage import FxCoverage, fx_coverage
from ..storage.index_report import IndexSummary, index_summary
from ..storage.report_queries import (
    REPORT_CURRENCIES,
    FlagTotals,
    SalePoint,
    TradedAsset,
    asset_sales,
    flag_totals,
    flagged_sales,
    most_traded_assets,
    newest_sale_at,
)
from ._pricing import PricingSection, load_pricing

__all__ = [
    "FLAGGED_LIMIT",
    "RECENT",
    "AssetHistory",
    "ReportData",
    "VariantHistory",
    "flag_words",
    "is_clean",
    "is_excluded",
    "load_report",
    "variant_label",
]

RECENT = timedelta(days=30)
"""The window of "recent sales" in the coverage table, back from the newest sale."""
FLAGGED_LIMIT = 100
"""How many of the newest flagged sales the report lists."""


def is_excluded(point: SalePoint) -> bool:
    """The price is not a clean price of one item: a lot, a hidden best offer, a reprint…"""
    return point.is_lot or point.price_visibility == "hidden" or excluded_from_index(point.flags)


def is_clean(point: SalePoint) -> bool:
    """Neither excluded nor flagged an outlier: the prices medians and trend lines use."""
    return point.anomaly_reason is None and not is_excluded(point)


def flag_words(point: SalePoint) -> list[str]:
    """Why a point is marked, in words (empty when it is not)."""
    words = [f"price anomaly: {point.anomaly_reason}"] if point.anomaly_reason else []
    if point.is_lot and "lot" not in point.flags:
        words.append("lot")
    if point.price_visibility == "hidden" and "hidden_price" not in point.flags:
        words.append("hidden_price")
    words.extend(point.flags)
    return words


def variant_label(point: SalePoint) -> str:
    """``PSA 10``, ``BGS 9.5 (OC)``, ``ungraded``; ``variant unknown`` when unresolved."""
    if point.variant_id is None:
        return "variant unknown"
    parts = [p for p in (point.grader, point.grade) if p]
    label = " ".join(parts) or "ungraded"
    return f"{label} ({point.qualifier})" if point.qualifier else label


@dataclass(frozen=True, slots=True)
class VariantHistory:
    """The sales of one variant (grader x grade), every source, by date."""

    variant_id: str | None
    label: str
    points: tuple[SalePoint, ...]

    @property
    def priced(self) -> tuple[SalePoint, ...]:
        """The points with a price in the report's currency."""
        return tuple(p for p in self.points if p.converted is not None)


@dataclass(frozen=True, slots=True)
class AssetHistory:
    asset: TradedAsset
    variants: tuple[VariantHistory, ...]
    median: float | None
    """Median of the clean sales in the report's currency (None: none)."""


@dataclass(frozen=True, slots=True)
class ReportData:
    generated_at: datetime
    database: str
    currency: str
    top: int
    summary: IndexSummary
    flags: FlagTotals
    newest_sale_at: datetime | None
    recent_since: datetime
    coverage: tuple[CoverageCount, ...]
    connectors: tuple[ConnectorOverview, ...]
    assets: tuple[AssetHistory, ...]
    flagged: tuple[SalePoint, ...]
    """The newest flagged sales of the whole database (at most ``FLAGGED_LIMIT``)."""
    flagged_total: int
    fx: FxCoverage | None = None
    """How the ECB rates cover the sales: stale rates, sales left unpriced (None: not read)."""
    pricing: PricingSection | None = None
    """The published category indices and the top assets' grade ladders (None: not read)."""

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source name in the charts, sorted: one style each across the whole report."""
        return tuple(
            sorted({p.source_name for a in self.assets for v in a.variants for p in v.points})
        )


def _histories(points: Sequence[SalePoint], assets: Sequence[TradedAsset]) -> list[AssetHistory]:
    by_asset: dict[str | None, dict[str | None, list[SalePoint]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for point in points:
        by_asset[point.asset_id][point.variant_id].append(point)
    out = []
    for asset in assets:
        variants = [
            VariantHistory(variant_id, variant_label(pts[0]), tuple(pts))
            for variant_id, pts in by_asset[asset.asset_id].items()
        ]
        variants.sort(key=lambda v: (-len(v.points), v.label, v.variant_id or ""))
        clean = [
            p.converted
            for v in variants
            for p in v.points
            if p.converted is not None and is_clean(p)
        ]
        median = statistics.median(clean) if clean else None
        out.append(AssetHistory(asset, tuple(variants), median))
    return out


def load_report(
    engine: Engine,
    *,
    currency: str = "USD",
    top: int = 5,
    now: datetime | None = None,
    database: str = "",
) -> ReportData:
    """Read what the report shows: coverage, connectors, and the ``top`` most-traded assets'
    sales priced in ``currency``. Read-only."""
    currency = currency.upper()
    if currency not in REPORT_CURRENCIES:
        raise ConfigError(
            f"unknown report currency {currency!r}: choose one of {', '.join(REPORT_CURRENCIES)}"
        )
    if top < 0:
        raise ConfigError(f"--top must be 0 or more, not {top}")
    now = now or datetime.now(UTC)
    with engine.connect() as conn:
        summary = index_summary(conn)
        flags = flag_totals(conn)
        newest = newest_sale_at(conn)
        traded = most_traded_assets(conn, top=top) if top else []
        points = asset_sales(conn, [a.asset_id for a in traded], currency=currency)
        flagged, flagged_total = flagged_sales(conn, currency=currency, limit=FLAGGED_LIMIT)
        fx = fx_coverage(conn)
        pricing = load_pricing(conn, [a.asset_id for a in traded])
    since = (newest or now) - RECENT
    cells = coverage(engine, since=since)
    overviews = connector_overviews(
        engine, month_start=date(now.year, now.month, 1), with_hosts=False
    )
    return ReportData(
        generated_at=now,
        database=database,
        currency=currency,
        top=top,
        summary=summary,
        flags=flags,
        newest_sale_at=newest,
        recent_since=since,
        coverage=tuple(cells),
        connectors=tuple(overviews),
        assets=tuple(_histories(points, traded)),
        flagged=tuple(flagged),
        flagged_total=flagged_total,
        fx=fx,
        pricing=pricing,
    )

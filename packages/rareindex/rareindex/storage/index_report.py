"""Read-side summaries of the index: what resolution produced, and median prices in USD.

Example:
    >>> with engine.connect() as conn:                         # doctest: +SKIP
    ...     summary = index_summary(conn)
    >>> summary.assets_seen, summary.variants
    (612, 1252)
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import Connection, func, select, text

from .schema import asset_variants, assets, normalized_records, sales

__all__ = ["AssetPrices", "IndexSummary", "index_summary", "median_prices_usd"]


@dataclass(frozen=True, slots=True)
class IndexSummary:
    assets: int
    assets_seen: int
    """Assets with at least one matched observation."""
    variants: int
    sales_by_source: dict[str, tuple[int, int]]
    """Source -> (sales, sales matched to an asset)."""
    records_by_status: dict[str, int]


@dataclass(frozen=True, slots=True)
class AssetPrices:
    asset_id: str
    title: str
    sales: int
    median_usd: float
    by_source: dict[str, float]
    """Source -> median sale price in USD."""


def index_summary(conn: Connection) -> IndexSummary:
    total_assets = conn.execute(select(func.count()).select_from(assets)).scalar_one()
    seen = conn.execute(
        select(func.count(func.distinct(normalized_records.c.asset_id))).where(
            normalized_records.c.status == "matched", normalized_records.c.kind != "catalog_item"
        )
    ).scalar_one()
    variants = conn.execute(select(func.count()).select_from(asset_variants)).scalar_one()
    by_source = {
        source: (int(n), int(matched or 0))
        for source, n, matched in conn.execute(
            select(
                sales.c.source_id,
                func.count(),
                func.count(sales.c.asset_id),
            ).group_by(sales.c.source_id)
        )
    }
    statuses = {
        status: int(n)
        for status, n in conn.execute(
            select(normalized_records.c.status, func.count()).group_by(normalized_records.c.status)
        )
    }
    return IndexSummary(int(total_assets), int(seen), int(variants), by_source, statuses)


def median_prices_usd(conn: Connection, *, top: int = 5) -> list[AssetPrices]:
    """The ``top`` assets with sales on the most sources (then most sales), with the median sale
    price in USD overall and per source, at the rate of each sale's date (lots and hidden
    best-offer prices excluded)."""
    rows = conn.execute(
        text(
            "SELECT v.asset_id, v.source_id, v.price_usd FROM sales_multi_currency v "
            "JOIN sales s ON s.id = v.id AND s.sale_date = v.sale_date "
            "WHERE v.asset_id IS NOT NULL AND v.price_usd IS NOT NULL "
            "AND s.is_lot = :no AND s.price_visibility = 'exact'"
        ),
        {"no": False},
    )
    prices: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for asset_id, source_id, usd in rows:
        prices[asset_id][source_id].append(float(usd))
    ranked = sorted(
        prices.items(),
        key=lambda kv: (-len(kv[1]), -sum(len(v) for v in kv[1].values()), kv[0]),
    )[:top]
    titles = dict(
        conn.execute(
            select(assets.c.id, assets.c.title).where(assets.c.id.in_([a for a, _ in ranked]))
        ).all()
    )
    out = []
    for asset_id, per_source in ranked:
        every = [p for values in per_source.values() for p in values]
        out.append(
            AssetPrices(
                asset_id=asset_id,
                title=str(titles.get(asset_id, asset_id)),
                sales=len(every),
                median_usd=statistics.median(every),
                by_source={s: statistics.median(v) for s, v in sorted(per_source.items())},
            )
        )
    return out

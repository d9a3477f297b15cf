"""Read-side summaries of the index: what resolution produced, and median prices in USD.

Example:
    >>> with engine.connect() as conn:                         # doctest: +SKIP
    ...     summary = index_summary(conn)                      # doctest: +SKIP
    >>> summary.assets_seen, summary.variants                  # doctest: +SKIP
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
    variant_id: str | None
    """The grade sold (None: sales with no grade)."""
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
    """The ``top`` variants (an asset at one grade: a PSA 10 and a PSA 9 are different prices)
    with sales on the most sources (then most sales), with the median sale price in USD overall
    and per source, at the rate of each sale's date (lots and hidden best-offer prices
    excluded). Sales without a grade form their own row ("ungraded")."""
    rows = conn.execute(
        text(
            "SELECT v.asset_id, s.variant_id, v.source_id, v.price_usd FROM sales_multi_currency v "
            "JOIN sales s ON s.id = v.id AND s.sale_date = v.sale_date "
            "WHERE v.asset_id IS NOT NULL AND v.price_usd IS NOT NULL "
            "AND s.is_lot = :no AND s.price_visibility = 'exact'"
        ),
        {"no": False},
    )
    prices: dict[tuple[str, str | None], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for asset_id, variant_id, source_id, usd in rows:
        prices[(asset_id, variant_id)][source_id].append(float(usd))
    ranked = sorted(
        prices.items(),
        key=lambda kv: (
            -len(kv[1]),
            -sum(len(v) for v in kv[1].values()),
            kv[0][0],
            kv[0][1] or "",
        ),
    )[:top]
    asset_ids = {asset_id for (asset_id, _), _ in ranked}
    variant_ids = {variant_id for (_, variant_id), _ in ranked if variant_id is not None}
    titles = dict(
        conn.execute(select(assets.c.id, assets.c.title).where(assets.c.id.in_(asset_ids))).all()
    )
    grades = {
        row.id: " ".join(str(part) for part in (row.grader, row.grade) if part) or "ungraded"
        for row in conn.execute(
            select(asset_variants.c.id, asset_variants.c.grader, asset_variants.c.grade).where(
                asset_variants.c.id.in_(variant_ids)
            )
        )
    }
    out = []
    for (asset_id, variant_id), per_source in ranked:
        every = [p for values in per_source.values() for p in values]
        grade = grades.get(variant_id, "ungraded") if variant_id else "ungraded"
        out.append(
            AssetPrices(
                asset_id=asset_id,
                variant_id=variant_id,
                title=f"{titles.get(asset_id, asset_id)} · {grade}",
                sales=len(every),
                median_usd=statistics.median(every),
                by_source={s: statistics.median(v) for s, v in sorted(per_source.items())},
            )
        )
    return out

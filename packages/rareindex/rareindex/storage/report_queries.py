"""What ``rareindex report`` reads beyond the admin API's queries: the most-traded assets, their
sales priced in one currency, and the sales whose prices are flagged.

The sales are priced through the ``sales_multi_currency`` view (the ECB rate of each sale's date,
the latest one on or before it; NULL when there is none, never a guess). Every sale is returned,
lots and hidden best-offer prices included, each with its quality flags and the anomaly reason of
its price observation, so the report can mark them rather than silently drop them.

Example:
    >>> with engine.connect() as conn:                                    # doctest: +SKIP
    ...     top = most_traded_assets(conn, top=5)
    ...     points = asset_sales(conn, [a.asset_id for a in top], currency="EUR")
    >>> top[0].title, points[0].converted                                 # doctest: +SKIP
    ('1932 Saint-Gaudens Double Eagle $20', 27031.12)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    Text,
    and_,
    case,
    cast,
    column,
    distinct,
    func,
    or_,
    select,
    table,
)

from .schema import asset_variants, assets, price_observations, sales, sources
from .schema.fx import VIEW_CURRENCIES

__all__ = [
    "REPORT_CURRENCIES",
    "FlagTotals",
    "SalePoint",
    "TradedAsset",
    "asset_sales",
    "flag_totals",
    "flagged_sales",
    "most_traded_assets",
    "newest_sale_at",
]

REPORT_CURRENCIES: tuple[str, ...] = VIEW_CURRENCIES
"""The currencies a report can be priced in: the columns of ``sales_multi_currency``."""

_CHUNK = 500  # ids per IN (...): well under SQLite's and psycopg's parameter limits

_multi_currency = table(
    "sales_multi_currency",
    column("id"),
    column("sale_date"),
    *(column(f"price_{c.lower()}") for c in VIEW_CURRENCIES),
)


@dataclass(frozen=True, slots=True)
class TradedAsset:
    """An asset and how much it trades: its sales and the sources they came from."""

    asset_id: str
    title: str
    category: str
    sales: int
    sources: int


@dataclass(frozen=True, slots=True)
class SalePoint:
    """One sale of an asset, priced in its own currency and in the report's."""

    sale_id: str
    asset_id: str | None
    asset_title: str | None
    variant_id: str | None
    grader: str | None
    grade: str | None
    qualifier: str | None
    source_id: str
    source_name: str
    sale_date: datetime
    title: str
    url: str | None
    price: Decimal
    currency: str
    converted: float | None
    """The price in the requested currency at the sale date's rate (None: no rate)."""
    is_lot: bool
    price_visibility: str
    """``exact``, or ``hidden`` when the real price (an accepted best offer) is not shown."""
    flags: tuple[str, ...]
    anomaly_reason: str | None
    """Why the price observation of this sale was flagged an outlier (None: it was not)."""


@dataclass(frozen=True, slots=True)
class FlagTotals:
    """How many prices in the whole database are flagged, by kind."""

    anomalies: dict[str, int]
    """Anomaly reason -> price observations flagged with it."""
    lots: int
    hidden_prices: int


def newest_sale_at(conn: Connection) -> datetime | None:
    """The date of the newest sale (the report's "now" for recent sales), None when none."""
    newest: datetime | None = conn.execute(
        select(sales.c.sale_date).order_by(sales.c.sale_date.desc()).limit(1)
    ).scalar_one_or_none()
    return newest


def most_traded_assets(conn: Connection, *, top: int) -> list[TradedAsset]:
    """The ``top`` assets with the most sales (then the most sources, then by id)."""
    n_sales = func.count().label("n_sales")
    n_sources = func.count(distinct(sales.c.source_id)).label("n_sources")
    rows = conn.execute(
        select(assets.c.id, assets.c.title, assets.c.category, n_sales, n_sources)
        .join_from(sales, assets, assets.c.id == sales.c.asset_id)
        .group_by(assets.c.id, assets.c.title, assets.c.category)
        .order_by(n_sales.desc(), n_sources.desc(), assets.c.id)
        .limit(top)
    )
    return [
        TradedAsset(row.id, row.title, row.category, int(row.n_sales), int(row.n_sources))
        for row in rows
    ]


def _converted(currency: str) -> Any:
    if currency not in REPORT_CURRENCIES:
        raise ValueError(
            f"currency must be one of {', '.join(REPORT_CURRENCIES)}, not {currency!r}"
        )
    return _multi_currency.c[f"price_{currency.lower()}"]


def _sales_select(currency: str) -> Select[Any]:
    """Sales with their variant, source and asset title, priced in ``currency``."""
    return (
        select(
            sales.c.id,
            sales.c.asset_id,
            assets.c.title.label("asset_title"),
            sales.c.variant_id,
            asset_variants.c.grader,
            asset_variants.c.grade,
            asset_variants.c.qualifier,
            sales.c.source_id,
            func.coalesce(sources.c.name, sales.c.source_id).label("source_name"),
            sales.c.sale_date,
            sales.c.title,
            sales.c.url,
            sales.c.price,
            sales.c.currency,
            _converted(currency).label("converted"),
            sales.c.is_lot,
            sales.c.price_visibility,
            sales.c.flags,
        )
        .select_from(sales)
        .join(
            _multi_currency,
            and_(
                _multi_currency.c.id == sales.c.id,
                _multi_currency.c.sale_date == sales.c.sale_date,
            ),
        )
        .outerjoin(assets, assets.c.id == sales.c.asset_id)
        .outerjoin(asset_variants, asset_variants.c.id == sales.c.variant_id)
        .outerjoin(sources, sources.c.id == sales.c.source_id)
    )


def _points(conn: Connection, rows: Sequence[Any]) -> list[SalePoint]:
    reasons = _anomaly_reasons(conn, [row.id for row in rows])
    return [
        SalePoint(
            sale_id=row.id,
            asset_id=row.asset_id,
            asset_title=row.asset_title,
            variant_id=row.variant_id,
            grader=row.grader,
            grade=row.grade,
            qualifier=row.qualifier,
            source_id=row.source_id,
            source_name=row.source_name,
            sale_date=row.sale_date,
            title=row.title,
            url=row.url,
            price=Decimal(row.price),
            currency=row.currency,
            converted=None if row.converted is None else float(row.converted),
            is_lot=bool(row.is_lot),
            price_visibility=row.price_visibility,
            flags=tuple(str(f) for f in row.flags or ()),
            anomaly_reason=reasons.get(row.id),
        )
        for row in rows
    ]


def asset_sales(conn: Connection, asset_ids: Sequence[str], *, currency: str) -> list[SalePoint]:
    """Every sale of ``asset_ids`` (by date), priced in ``currency`` (one of
    :data:`REPORT_CURRENCIES`), with its variant, source, flags and anomaly reason."""
    query = _sales_select(currency)
    ids = sorted(set(asset_ids))
    rows: list[Any] = []
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        rows.extend(conn.execute(query.where(sales.c.asset_id.in_(chunk))).all())
    points = _points(conn, rows)
    return sorted(points, key=lambda p: (p.sale_date, p.source_id, p.sale_id))


def _flagged() -> ColumnElement[bool]:
    anomalous = select(price_observations.c.sale_id).where(
        price_observations.c.anomaly_reason.is_not(None), price_observations.c.sale_id.is_not(None)
    )
    flags = func.coalesce(cast(sales.c.flags, Text), "null")  # JSON null and [] are no flags
    return or_(
        sales.c.is_lot.is_(True),
        sales.c.price_visibility == "hidden",
        flags.not_in(["null", "[]"]),
        sales.c.id.in_(anomalous),
    )


def flagged_sales(
    conn: Connection, *, currency: str, limit: int = 100
) -> tuple[list[SalePoint], int]:
    """The newest ``limit`` sales whose price is flagged (an anomaly reason, a lot, a hidden
    price or any quality flag), priced in ``currency``; and how many there are in all."""
    total = conn.execute(select(func.count()).select_from(sales).where(_flagged())).scalar_one()
    rows = conn.execute(
        _sales_select(currency)
        .where(_flagged())
        .order_by(sales.c.sale_date.desc(), sales.c.id)
        .limit(limit)
    ).all()
    return _points(conn, rows), int(total)


def _anomaly_reasons(conn: Connection, sale_ids: Sequence[str]) -> dict[str, str]:
    """Sale id -> the anomaly reason of its price observation, for the flagged ones."""
    out: dict[str, str] = {}
    ids = sorted(set(sale_ids))
    for start in range(0, len(ids), _CHUNK):
        for sale_id, reason in conn.execute(
            select(price_observations.c.sale_id, price_observations.c.anomaly_reason).where(
                price_observations.c.sale_id.in_(ids[start : start + _CHUNK]),
                price_observations.c.anomaly_reason.is_not(None),
            )
        ):
            out[sale_id] = reason
    return out


def flag_totals(conn: Connection) -> FlagTotals:
    """Flagged price observations by anomaly reason, lots and hidden prices among the sales."""
    anomalies = {
        str(reason): int(n)
        for reason, n in conn.execute(
            select(price_observations.c.anomaly_reason, func.count())
            .where(price_observations.c.anomaly_reason.is_not(None))
            .group_by(price_observations.c.anomaly_reason)
            .order_by(price_observations.c.anomaly_reason)
        )
    }
    lots, hidden = conn.execute(
        select(
            func.sum(case((sales.c.is_lot.is_(True), 1), else_=0)),
            func.sum(case((sales.c.price_visibility == "hidden", 1), else_=0)),
        )
    ).one()
    return FlagTotals(anomalies, int(lots or 0), int(hidden or 0))

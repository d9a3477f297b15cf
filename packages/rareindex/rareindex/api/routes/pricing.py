"""The price index over the API: a variant's estimate with its evidence, an asset's grade
ladder, and the published indices week by week.

``GET /api/variants/{variant_id}/estimate`` — the estimate (value and 80 % interval in USD and the
sale currency, sales count, date range, confidence, direct or derived) and the variant's newest
sales, each saying whether it entered the estimate or why not.
``GET /api/assets/{asset_id}/grade-ladder`` — every estimated grade of an asset, cheapest first.
``GET /api/indices`` and ``GET /api/indices/{index_id}`` — the published indices and one series.
``GET /api/baskets/index?asset_id=…&asset_id=…`` — the index of a basket of assets, computed on
the fly.

Everything is read from what ``rareindex index build`` published; 404 ``not_found`` until then.
Any valid token may read (``read`` or ``admin``).
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from ...pricing import Estimate, priced_sales
from ...pricing.build import basket_index
from ...pricing.sales import exclusion_reason
from ...storage.pricing_store import (
    StoredIndexPoint,
    asset_estimates,
    index_ids,
    index_series,
    sale_records,
    stored_estimate,
)
from ..auth import require_token
from ..errors import ApiError, error_responses
from ..state import ApiState, api_state

__all__ = [
    "EstimateView",
    "GradeLadderView",
    "IndexListView",
    "IndexPointView",
    "IndexSeriesView",
    "IndexSummaryView",
    "SaleEvidence",
    "router",
]

router = APIRouter(
    prefix="/api",
    tags=["price index"],
    dependencies=[Depends(require_token)],
    responses=error_responses(401),
)
State = Annotated[ApiState, Depends(api_state)]


class EstimateView(BaseModel):
    variant_id: str
    asset_id: str
    grade: str | None = Field(None, description="PSA 10, BGS 9.5 (OC), raw (in a ladder)")
    as_of: date
    value_usd: Decimal
    low_usd: Decimal = Field(description="80 % prediction interval of the next sale, USD")
    high_usd: Decimal
    currency: str = Field(description="the currency most of its sales were in")
    value: Decimal
    low: Decimal
    high: Decimal
    n_sales: int = Field(description="the sales the estimate rests on")
    first_sale: date
    last_sale: date
    log_sd: float = Field(description="spread of a sale around the value, in log units")
    confidence: str = Field(description="high, medium or low")
    basis: str = Field(description="direct (its own sales) or derived (through the grade curve)")
    derived_from: str | None = None

    @classmethod
    def of(cls, est: Estimate, grade: str | None = None) -> EstimateView:
        return cls(
            variant_id=est.variant_id,
            asset_id=est.asset_id,
            grade=grade,
            as_of=est.as_of,
            value_usd=Decimal(f"{est.value_usd:.2f}"),
            low_usd=Decimal(f"{est.low_usd:.2f}"),
            high_usd=Decimal(f"{est.high_usd:.2f}"),
            currency=est.currency,
            value=est.value,
            low=est.low,
            high=est.high,
            n_sales=est.n_sales,
            first_sale=est.first_sale,
            last_sale=est.last_sale,
            log_sd=est.log_sd,
            confidence=est.confidence,
            basis=est.basis,
            derived_from=est.derived_from,
        )


class SaleEvidence(BaseModel):
    sale_id: str
    sold_at: datetime
    sale_type: str
    price: Decimal
    currency: str
    price_basis: str
    included: bool
    excluded_because: str | None = Field(
        None,
        description="unresolved, lot, hidden_price, flagged, anomaly, hammer_without_premium, "
        "no_fx_rate",
    )


class EstimateWithEvidence(BaseModel):
    estimate: EstimateView
    sales: list[SaleEvidence] = Field(description="the variant's newest sales, newest first")


class GradeLadderView(BaseModel):
    asset_id: str
    grades: list[EstimateView]


class IndexPointView(BaseModel):
    week: date = Field(description="the Monday (UTC) of the week")
    level: Decimal = Field(description="100 at the base week")
    low: Decimal
    high: Decimal
    pairs: int = Field(description="pairs of sales of the same variant closing this week")
    method: str = Field(description="base, wls, median (a thin week) or carried (no pair)")


class IndexSeriesView(BaseModel):
    index_id: str
    points: list[IndexPointView]


class IndexSummaryView(BaseModel):
    index_id: str
    weeks: int
    first_week: date
    last_week: date


class IndexListView(BaseModel):
    indices: list[IndexSummaryView]


@router.get(
    "/variants/{variant_id}/estimate",
    response_model=EstimateWithEvidence,
    responses=error_responses(404),
)
def variant_estimate(
    variant_id: str,
    state: State,
    evidence: Annotated[int, Query(ge=0, le=500, description="newest sales to list")] = 50,
) -> EstimateWithEvidence:
    """A variant's estimate and the sales behind it (and those left out, with the reason)."""
    with state.engine.connect() as conn:
        est = stored_estimate(conn, variant_id)
        if est is None:
            raise ApiError(404, "not_found", f"no estimate for variant {variant_id}")
        own = est.derived_from or variant_id
        records = sale_records(conn, variant_id=own)
    newest = sorted(records, key=lambda r: (r.sold_at, r.sale_id), reverse=True)[:evidence]
    return EstimateWithEvidence(
        estimate=EstimateView.of(est),
        sales=[
            SaleEvidence(
                sale_id=r.sale_id,
                sold_at=r.sold_at,
                sale_type=r.sale_type,
                price=r.price,
                currency=r.currency,
                price_basis=r.price_basis,
                included=(reason := exclusion_reason(r)) is None and r.sold_at.date() <= est.as_of,
                excluded_because=reason,
            )
            for r in newest
        ],
    )


@router.get(
    "/assets/{asset_id}/grade-ladder",
    response_model=GradeLadderView,
    responses=error_responses(404),
)
def grade_ladder(asset_id: str, state: State) -> GradeLadderView:
    """Every estimated grade of an asset, cheapest first (derived ones marked)."""
    with state.engine.connect() as conn:
        ladder = asset_estimates(conn, asset_id)
    if not ladder:
        raise ApiError(404, "not_found", f"no estimate for asset {asset_id}")
    return GradeLadderView(
        asset_id=asset_id, grades=[EstimateView.of(est, grade) for grade, est in ladder]
    )


@router.get("/indices", response_model=IndexListView)
def indices(state: State) -> IndexListView:
    """Every published index: ``category:<name>`` and ``set:<id>`` (empty before a build)."""
    with state.engine.connect() as conn:
        found = index_ids(conn)
    return IndexListView(
        indices=[
            IndexSummaryView(index_id=i, weeks=n, first_week=first, last_week=last)
            for i, n, first, last in found
        ]
    )


@router.get("/baskets/index", response_model=IndexSeriesView, responses=error_responses(404))
def basket(
    state: State,
    asset_id: Annotated[
        list[str], Query(min_length=1, max_length=200, description="the basket's assets")
    ],
) -> IndexSeriesView:
    """The repeat-sales index of a basket of assets (``?asset_id=…&asset_id=…``), computed on
    the fly from their stored sales and not published."""
    with state.engine.connect() as conn:
        records = sale_records(conn, asset_ids=asset_id)
    kept, _ = priced_sales(records)
    points = [StoredIndexPoint.of(p) for p in basket_index(kept, asset_id)]
    if not points:
        raise ApiError(404, "not_found", "no pairs of sales among the basket's assets")
    return _series(f"basket of {len(set(asset_id))} assets", points)


def _series(index_id: str, points: list[StoredIndexPoint]) -> IndexSeriesView:
    return IndexSeriesView(
        index_id=index_id,
        points=[
            IndexPointView(
                week=p.week, level=p.level, low=p.low, high=p.high, pairs=p.pairs, method=p.method
            )
            for p in points
        ],
    )


@router.get("/indices/{index_id}", response_model=IndexSeriesView, responses=error_responses(404))
def index_of(index_id: str, state: State) -> IndexSeriesView:
    """One index week by week, with each point's band, pairs and method."""
    with state.engine.connect() as conn:
        points = index_series(conn, index_id)
    if not points:
        raise ApiError(404, "not_found", f"no index {index_id!r}; GET /api/indices lists them")
    return _series(index_id, points)

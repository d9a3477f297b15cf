"""``/api/review``: the review queue — quarantined observations, and the decisions on them.

``GET /api/review`` lists items (``?status=pending`` by default; ``accepted``, ``rejected`` or
``all``), oldest first, for any token. ``POST /api/review/{id}/accept`` and ``/reject`` (admin
tokens) take ``{"reason": "…"}`` and record the decision with the token's principal
(``token:<name>``) as who: acceptance puts the observation into the index at once and emits a
``review.accepted`` event; rejection keeps it, marked, out of the index. The API's twins of
``rareindex review list|accept|reject`` (:mod:`rareindex.review.decisions`).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from ...errors import NotFound, ReviewConflict
from ...review import Decision, decide
from ...review.decisions import MAX_REASON
from ...storage.review_store import ReviewItem, list_items
from ...storage.tokens import TokenInfo
from ..auth import require_admin, require_token
from ..errors import ApiError, error_responses
from ..state import ApiState, api_state
from .connector_status import principal

__all__ = ["ReviewDecisionIn", "ReviewItemView", "ReviewListResponse", "router"]

router = APIRouter(
    prefix="/api/review",
    tags=["review"],
    dependencies=[Depends(require_token)],
    responses=error_responses(401),
)
State = Annotated[ApiState, Depends(api_state)]
Admin = Annotated[TokenInfo, Depends(require_admin)]


class ReviewItemView(BaseModel):
    """One quarantined observation, the reference it was judged against, and its decision."""

    model_config = ConfigDict(frozen=True)

    id: str
    observation_id: str
    kind: str = Field(description="sale, realised (an auction result) or ask (a listing)")
    sale_id: str | None
    listing_id: str | None
    source_id: str
    connector_id: str
    asset_id: str
    variant_id: str
    category: str | None
    observed_at: datetime
    price: Decimal
    currency: str
    reason: str = Field(description="above_limit, below_limit or anomaly")
    anomaly_reason: str | None = Field(description="the anomaly rule, when one flagged it")
    reference_basis: str | None = Field(description="estimate or median (of recent sales)")
    reference: Decimal | None = Field(description="the reference price, in currency")
    ratio: Decimal | None = Field(description="price / reference")
    limit_factor: Decimal | None = Field(description="the category's limit when judged")
    status: Literal["pending", "accepted", "rejected"]
    decided_by: str | None
    decided_at: datetime | None
    decision_reason: str | None
    created_at: datetime | None

    @classmethod
    def of(cls, item: ReviewItem) -> ReviewItemView:
        return cls.model_validate({name: getattr(item, name) for name in cls.model_fields})


class ReviewListResponse(BaseModel):
    model_config = ConfigDict(frozen=True)

    items: list[ReviewItemView]


class ReviewDecisionIn(BaseModel):
    """Why the observation is accepted or rejected (stored with the decision and logged)."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=MAX_REASON, examples=["checked: a real sale"])


@router.get("", response_model=ReviewListResponse, responses=error_responses(422))
def list_review(
    state: State,
    status: Annotated[
        Literal["pending", "accepted", "rejected", "all"], Query(description="which items")
    ] = "pending",
    limit: Annotated[int, Query(ge=1, le=1000, description="at most this many")] = 200,
) -> ReviewListResponse:
    """The review queue, oldest first: pending items by default."""
    found = list_items(state.engine, status=None if status == "all" else status, limit=limit)
    return ReviewListResponse(items=[ReviewItemView.of(item) for item in found])


def _decide(
    state: ApiState, token: TokenInfo, item_id: str, decision: Decision, body: ReviewDecisionIn
) -> ReviewItemView:
    try:
        item = decide(state.engine, item_id, decision, by=principal(token), reason=body.reason)
    except NotFound as exc:
        raise ApiError(404, "unknown_review_item", str(exc)) from None
    except ReviewConflict as exc:
        raise ApiError(409, "already_decided", str(exc)) from None
    return ReviewItemView.of(item)


_DECISION = {"response_model": ReviewItemView, "responses": error_responses(403, 404, 409, 422)}


@router.post("/{item_id}/accept", **_DECISION)  # type: ignore[arg-type]
def accept_item(item_id: str, body: ReviewDecisionIn, state: State, token: Admin) -> ReviewItemView:
    """Accept a pending item: the observation enters the index now (``review.accepted``)."""
    return _decide(state, token, item_id, "accept", body)


@router.post("/{item_id}/reject", **_DECISION)  # type: ignore[arg-type]
def reject_item(item_id: str, body: ReviewDecisionIn, state: State, token: Admin) -> ReviewItemView:
    """Reject a pending item: the observation stays stored, marked, out of the index."""
    return _decide(state, token, item_id, "reject", body)

"""``/api/watchlists``: the calling principal's watchlists — create, list, delete.

The principal is the token's name (``token:<name>``, as the operator routes record who acted), so
a watchlist outlives a rotated token of the same name. One principal never sees, matches or
deletes another's: a foreign id answers 404 ``unknown_watchlist``, exactly as an id that does not
exist. Any valid token (``read`` or ``admin``) manages its own watchlists.

A body names assets, variants, categories or a title query (at least one, the schema says so)
and optionally ``below`` / ``above`` (in ``currency``, USD by default) and ``move_pct``.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

import structlog
from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from ...errors import InvalidWatchlist, NotFound
from ...storage.tokens import TokenInfo
from ...storage.watchlist_store import add_watchlist, delete_watchlist, watchlists_of
from ...watchlists import MAX_ITEMS, Watchlist
from ..auth import require_token
from ..errors import ApiError, error_responses
from ..state import ApiState, api_state
from .connector_status import principal

__all__ = ["WatchlistIn", "WatchlistView", "WatchlistsResponse", "router"]

log = structlog.get_logger(__name__)

router = APIRouter(
    prefix="/api/watchlists",
    tags=["watchlists"],
    responses=error_responses(401),
)
State = Annotated[ApiState, Depends(api_state)]
Token = Annotated[TokenInfo, Depends(require_token)]

_NAMES_SOMETHING: list[JsonValue] = [
    {"required": ["asset_ids"], "properties": {"asset_ids": {"minItems": 1}}},
    {"required": ["variant_ids"], "properties": {"variant_ids": {"minItems": 1}}},
    {"required": ["categories"], "properties": {"categories": {"minItems": 1}}},
    {"required": ["title_query"], "properties": {"title_query": {"type": "string"}}},
]
"""The "at least one subject" rule of :class:`WatchlistIn` in its JSON Schema."""

Ids = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=200)]], Field(max_length=MAX_ITEMS)
]
Amount = Annotated[float, Field(strict=True, gt=0, lt=1e14, allow_inf_nan=False)]


class WatchlistIn(BaseModel):
    """A new watchlist of the calling principal."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"anyOf": _NAMES_SOMETHING})

    name: str = Field(min_length=1, max_length=200, examples=["cheap zards"])
    asset_ids: Ids = Field(default_factory=list, examples=[["ast_01JD…"]])
    variant_ids: Ids = Field(default_factory=list)
    categories: Ids = Field(default_factory=list, examples=[["tcg_card"]])
    title_query: str | None = Field(
        None,
        min_length=1,
        max_length=500,
        description="every word must be in the event's title (case and accents aside)",
        examples=["charizard base set"],
    )
    below: Amount | None = Field(None, description="the event's price is below this")
    above: Amount | None = Field(None, description="the event's price is above this")
    currency: str | None = Field(
        None, min_length=3, max_length=3, description="of below / above; USD when omitted"
    )
    move_pct: Amount | None = Field(
        None, description="the price moved by more than this many percent, up or down"
    )

    @model_validator(mode="after")
    def _names_something(self) -> WatchlistIn:
        if not (self.asset_ids or self.variant_ids or self.categories or self.title_query):
            raise ValueError("name assets, variants, categories or a title query (at least one)")
        return self


def _dec(value: float | None) -> Decimal | None:
    """A JSON number as the decimal it reads as (``20`` and ``20.0`` -> ``20``)."""
    return None if value is None else Decimal(format(Decimal(str(value)).normalize(), "f"))


class WatchlistView(BaseModel):
    """A stored watchlist; amounts are decimal strings."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    principal: str
    asset_ids: list[str]
    variant_ids: list[str]
    categories: list[str]
    title_query: str | None
    below: Decimal | None
    above: Decimal | None
    currency: str | None
    move_pct: Decimal | None
    created_at: datetime | None

    @classmethod
    def of(cls, w: Watchlist) -> WatchlistView:
        return cls(
            id=w.id,
            name=w.name,
            principal=w.principal,
            asset_ids=list(w.asset_ids),
            variant_ids=list(w.variant_ids),
            categories=list(w.categories),
            title_query=w.title_query,
            below=w.below,
            above=w.above,
            currency=w.currency,
            move_pct=w.move_pct,
            created_at=w.created_at,
        )


class WatchlistsResponse(BaseModel):
    model_config = ConfigDict(frozen=True)

    watchlists: list[WatchlistView]


@router.get("", response_model=WatchlistsResponse)
def list_watchlists(state: State, token: Token) -> WatchlistsResponse:
    """The calling principal's watchlists, oldest first (never another principal's)."""
    found = watchlists_of(state.engine, principal(token))
    return WatchlistsResponse(watchlists=[WatchlistView.of(w) for w in found])


@router.post(
    "",
    response_model=WatchlistView,
    status_code=201,
    responses=error_responses(409, 422),
)
def create_watchlist(body: WatchlistIn, state: State, token: Token) -> WatchlistView:
    """Create a watchlist owned by the calling principal. 409 ``invalid_watchlist``: the name is
    taken, the principal has too many, or ``above`` is not below ``below``."""
    who = principal(token)
    try:
        watchlist = Watchlist.create(
            who,
            body.name,
            asset_ids=body.asset_ids,
            variant_ids=body.variant_ids,
            categories=body.categories,
            title_query=body.title_query,
            below=_dec(body.below),
            above=_dec(body.above),
            currency=body.currency,
            move_pct=_dec(body.move_pct),
        )
        add_watchlist(state.engine, watchlist)
    except InvalidWatchlist as exc:
        raise ApiError(409, "invalid_watchlist", str(exc)) from None
    log.info("watchlist.created", watchlist=watchlist.id, principal=who)
    return WatchlistView.of(watchlist)


@router.delete("/{watchlist_id}", response_model=WatchlistView, responses=error_responses(404, 422))
def remove_watchlist(watchlist_id: str, state: State, token: Token) -> WatchlistView:
    """Delete one of the calling principal's watchlists (by id or name) and return it; 404
    ``unknown_watchlist`` for none — or another principal's."""
    who = principal(token)
    try:
        removed = delete_watchlist(state.engine, who, watchlist_id)
    except NotFound as exc:
        raise ApiError(404, "unknown_watchlist", str(exc)) from None
    log.info("watchlist.deleted", watchlist=removed.id, principal=who)
    return WatchlistView.of(removed)

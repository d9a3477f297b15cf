"""``GET /api/events`` (Server-Sent Events) and ``GET /api/events/page`` (JSON), any token.

The stream resumes after the ``Last-Event-ID`` header (what ``EventSource`` sends when it
reconnects), else after ``?cursor=``, else starts at the newest event; ``id:`` is the cursor,
``event:`` the type, ``data:`` the event as JSON. Filters (``type``, ``category``, ``asset``,
``variant``, ``connector``: repeat a parameter for several values; ``watchlist``: one of the
caller's watchlists) narrow it. ``: keep-alive`` comments keep an idle stream open, the token is
checked again every ``RI_EVENTS_TOKEN_CHECK_SECONDS`` (a revoked one ends the stream with a
``token_revoked`` event), and a cursor older than the retention horizon gets a ``reset`` event
(with the oldest cursor kept) before the stream goes on from there. ``EventSource`` cannot send
an ``Authorization`` header: the stream also takes the token as ``?access_token=`` (the access
log never records query strings).

The page is for cron-style consumers: the events after ``?after=`` and the ``next_after`` to ask
with next time; a cursor behind the horizon is ``410 cursor_expired`` naming the oldest kept.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import Field

from ...errors import NotFound
from ...storage.events_store import CursorExpired, EventFilter, event_json, head, read_page
from ...storage.tokens import TokenInfo, authenticate
from ..auth import _bearer, require_token
from ..errors import ApiError, error_responses
from ..event_hub import EventHub, Subscription
from ..schemas import _Out
from ..state import ApiState, api_state

__all__ = ["EventOut", "EventPage", "close_hub", "events_hub", "router"]

router = APIRouter(prefix="/api", tags=["events"])
State = Annotated[ApiState, Depends(api_state)]

EventType = Literal[
    "sale.recorded",
    "auction_lot.result",
    "listing.appeared",
    "listing.price_changed",
    "listing.ended",
    "cert.mismatch",
    "connector.health_changed",
    "estimate.moved",
    "review.accepted",
]
"""Written out for the OpenAPI document; the same as ``storage.schema.EVENT_TYPES`` (a test
holds them equal)."""
_ID = Field(max_length=200)


class EventOut(_Out):
    """One change event; ``cursor`` orders them (in commit order, never reused)."""

    cursor: int = Field(ge=1)
    type: EventType
    stream: str = Field(examples=["asset:ast_01JDX…", "connector:cards-shop"])
    category: str | None
    asset_id: str | None
    variant_id: str | None
    connector_id: str | None
    payload: dict[str, Any] = Field(description="ids and values; money as decimal strings")
    created_at: datetime
    watchlists: list[str] = Field(description="the caller's watchlists it matches")


class EventPage(_Out):
    """Events after ``after``, oldest first, and where to continue."""

    events: list[EventOut]
    after: int
    next_after: int = Field(description="ask with ?after= this next time")
    head: int = Field(description="the newest cursor")
    oldest_cursor: int = Field(description="the oldest cursor retention kept")


def events_hub(request: Request) -> EventHub:
    """This process's hub, made on first use (inside the server's event loop)."""
    hub = getattr(request.app.state, "events_hub", None)
    if hub is None:
        state = api_state(request)
        hub = EventHub(state.engine, state.settings)
        request.app.state.events_hub = hub
    assert isinstance(hub, EventHub)
    return hub


async def close_hub(app: Any) -> None:
    """End this process's event streams (before a server waits for its requests to finish:
    a stream never finishes by itself) and stop its hub."""
    hub = getattr(app.state, "events_hub", None)
    if hub is not None:
        app.state.events_hub = None
        await hub.aclose()


def _stream_token(
    request: Request,
    state: State,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    access_token: Annotated[
        str | None,
        Query(max_length=200, description="the token, for clients that cannot send a header"),
    ] = None,
) -> tuple[TokenInfo, str]:
    if credentials is None and access_token:
        credentials = HTTPAuthorizationCredentials(scheme="Bearer", credentials=access_token)
    info = require_token(request, state, credentials)
    assert credentials is not None
    return info, credentials.credentials


def _filter(
    type: list[EventType] | None,
    category: list[str] | None,
    asset: list[str] | None,
    variant: list[str] | None,
    connector: list[str] | None,
) -> EventFilter:
    return EventFilter(
        types=tuple(type or ()),
        categories=tuple(category or ()),
        assets=tuple(asset or ()),
        variants=tuple(variant or ()),
        connectors=tuple(connector or ()),
    )


def _watchlist_matcher(state: ApiState, token: TokenInfo, key: str | None) -> Any:
    if key is None:
        return None
    from ...storage.watchlist_store import get_watchlist
    from ...watchlists import matching_watchlists
    from .connector_status import principal

    try:
        watchlist = get_watchlist(state.engine, principal(token), key)
    except NotFound as exc:
        raise ApiError(404, "unknown_watchlist", str(exc)) from None
    return lambda event: matching_watchlists(event, [watchlist])


def _caller_watchlists(state: ApiState, token: TokenInfo) -> Any:
    """Every watchlist of the caller's principal, as a matcher that tags an event with the ids
    of those it matches (watchlists, issue 19 item 3); never another principal's."""
    from ...storage.watchlist_store import watchlists_of
    from ...watchlists import matching_watchlists
    from .connector_status import principal

    mine = watchlists_of(state.engine, principal(token))
    if not mine:
        return None
    return lambda event: matching_watchlists(event, mine)


Types = Annotated[list[EventType] | None, Query(description="event types (repeatable)")]
Categories = Annotated[list[str] | None, Query(description="categories (repeatable)")]
Assets = Annotated[list[str] | None, Query(description="asset ids (repeatable)")]
Variants = Annotated[list[str] | None, Query(description="variant ids (repeatable)")]
Connectors = Annotated[list[str] | None, Query(description="connector ids (repeatable)")]
WatchlistKey = Annotated[
    str | None, Query(max_length=200, description="one of the caller's watchlists (id or name)")
]

_SSE_DOC = (
    "`text/event-stream`: `id:` the cursor, `event:` the type (or `reset`, `token_revoked`), "
    "`data:` the event as JSON (an EventOut); `: keep-alive` comments while idle."
)


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": _SSE_DOC,
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **error_responses(401, 404, 422),
    },
)
async def stream_events(
    request: Request,
    state: State,
    auth: Annotated[tuple[TokenInfo, str], Depends(_stream_token)],
    last_event_id: Annotated[
        str | None,
        Header(alias="Last-Event-ID", description="the last cursor received (reconnects)"),
    ] = None,
    cursor: Annotated[int | None, Query(ge=0, le=2**62, description="resume after it")] = None,
    type: Types = None,
    category: Categories = None,
    asset: Assets = None,
    variant: Variants = None,
    connector: Connectors = None,
    watchlist: WatchlistKey = None,
) -> StreamingResponse:
    """Change events as Server-Sent Events, from ``Last-Event-ID`` / ``?cursor=`` on (else from
    now), filtered; the stream stays open (see the module)."""
    token, secret = auth
    start = cursor
    if last_event_id is not None and last_event_id.strip():
        if not last_event_id.strip().isdigit() or len(last_event_id.strip()) > 18:
            raise ApiError(422, "bad_request", "Last-Event-ID: not a cursor (a whole number)")
        start = int(last_event_id.strip())
    sub = Subscription(
        cursor=start,
        where=_filter(type, category, asset, variant, connector),
        watchlists=await asyncio.to_thread(_watchlist_matcher, state, token, watchlist),
    )
    if watchlist is None:  # each event tagged with the caller's watchlists (read at connect)
        sub.tags = await asyncio.to_thread(_caller_watchlists, state, token)
    hub = events_hub(request)
    engine = state.engine
    settings = state.settings

    async def still_allowed() -> bool:
        return await asyncio.to_thread(authenticate, engine, secret) is not None

    body = hub.frames(
        sub,
        heartbeat=settings.events_heartbeat_seconds,
        check_every=settings.events_token_check_seconds,
        still_allowed=still_allowed,
    )
    return StreamingResponse(
        body,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


@router.get(
    "/events/page",
    response_model=EventPage,
    responses=error_responses(401, 404, 410, 422),
)
def page_events(
    state: State,
    token: Annotated[TokenInfo, Depends(require_token)],
    after: Annotated[
        int | None, Query(ge=0, le=2**62, description="the last cursor seen; unset: the oldest")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    type: Types = None,
    category: Categories = None,
    asset: Assets = None,
    variant: Variants = None,
    connector: Connectors = None,
    watchlist: WatchlistKey = None,
) -> EventPage:
    """The events after ``after`` (oldest first, at most ``limit``) that pass the filters, and
    ``next_after``; ``410 cursor_expired`` when events after ``after`` were pruned."""
    matcher = _watchlist_matcher(state, token, watchlist)
    where = _filter(type, category, asset, variant, connector)
    with state.engine.connect() as conn:
        try:
            if after is None:
                after = head(conn).pruned_through
            page = read_page(conn, after, where, limit=limit)
        except CursorExpired as expired:
            raise ApiError(
                410,
                "cursor_expired",
                f"{expired}; ask again with ?after={expired.pruned_through}",
            ) from None
    chosen = [
        event_json(e, matcher(e) if matcher else ())
        for e in page.events
        if matcher is None or matcher(e)
    ]
    if matcher is None:  # unfiltered: each event tagged with the caller's watchlists it matches
        tagger = _caller_watchlists(state, token)
        for e in chosen:
            e["watchlists"] = tagger(e) if tagger is not None else []
    return EventPage(
        events=[EventOut.model_validate(e) for e in chosen],
        after=after,
        next_after=page.next_after,
        head=page.head.last,
        oldest_cursor=page.head.pruned_through + 1,
    )
